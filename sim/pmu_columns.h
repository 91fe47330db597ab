#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/device_model.h"
#include "sim/soc.h"

namespace npuperf::sim {

// The --aic-metrics groups msprof accepts.
enum class MetricGroup {
  kPipeUtilization,
  kArithmeticUtilization,
  kMemory,
  kMemoryL0,
  kMemoryUB,
  kResourceConflictRatio,
  kL2Cache,
  kMemoryAccess
};

absl::StatusOr<MetricGroup> ParseMetricGroup(absl::string_view name);
absl::string_view MetricGroupName(MetricGroup group);

// OK when the SoC family has the group (MemoryAccess is A2/A3 only).
absl::Status CheckGroupSupported(MetricGroup group, const SocSpec& soc);

// The exact task-based op_summary PMU header of a group on a SoC family
// (msprof-output.md §3.4/§3.5), in emitted order.
std::vector<std::string> PmuHeader(MetricGroup group, SocFamily family);

// Core type a metric belongs to.
enum class CoreSide { kAic, kAiv, kNone };

// One resolved PMU column: which core, which metric, how it is printed.
struct PmuColumn {
  std::string name;
  CoreSide side = CoreSide::kNone;
  int metric = 0;  // index into the internal metric table
};

// Resolves a header name such as "aic_mac_time(us)"; InvalidArgument for names
// the model cannot produce.
absl::StatusOr<PmuColumn> ResolvePmuColumn(absl::string_view name);

// Value of a metric of one core type. `core_time_us` is that core's
// aicore_time/aiv_time; `bare` is the metric name without prefix and unit
// (e.g. "mac_ratio"). Used for sample-based summaries.
absl::StatusOr<double> CoreMetricByName(absl::string_view bare, const CoreStats& core,
                                        double core_time_us);

// aicore_time(us) / aiv_time(us) as msprof computes it:
// total_cycles / freq / blocks * ceil(blocks / cores).
double CoreTimeUs(const CoreStats& core, double freq_mhz);

// Formats the PMU cells of one task for `columns`, each preceded by a comma.
// `rated_mhz` feeds cube_utilization(%).
void AppendPmuCells(const std::vector<PmuColumn>& columns, const KernelResult& k, double rated_mhz,
                    std::string& line);

}  // namespace npuperf::sim
