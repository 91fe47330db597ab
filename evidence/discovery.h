#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/candidates.h"

namespace npuperf::evidence {

// The discovery candidates of any input the layout detector (layout.h)
// recognises, and the table they were read from:
//   PROF_GROUP        the op_summary of the first metric run present, in the
//                     fixed metric order (PipeUtilization first; any group
//                     summarize accepts can be listed)
//   one run / torch   its op_summary / kernel_details, else its unified
//                     msprof_<ts>.db, else its task_time. A CANN 9 level0
//                     op_summary writes Task Type N/A: the type comes from
//                     the unified db (TASK.taskType) or task_time (matched by
//                     stream/task id and time, kernel_names.h). A kernel
//                     task_time names differently (PyPTO: PYPTO_<op>, 3
//                     rows per launch, vs tilefwk_<n>_mix_aic) is said in the
//                     notes with the name each mode reads (DescribeLink)
//   msprof op         one candidate per profiled kernel (its launch dirs)
// NotFound naming what was looked for when no table has a row.
// Reads files only; thread-safe.
struct Discovery {
  std::vector<OpCandidate> candidates;
  std::string source;              // the table read ("<path> (op_summary)")
  std::vector<std::string> notes;  // the detector's notes, skipped runs
};
absl::StatusOr<Discovery> DiscoverCandidates(const std::filesystem::path& input);

// Every launch of `op_name` in one run (start order), from the table
// summarize reads: op_summary / kernel_details, else the unified db, else
// task_time. What `npuperf list-op-names --launches-of` prints (a refusal
// lists only the first and last few). NotFound naming the table when the
// name is absent, and the other table's name of the same kernel when there
// is one (OtherNameHint).
absl::StatusOr<std::vector<LaunchInfo>> ListLaunches(const std::filesystem::path& input,
                                                     std::string_view op_name);

}  // namespace npuperf::evidence
