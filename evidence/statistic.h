#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::evidence {

// Readers of the two aggregate tables msprof writes next to op_summary
// (msprof-output.md §4.2–4.3). Columns by name; `Device_id` / `Model Name`
// optional (older exports). Stateless; thread-safe.

// op_statistic_*.csv: one row per (OP Type, Core Type), sorted by total time.
struct OpStatisticRow {
  std::string op_type;
  std::string core_type;
  int64_t count = 0;
  double total_us = 0, min_us = 0, avg_us = 0, max_us = 0;
  double ratio_pct = 0;
};
absl::StatusOr<std::vector<OpStatisticRow>> ReadOpStatistic(
    const std::vector<std::filesystem::path>& parts);

// api_statistic_*.csv: host API calls per (Level, API Name).
struct ApiStatisticRow {
  std::string level;     // acl, runtime, node, model, hccl, ...
  std::string api_name;  // KernelLaunch, launch, aclrtSynchronizeStream, ...
  int64_t count = 0;
  double time_us = 0, avg_us = 0, min_us = 0, max_us = 0, variance = 0;
};
absl::StatusOr<std::vector<ApiStatisticRow>> ReadApiStatistic(
    const std::vector<std::filesystem::path>& parts);

}  // namespace npuperf::evidence
