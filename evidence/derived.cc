#include "evidence/derived.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

constexpr std::array<SocInfo, 6> kSocs = {{
    {"Ascend910B2", 24, 48, 1800},
    {"Ascend910B1", 24, 48, 1850},
    {"Ascend910B3", 20, 40, 1800},
    {"Ascend910B", 24, 48, 1800},  // generic A2 (msprof CHIP_TABLE name)
    {"Ascend950PR_958", 32, 64, 1650},
    {"Ascend950PR_957", 28, 56, 1650},
}};

double Get(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

std::optional<SocInfo> LookupSoc(std::string_view soc) {
  for (const SocInfo& s : kSocs) {
    if (soc == s.name) return s;
  }
  for (const SocInfo& s : kSocs) {
    if (soc.size() > s.name.size() && internal::StartsWith(soc, s.name) &&
        internal::StartsWith(s.name, "Ascend950")) {
      return s;
    }
  }
  return std::nullopt;
}

void ComputeHeadOverhead(Evidence* ev) {
  double longest = std::max(ev->aicore_time_us, ev->aiv_time_us);
  ev->head_overhead_us = std::max(0.0, ev->task_duration_us - longest);
  ev->head_overhead_pct =
      ev->task_duration_us > 0 ? ev->head_overhead_us / ev->task_duration_us * 100 : 0;
}

std::map<std::string, L2Count> L2Counts(const std::map<std::string, double>& m) {
  std::map<std::string, L2Count> out;
  for (const std::string core : {"aic", "aiv"}) {
    const std::string p = core + "_";
    // A2/A3 naming, then A5 naming (a file carries one or the other).
    L2Count read{Get(m, p + "r0_read_cache_hit") + Get(m, p + "r1_read_cache_hit") +
                     Get(m, p + "read_local_l2_hit"),
                 Get(m, p + "r0_read_cache_miss_allocate") +
                     Get(m, p + "r1_read_cache_miss_allocate") + Get(m, p + "read_local_l2_miss")};
    L2Count write{Get(m, p + "write_cache_hit") + Get(m, p + "write_local_l2_hit"),
                  Get(m, p + "write_cache_miss_allocate") + Get(m, p + "write_local_l2_miss")};
    if (read.hit + read.miss > 0) out[core + "_read"] = read;
    if (write.hit + write.miss > 0) out[core + "_write"] = write;
  }
  return out;
}

std::map<std::string, double> L2HitRates(const std::map<std::string, double>& m) {
  std::map<std::string, double> out;
  for (const auto& [key, c] : L2Counts(m)) out[key] = c.hit / (c.hit + c.miss) * 100;
  return out;
}

std::optional<double> BackCalculatedMhz(const Evidence& ev, const SocInfo& soc) {
  bool aiv = ev.aiv_time_us > ev.aicore_time_us;
  double core_time = aiv ? ev.aiv_time_us : ev.aicore_time_us;
  auto it = ev.merged.find(aiv ? "aiv_total_cycles" : "aic_total_cycles");
  if (it == ev.merged.end()) it = ev.merged.find("total_cycles");
  if (it == ev.merged.end() || !(core_time > 0) || !(it->second > 0)) return std::nullopt;
  // The dominant core runs on Block Num, except the vector side of a MIX_AIC
  // kernel and the cube side of a MIX_AIV kernel, which use Mix Block Num.
  bool mix = ev.task_type == "MIX_AIC" || ev.task_type == "MIX_AIV";
  bool secondary = mix && ((ev.task_type == "MIX_AIC") == aiv);
  int64_t blocks = secondary ? ev.mix_block_num : ev.block_num;
  int cores = aiv ? soc.vector_cores : soc.cube_cores;
  if (blocks <= 0 || cores <= 0) return std::nullopt;
  double waves = std::ceil(static_cast<double>(blocks) / cores);
  return it->second / core_time / static_cast<double>(blocks) * waves;
}

DvfsCheck CheckDvfs(const Evidence& ev, const BuildOptions& options,
                    std::optional<double> current_mhz, std::optional<double> rated_mhz) {
  DvfsCheck d;
  d.tolerance_pct = options.dvfs_tolerance_pct;
  std::optional<SocInfo> soc = LookupSoc(options.soc);
  d.rated_mhz =
      rated_mhz.value_or(options.rated_mhz > 0 ? options.rated_mhz : (soc ? soc->rated_mhz : 0));
  if (current_mhz && *current_mhz > 0) {
    d.observed_mhz = *current_mhz;
    d.source = ClockSource::kOpprofCurrentFreq;
  } else if (std::optional<double> back = soc ? BackCalculatedMhz(ev, *soc) : std::nullopt) {
    d.observed_mhz = *back;
    d.source = ClockSource::kOpSummaryBackCalculated;
  } else if (ev.per_core.ok() && ev.per_core.freq_ghz > 0) {
    d.observed_mhz = ev.per_core.freq_ghz * 1000;
    d.source = ClockSource::kAicoreDbBackCalculated;
    d.note = "process-scoped: assumes the slowest core ran for the whole core time";
  }
  if (d.observed_mhz <= 0 || d.rated_mhz <= 0) {
    d.status = DvfsStatus::kUnknown;
    if (d.note.empty()) {
      d.note = d.rated_mhz <= 0 ? Cat("no rated clock for SoC '", options.soc, "'")
                                : "no clock figure available";
    }
    return d;
  }
  d.deviation_pct = (d.observed_mhz - d.rated_mhz) / d.rated_mhz * 100;
  d.status = std::abs(d.deviation_pct) <= d.tolerance_pct ? DvfsStatus::kOk : DvfsStatus::kSuspect;
  return d;
}

}  // namespace npuperf::evidence
