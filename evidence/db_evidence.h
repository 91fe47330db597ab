#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "evidence/evidence.h"
#include "evidence/layout.h"
#include "evidence/op_summary.h"

// How evidence.cc uses the unified db (unified_db.h) beside or instead of the
// CSV export. Internal to evidence/; reads files only; thread-safe.
namespace npuperf::evidence {

// The target of one run: op_summary (kernel_details) when the run has one,
// else its unified db. Sets ev->unified_db and the "identity", "duration"
// and "pmu" sources. A name op_summary lacks is NotFound, saying which
// op_summary kernel it names in task_time (OtherNameHint: PyPTO's two names).
absl::StatusOr<SelectedTarget> SelectRunTarget(const RunLayout& run, const BuildOptions& options,
                                               Evidence* ev);

// CANN 9 level0 exports leave op_summary's identity cells N/A (OP Type, Task
// Type, Block Num 0) and every *_time(us) 0.0 while cycles and ratios are
// filled. When `t` (read from op_summary) is such a row and the run has a
// unified db holding the same launches, the db's figures fill the empty
// cells (a cell the CSV filled is kept) and the sources say so; a warning
// when the db cannot be used.
void FillFromDb(const RunLayout& run, const BuildOptions& options, SelectedTarget* t, Evidence* ev);

// True when `row` has N/A identity cells or zero core times with filled
// cycles (the CANN 9 level0 shape).
bool IsLevel0Row(const OpRow& row);

// The AI Core clock over the used launches from the unified db's
// AICORE_FREQ (ev->db_clock, the "clock" source); a warning on a db error.
void ReadClockWindow(const BuildOptions& options, Evidence* ev);

// When neither core time is known but *_total_cycles are, the core times
// msprof would print: cycles / clock / blocks * ceil(blocks / cores)
// (msprof-output.md §3.7), clock = the db's mean over the window, else the
// rated clock; blocks = Block Num (Mix Block Num on the AIV side of a MIX
// kernel; unknown: not derived, with a warning); cores of the resolved SoC
// (else one wave). Written into ev->merged and the core times,
// with the "aicore_time_us" / "aiv_time_us" sources naming the inputs.
void CoreTimesFromCycles(const BuildOptions& options, Evidence* ev);

}  // namespace npuperf::evidence
