#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "evidence/launch.h"

namespace npuperf::evidence {

// One op_summary_*.csv (or torch_npu kernel_details.csv) row of the target
// kernel: identity cells plus every numeric metric column (PMU, core times,
// cycles), in CSV order.
//
// Columns are found and stored by their canonical names (columns.h: e.g.
// kernel_details `Name` is `Op Name`, msprof op `aic_cube_ratio` is
// `aic_mac_ratio`). N/A cells are left out.
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

// The target row(s) chosen by a launch selector from one table.
struct SelectedTarget {
  // The chosen launch; with `all`: identity of the first used launch, Task
  // Duration and every metric field the median over the used launches.
  OpRow row;
  // Every launch of the target in the table, in start order.
  std::vector<LaunchInfo> launches;
  // Indexes into `launches` of the launches used.
  std::vector<size_t> used;
  // Task Duration of each used launch, start order.
  std::vector<double> durations_us;
  // The primary core time of each used launch, start order (the larger of
  // its aicore_time and aiv_time cells); CompleteCoreTimes: empty unless every
  // used launch has one, so that it pairs with durations_us.
  std::vector<double> core_times_us;
  // `all` only: field -> (min, max) across the used launches.
  std::vector<std::pair<std::string, std::pair<double, double>>> spread;
  // Identity cells (shapes, block counts, task type) that differ between the
  // used launches, one sentence each.
  std::vector<std::string> warnings;
};

// Selects the target's row(s) whose trimmed `Op Name` equals `op_name`
// exactly, streaming the (possibly sliced) table, and applies `selector`
// (launch.h): zero rows → NotFound listing up to ten candidates by total
// duration; several rows with `unique` → FailedPrecondition listing every
// launch. Never falls back to the longest row. A non-numeric metric cell of
// a target row is InvalidArgument naming file, line and column. Used rows
// that continue an earlier used row's task (same Stream/Task ID, starting
// before it ends: PyPTO's 3 rows per launch) are counted in a warning.
// REQUIRES: !parts.empty(), !op_name.empty().
absl::StatusOr<SelectedTarget> SelectTarget(const std::vector<std::filesystem::path>& parts,
                                            std::string_view op_name,
                                            const LaunchSelector& selector = {});

// max(aicore_time(us), aiv_time(us)) of one launch's metric fields; 0 when
// neither is present, positive and finite (quick-mode tables have neither).
double PrimaryCoreTime(const std::vector<std::pair<std::string, double>>& fields);

// `times` when every one is positive and finite, else none: per-launch core
// times are kept only when they pair one to one with the duration samples.
std::vector<double> CompleteCoreTimes(std::vector<double> times);

// The median of `v` (mean of the middle two for an even count; 0 when empty).
double Median(std::vector<double> v);

}  // namespace npuperf::evidence
