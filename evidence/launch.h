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
  // The start exactly, unix ns: parsed as decimal fixed point from the CSV
  // text (ParseMicrosAsNs) or the db's integer startNs; never via a double.
  std::optional<int64_t> start_ns;
  double duration_us = 0;
  std::string where;  // "file:line"
};

// Puts `launches` (file order) in start order (stable; by the exact start_ns
// when every launch has one, else by start_us; file order when any lacks a
// start time) and numbers them from 1. Returns the permutation:
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

// A refusal lists every launch up to kListAllBelow launches; above that the
// first and last kListEnds, the fastest and slowest, the total and how to see
// them all (npuperf list-op-names --launches).
inline constexpr size_t kListAllBelow = 20;
inline constexpr size_t kListEnds = 5;

// "  #1 stream 48 task 3 start 1780676244313289.000 us duration 87139.380 us (file:line)"
// lines: every launch when there are at most kListAllBelow, else the bounded
// listing above.
std::string FormatLaunchList(const std::vector<LaunchInfo>& launches);

// A decimal microsecond timestamp as msprof writes it ("1778059616768656.843",
// optional trailing TAB or spaces, up to 3 decimals kept exactly, further
// digits must be 0) in integer nanoseconds, without a floating point
// conversion. nullopt for anything else (N/A, empty, sign, exponent, overflow).
std::optional<int64_t> ParseMicrosAsNs(std::string_view text);

// "1778059616768656.843" from ns (exact; the inverse of ParseMicrosAsNs).
std::string FormatNsAsMicros(int64_t ns);

}  // namespace npuperf::evidence
