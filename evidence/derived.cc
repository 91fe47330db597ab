#include "evidence/derived.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

double Get(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

std::string Mhz(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

bool Mix(const Evidence& ev) { return ev.task_type == "MIX_AIC" || ev.task_type == "MIX_AIV"; }

}  // namespace

void ComputeHeadOverhead(Evidence* ev) {
  double longest = std::max(ev->aicore_time_us, ev->aiv_time_us);
  ev->head_overhead_us = 0;
  ev->head_overhead_pct = 0;
  if (!(ev->task_duration_us > 0)) {
    ev->head_overhead_status = HeadOverheadStatus::kNotApplicable;
    ev->head_overhead_note = "no Task Duration";
    return;
  }
  if (!(longest > 0)) {
    ev->head_overhead_status = HeadOverheadStatus::kNotApplicable;
    ev->head_overhead_note = Cat("the row has no AI Core time (task type ",
                                 ev->task_type.empty() ? "unknown" : ev->task_type,
                                 "): nothing ran on AI Cores to measure against the duration");
    return;
  }
  ev->head_overhead_us = ev->task_duration_us - longest;
  ev->head_overhead_pct = ev->head_overhead_us / ev->task_duration_us * 100;
  if (ev->head_overhead_us < 0) {
    ev->head_overhead_status = HeadOverheadStatus::kNegativeGap;
    ev->head_overhead_note =
        Cat("core time ", longest, " us exceeds Task Duration ", ev->task_duration_us,
            " us: the two are not on one time base (core time is cycles at the clock msprof "
            "assumed), so no head overhead can be derived");
    ev->warnings.push_back(Cat("head overhead: ", ev->head_overhead_note));
    return;
  }
  ev->head_overhead_status = HeadOverheadStatus::kOk;
  ev->head_overhead_note.clear();
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

std::optional<double> BackCalculatedMhz(const Evidence& ev, int cube_cores, int vector_cores) {
  bool aiv = ev.aiv_time_us > ev.aicore_time_us;
  double core_time = aiv ? ev.aiv_time_us : ev.aicore_time_us;
  auto it = ev.merged.find(aiv ? "aiv_total_cycles" : "aic_total_cycles");
  if (it == ev.merged.end()) it = ev.merged.find("total_cycles");
  if (it == ev.merged.end() || !(core_time > 0) || !(it->second > 0)) return std::nullopt;
  // The dominant core runs on Block Num, except the vector side of a MIX_AIC
  // kernel and the cube side of a MIX_AIV kernel, which use Mix Block Num.
  bool secondary = Mix(ev) && ((ev.task_type == "MIX_AIC") == aiv);
  int64_t blocks = secondary ? ev.mix_block_num : ev.block_num;
  if (blocks <= 0) return std::nullopt;
  int cores = aiv ? vector_cores : cube_cores;
  double waves = cores > 0 ? std::ceil(static_cast<double>(blocks) / cores) : 1;
  return it->second / core_time / static_cast<double>(blocks) * waves;
}

SocFacts FactsOf(const Evidence& ev) {
  SocFacts f = ev.device_facts;
  double cycles = Get(ev.merged, "aic_total_cycles");
  if (cycles == 0) cycles = Get(ev.merged, "total_cycles");
  if (ev.cube_utilization_pct >= 1 && cycles > 0 && ev.task_duration_us > 0) {
    f.rated_times_cube_cores = cycles * 100 / (ev.cube_utilization_pct * ev.task_duration_us);
  }
  return f;
}

ClockPlausibility CheckImpliedClock(double implied_mhz, double rated_mhz, double tolerance_pct) {
  ClockPlausibility c;
  double limit = (rated_mhz > 0 ? rated_mhz : MaxRatedMhz()) * (1 + tolerance_pct / 100);
  if (implied_mhz <= limit) return c;
  c.plausible = false;
  c.note =
      Cat("implied clock ", Mhz(implied_mhz), " MHz is above ",
          rated_mhz > 0 ? Cat("the rated ", Mhz(rated_mhz), " MHz")
                        : Cat("the highest rated clock of any SoC (", Mhz(MaxRatedMhz()), " MHz)"),
          " + ", tolerance_pct, " %: the cycles are not the target's or the time base is wrong");
  return c;
}

DvfsCheck CheckDvfs(const Evidence& ev, const BuildOptions& options,
                    std::optional<double> current_mhz, std::optional<double> rated_mhz) {
  DvfsCheck d;
  d.tolerance_pct = options.dvfs_tolerance_pct;
  SocFacts facts = FactsOf(ev);
  if (rated_mhz && *rated_mhz > 0) {
    facts.rated_mhz = *rated_mhz;
    facts.rated_source = "msprof op Rated Freq";
  }
  SocResolution soc = ResolveSoc(options.soc, facts);
  d.warnings = soc.warnings;
  d.soc = soc.soc ? std::string(soc.soc->name) : "";
  d.rated_mhz = soc.rated_mhz;
  d.rated_source = soc.rated_source;
  if (options.rated_mhz > 0) {
    d.rated_mhz = options.rated_mhz;
    d.rated_source = "option";
  }
  int cube = soc.soc ? soc.soc->CubeSide() : facts.cube_cores.value_or(0);
  int vector = soc.soc ? soc.soc->vector_cores : facts.vector_cores.value_or(0);
  std::optional<double> back = BackCalculatedMhz(ev, cube, vector);
  if (current_mhz && *current_mhz > 0) {
    d.observed_mhz = *current_mhz;
    d.source = ClockSource::kOpprofCurrentFreq;
  } else if (back && cube > 0 && vector > 0) {
    d.observed_mhz = *back;
    d.source = ClockSource::kOpSummaryBackCalculated;
  } else if (ev.per_core.ok() && ev.per_core.freq_ghz > 0 && !ev.per_core.clock_implausible) {
    d.observed_mhz = ev.per_core.freq_ghz * 1000;
    d.source = ClockSource::kAicoreDbBackCalculated;
    d.note = "process-scoped: assumes the slowest core ran for the whole core time";
  }
  if (back && !(cube > 0 && vector > 0)) {
    // One wave assumed: a lower bound of the clock, still checkable.
    ClockPlausibility p = CheckImpliedClock(*back, 0, d.tolerance_pct);
    if (!p.plausible) d.warnings.push_back(Cat("op_summary cycles: ", p.note));
  }
  if (d.observed_mhz <= 0 || d.rated_mhz <= 0) {
    d.status = DvfsStatus::kUnknown;
    if (d.note.empty() && d.rated_mhz > 0) d.note = "no clock figure available";
    if (d.note.empty() && options.soc.empty()) {
      d.note = !soc.note.empty() ? soc.note
                                 : "no SoC given (--soc) and the capture names no rated clock";
    }
    if (d.note.empty()) d.note = Cat("no rated clock for SoC '", options.soc, "'");
    return d;
  }
  d.deviation_pct = (d.observed_mhz - d.rated_mhz) / d.rated_mhz * 100;
  d.status = std::abs(d.deviation_pct) <= d.tolerance_pct ? DvfsStatus::kOk : DvfsStatus::kSuspect;
  if (d.status == DvfsStatus::kSuspect && d.source == ClockSource::kOpprofCurrentFreq) {
    d.note = "Current < Rated only raises a DVFS hypothesis";
  }
  return d;
}

}  // namespace npuperf::evidence
