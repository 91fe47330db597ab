#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::evidence {

// Launch selection: which of the target kernel's launches in one profiled
// process become evidence. The same rule in standard mode (op_summary rows)
// and quick mode (task_time rows); spelled as on the command line
// (`--launch`) and in the API (OperatorSpec.launch):
//
//   unique          exactly one launch, else an error listing every launch
//                   (the evidence protocol's rule; the default)
//   all             every launch: each is a duration sample, metrics are the
//                   median across launches (with their min/max)
//   N / -N          the N-th launch in start order, or the N-th from the end
//   task:S/T        the launch with Stream ID S and Task ID T
//
// Pure functions; thread-safe.
struct LaunchSelector {
  enum class Kind { kUnique, kAll, kIndex, kTask };
  Kind kind = Kind::kUnique;
  // kIndex: 1-based from the first launch (> 0) or from the last (< 0).
  int index = 0;
  // kTask: the launch's Stream ID and Task ID.
  int64_t stream_id = 0;
  int64_t task_id = 0;
};

// Parses the spelling above ("" means unique). InvalidArgument naming the
// accepted forms otherwise.
absl::StatusOr<LaunchSelector> ParseLaunchSelector(std::string_view text);

// The canonical spelling: "unique", "all", "3", "-1", "task:48/7".
std::string LaunchSelectorText(const LaunchSelector& selector);

// One launch of the target in one run, as the error and the evidence list it.
struct LaunchInfo {
  int index = 0;  // 1-based, in start order
  std::optional<int64_t> stream_id, task_id;
  std::optional<double> start_us;
  double duration_us = 0;
  std::string where;  // "file:line"
};

// Puts `launches` (file order) in start order (stable; file order when any
// lacks a start time) and numbers them from 1. Returns the permutation:
// element i is the old position of the launch now at i.
std::vector<size_t> OrderLaunches(std::vector<LaunchInfo>* launches);

// Indexes into `launches` (already ordered) picked by `selector`. Errors name
// `op_name` and `source` (the file read):
//   unique with 0 launches    NotFound
//   unique with several       FailedPrecondition listing every launch (index,
//                             stream/task id, start, duration; at most
//                             kMaxListed, then a count) and the --launch forms
//   N / -N out of range, task:S/T absent   NotFound listing the launches
absl::StatusOr<std::vector<size_t>> SelectLaunches(const std::vector<LaunchInfo>& launches,
                                                   const LaunchSelector& selector,
                                                   std::string_view op_name,
                                                   std::string_view source);

// Launches listed by one error message; the rest are counted.
inline constexpr size_t kMaxListed = 1000;

// "  #1 stream 48 task 3 start 1780676244313289.000 us duration 87139.380 us (file:line)"
// lines, at most kMaxListed.
std::string FormatLaunchList(const std::vector<LaunchInfo>& launches);

}  // namespace npuperf::evidence
