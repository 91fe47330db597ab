#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::evidence {

// One op_summary_*.csv row of the target kernel: identity cells plus every
// numeric metric column (PMU, core times, cycles), in CSV order.
//
// Column names are kept as msprof writes them except for one alias:
// `aic_cube_ratio` / `aic_cube_time(us)` (msprof op naming) are stored as
// `aic_mac_ratio` / `aic_mac_time(us)`. `Block Num`/`Block Dim` and `Mix Block
// Num`/`Mix Block Dim` are both accepted. N/A cells are left out.
struct OpRow {
  std::string op_name;
  std::string op_type;
  std::string task_type;
  std::string input_shapes;
  std::string input_data_types;
  std::string input_formats;
  std::optional<double> task_duration_us;
  std::optional<int64_t> block_num;
  std::optional<int64_t> mix_block_num;
  // Numeric metric columns (everything that is not an identity column).
  std::vector<std::pair<std::string, double>> fields;
  // Where the row came from.
  std::filesystem::path file;
  size_t line = 0;

  // The value of `field`, if present.
  std::optional<double> Get(std::string_view field) const;
};

// One (Op Name, Task Type) group of an op_summary, for discovery and for
// error messages that list candidates.
struct OpCandidate {
  std::string op_name;
  std::string task_type;
  int64_t count = 0;
  double total_duration_us = 0;
};

// Selects THE row whose trimmed `Op Name` equals `op_name` exactly, streaming
// the (possibly sliced) table. Zero matches → NotFound listing up to ten
// candidates by total duration; more than one → FailedPrecondition naming the
// lines. Never falls back to the longest row. A non-numeric metric cell of the
// target row is InvalidArgument naming file, line and column.
// REQUIRES: !parts.empty(), !op_name.empty().
absl::StatusOr<OpRow> SelectTargetRow(const std::vector<std::filesystem::path>& parts,
                                      std::string_view op_name);

// Every (Op Name, Task Type) with its row count and summed positive Task
// Duration, sorted by total duration descending, then name and type
// ascending. Empty names are skipped.
absl::StatusOr<std::vector<OpCandidate>> ListCandidates(
    const std::vector<std::filesystem::path>& parts);

// The discovery table `list-op-names` prints (reference §5.2):
// "count\ttask_type\ttotal_duration_us\texact_op_name" then one line per group
// with the duration as %.6f.
std::string FormatCandidatesTsv(const std::vector<OpCandidate>& candidates);

// True for op_summary identity (non-metric) column names.
bool IsIdentityColumn(std::string_view column);

}  // namespace npuperf::evidence
