#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace npuperf::sim {

enum class FaultKind {
  kFail,           // fail:<Group|*>:<exit code>  exit with the code after the app ran
  kHang,           // hang:<seconds>               sleep before exporting
  kCrash,          // crash                        abort() after the app ran (SIGABRT)
  kTruncate,       // truncate                     cut the last op_summary/task_time line
  kNoAicoreDb,     // no_aicore_db                 omit aicore.db/ai_vector_core.db
  kGarbage,        // garbage                      a malformed op_summary line
  kRatioAboveOne,  // ratio_gt1[:<op name>]        pipe ratios of 1.37 for the op (all ops)
  kDvfs,           // dvfs:<MHz>                   run the whole process at the lower clock
  kSlow,           // slow:<factor>                every task takes factor (>1) times as long
                   //                              at the rated clock (a contended device)
  kTimeline,       // timeline:<pipelined|serial>   the --instr-profiling timeline's tile layout
                   //                              (same-lane compute+movement overlap or none)
};

// One MSPROF_SIM_FAULT item. Qualifiers: `@dev=<physical id>` limits it to a
// device, `@first=<N>` to the first N runs that match it (counted in the
// state dir, across processes).
struct Fault {
  FaultKind kind = FaultKind::kFail;
  std::string text;     // the item as written (counter key)
  std::string group;    // kFail: metric group name or "*"
  int exit_code = 1;    // kFail
  double seconds = 0;   // kHang
  double mhz = 0;       // kDvfs
  double factor = 1;    // kSlow: > 1, at most 10
  std::string op_name;  // kRatioAboveOne: empty = every op
  std::string layout;   // kTimeline: "pipelined" or "serial"
  int device = -1;      // -1: any device
  int first = 0;        // 0: every run
};

// Parses "item[;item...]"; an empty spec gives no faults.
absl::StatusOr<std::vector<Fault>> ParseFaults(absl::string_view spec);

// The faults that fire for this run: matching device and metric group, and
// for `@first=N` items a per-item run counter (file lock protected) below N.
std::vector<Fault> ActiveFaults(const std::vector<Fault>& faults, int device,
                                absl::string_view group, const std::filesystem::path& state_dir);

// Counts one more use of `key` in state_dir (a file per key under a flock,
// shared by every process with the same state dir); the count before this
// one (0 the first time, and when the state dir cannot be written).
int BumpCounter(absl::string_view key, const std::filesystem::path& state_dir);

// The first active fault of `kind`, or nullptr.
const Fault* FindFault(const std::vector<Fault>& faults, FaultKind kind);

}  // namespace npuperf::sim
