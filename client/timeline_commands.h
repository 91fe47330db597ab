#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

// The offline timeline command of `npuperf` (no server needed), over
// evidence/timeline.h:
//
//   npuperf summarize-timeline PROF_DIR|TRACE_FILE --op-name NAME
//                              [--format text|json|html] [--max-events N]
//
// PROF_DIR is a PROF_* directory (or its mindstudio_profiler_output, or the
// --output holding one PROF_*) of an --instr-profiling=on run; TRACE_FILE is
// its msprof_<ts>.json. Prints the reference's timeline_evidence
// (docs/evidence.md "Timeline"). The trace is read streaming.
//
// Exit codes: 0 a unique exact target window was found, 1 it was not (the
// evidence is still printed: target_not_found / duplicate_target_window) or
// the trace is unreadable or malformed ("[ERROR] ..." on stderr), 2 usage.
namespace npuperf::client {

struct TimelineArgs {
  std::filesystem::path input;
  std::string op_name;
  // "text", "json" or "html" (report::RenderTimelinePage). Default: text.
  std::string format = "text";
  // Instruction events listed in the output. Default: 1000.
  size_t max_events = 1000;
};

// Registers `summarize-timeline` on `app`; its callback sets `exit_code` and
// writes to std::cout / std::cerr. `app` and `exit_code` must outlive
// app.parse().
void AddTimelineCommands(CLI::App& app, int& exit_code);

// The command itself, with injectable streams. Returns the exit code.
int RunSummarizeTimeline(const TimelineArgs& args, std::ostream& out, std::ostream& err);

}  // namespace npuperf::client
