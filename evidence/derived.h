#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "evidence/evidence.h"

namespace npuperf::evidence {

// Platform facts used by the DVFS check (msprof-output.md §6.2). Only SoCs
// whose rated clock has a source are listed.
struct SocInfo {
  std::string_view name;
  int cube_cores;
  int vector_cores;
  double rated_mhz;
};
// By exact name, or by prefix for families ("Ascend950PR_958" matches
// "Ascend950PR_9589"). nullopt when unknown.
std::optional<SocInfo> LookupSoc(std::string_view soc);

// Head overhead: max(0, duration - max(aicore_time, aiv_time)) and its share
// of the duration in percent (0 when duration <= 0).
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
// freq on the dominant core. nullopt when a figure is missing.
std::optional<double> BackCalculatedMhz(const Evidence& ev, const SocInfo& soc);

// DVFS check. `current_mhz` (OPPROF OpBasicInfo Current Freq), when given,
// wins; else the op_summary back-calculation (needs a known SoC); else the
// per-core clock from the sample db (needs a rated clock to compare with).
DvfsCheck CheckDvfs(const Evidence& ev, const BuildOptions& options,
                    std::optional<double> current_mhz = std::nullopt,
                    std::optional<double> rated_mhz = std::nullopt);

}  // namespace npuperf::evidence
