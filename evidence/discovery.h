#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/candidates.h"

namespace npuperf::evidence {

// The discovery candidates of any input the layout detector (layout.h)
// recognises, and the table they were read from:
//   PROF_GROUP        the op_summary of the first metric run present, in the
//                     fixed metric order (PipeUtilization first; any group
//                     summarize accepts can be listed)
//   one run / torch   its op_summary / kernel_details, else its task_time
//   msprof op         one candidate per profiled kernel (its launch dirs)
// NotFound naming what was looked for when no table has a row.
// Reads files only; thread-safe.
struct Discovery {
  std::vector<OpCandidate> candidates;
  std::string source;              // the table read ("<path> (op_summary)")
  std::vector<std::string> notes;  // the detector's notes, skipped runs
};
absl::StatusOr<Discovery> DiscoverCandidates(const std::filesystem::path& input);

}  // namespace npuperf::evidence
