#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "evidence/evidence.h"
#include "evidence/soc_table.h"

namespace npuperf::evidence {

// Head overhead: Task Duration minus the longest core time
// (max(aicore_time, aiv_time)), and its share of the duration. Sets
// head_overhead_status: kNotApplicable (with the reason) for a row without
// core time (HCCL, AI_CPU, task-time l0) or without a duration; kNegativeGap
// when a core time exceeds the duration (a wrong time base: the gap is kept,
// negative, never clamped, and a warning says so); else kOk.
void ComputeHeadOverhead(Evidence* ev);

// L2 hit rates (percent) from raw counts (reference §8.2 L2Cache):
// A2/A3 r0/r1 read and write cache hit / miss_allocate; A5 read/write
// local_l2 hit / miss. Keys "aic_read", "aic_write", "aiv_read", "aiv_write",
// present only when hit + miss > 0.
std::map<std::string, double> L2HitRates(const std::map<std::string, double>& merged);

// The raw counts behind L2HitRates, same keys.
struct L2Count {
  double hit = 0;
  double miss = 0;
};
std::map<std::string, L2Count> L2Counts(const std::map<std::string, double>& merged);

// The clock implied by the target row: aicore_time(us) = total_cycles /
// freq_MHz / blocks * ceil(blocks / cores) (msprof-output.md §3.7), solved for
// freq on the dominant core, with `cube_cores` / `vector_cores` of the chip
// (0 = unknown: then one wave is assumed, which gives a lower bound of the
// clock). nullopt when a figure is missing.
std::optional<double> BackCalculatedMhz(const Evidence& ev, int cube_cores, int vector_cores);

// What the capture says about its device, from the evidence: the core counts
// and rated clock it carries (Evidence::device_facts) plus the clock x cube
// cores implied by cube_utilization(%) (when >= 1 %, so its 3 decimals are
// precise enough).
SocFacts FactsOf(const Evidence& ev);

// Whether an implied clock (cycles / time) can be real: above the rated
// clock (or, with none, above the highest rated clock of any SoC) by more
// than `tolerance_pct` it cannot. `note` says why when it is not.
struct ClockPlausibility {
  bool plausible = true;
  std::string note;
};
ClockPlausibility CheckImpliedClock(double implied_mhz, double rated_mhz, double tolerance_pct);

// DVFS check. The SoC and rated clock come from ResolveSoc(options.soc,
// FactsOf(ev) with `rated_mhz` (the capture's own Rated Freq) when given),
// or options.rated_mhz. The observed clock, in order: `current_mhz` (msprof
// op Current Freq); the op_summary back-calculation (needs the core counts
// of a resolved SoC or of the capture); the per-core clock of the sample db
// when it is plausible. SoC warnings (unknown, ambiguous, capture vs table)
// go to DvfsCheck::warnings.
DvfsCheck CheckDvfs(const Evidence& ev, const BuildOptions& options,
                    std::optional<double> current_mhz = std::nullopt,
                    std::optional<double> rated_mhz = std::nullopt);

}  // namespace npuperf::evidence
