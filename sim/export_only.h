#pragma once

#include "sim/options.h"

namespace npuperf::sim {

// `msprof-sim --export=on --output=<PROF_*> [--type=text] [--reports=<json>]`:
// msprof-sim exports while it collects, so a re-export only checks that
// --output is a PROF_* directory it wrote (mindstudio_profiler_output
// present), that the --reports file is readable and names json_process, and
// warns when it asks for biu_perf but the collection had no
// --instr-profiling=on (no device_<id>/sqlite/biu_perf.db). Prints msprof's
// export lines. Returns the exit code: 0, or 1 with "[ERROR] ..." on stderr.
int RunExportOnly(const SimOptions& options);

}  // namespace npuperf::sim
