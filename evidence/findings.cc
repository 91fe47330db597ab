#include "evidence/findings.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "evidence/derived.h"
#include "evidence/per_core.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;
using S = FindingSeverity;
using C = Comparison;

constexpr char kPipeCaveat[] = "A2/A3-origin prior on a per-op aggregate";
constexpr char kConflictCaveat[] = "conflict ratios may exceed 100 %; A5 has no bank-group counter";
constexpr char kPerCoreCaveat[] =
    "process-scoped: the sample db sums every kernel of the process, not only the target";

const std::vector<FindingRule> kRules = {
    {"PIPE_MTE2_RATIO_HIGH", "PipeUtilization", "{aic,aiv}_mte2_ratio", C::kGreater, 50, "%",
     S::kWarning, "MTE2 (GM -> local) is busy: check transfer size (>= 16 KB) and 512 B alignment",
     "several cores reading one 512 B range serialise; A2/A3-origin prior"},
    {"PIPE_SCALAR_RATIO_HIGH", "PipeUtilization", "{aic,aiv}_scalar_ratio", C::kGreater, 30, "%",
     S::kWarning, "the scalar pipe is busy: address arithmetic, loop control or syncs",
     kPipeCaveat},
    {"PIPE_FIXP_RATIO_HIGH", "PipeUtilization", "aic_fixpipe_ratio", C::kGreater, 15, "%",
     S::kWarning, "FIXPIPE is busy: a hint at misaligned output addresses",
     "FIXP > 15 % only says FIXP is active"},
    {"GM_MTE2_MTE3_SHARED", "PipeUtilization", "{aic,aiv}_mte2_ratio + _mte3_ratio", C::kGreater,
     50, "%", S::kHint, "MTE2 and MTE3 together move a large share: they share GM bandwidth",
     "judge MTE2 and MTE3 bytes together, not each pipe alone"},
    {"MEMORY_BW_USAGE_GOOD", "Memory (msprof op)", "*_bw_usage_rate(%)", C::kGreater, 60, "%",
     S::kGood, "the path uses most of its bandwidth",
     "never integrate main_mem_*_bw (GB/s) into DRAM traffic; on CANN 9.2 / A5 the byte fields "
     "are absent"},
    {"L2_HIT_RATE_GOOD", "L2Cache", "{aic,aiv} hit / (hit + miss), read + write", C::kGreater, 80,
     "%", S::kGood, "L2 serves most requests", "raw counts of the target row"},
    {"L2_HIT_RATE_LOW", "L2Cache", "{aic,aiv} hit / (hit + miss), read + write", C::kLess, 50, "%",
     S::kWarning, "L2 misses dominate: the access pattern needs optimisation",
     "raw counts of the target row"},
    {"CONFLICT_BANKGROUP_HIGH", "ResourceConflictRatio", "aiv_vec_bankgroup_cflt_ratio",
     C::kGreater, 3, "%", S::kWarning, "UB bank-group conflicts stall the vector pipe",
     kConflictCaveat},
    {"CONFLICT_BANK_HIGH", "ResourceConflictRatio", "aiv_vec_bank_cflt_ratio", C::kGreater, 3, "%",
     S::kWarning, "UB bank conflicts stall the vector pipe", kConflictCaveat},
    {"CONFLICT_RESOURCE_HIGH", "ResourceConflictRatio", "aiv_vec_resc_cflt_ratio", C::kGreater, 5,
     "%", S::kWarning, "vector resource conflicts stall the pipe", kConflictCaveat},
    {"DVFS_CURRENT_BELOW_RATED", "OpBasicInfo (msprof op)",
     "Current Freq vs Rated Freq (deviation_pct)", C::kLess, 0, "%", S::kHint,
     "the AI Core clock ran below its rated frequency",
     "only a DVFS hypothesis: repeat or A/B before attributing a change to it"},
    {"HEAD_OVERHEAD_HIGH", "op_summary timing", "head_overhead_pct", C::kGreater, 30, "%", S::kHint,
     "launch / head overhead is a large share of Task Duration",
     "with small data this may not be the operator's fault"},
    {"PER_CORE_SPREAD_WARNING", "per-core (sample run)", "per_core[*].spread_pct", C::kGreaterEqual,
     kSpreadWarningPct, "%", S::kWarning, "cores are unevenly loaded (balance verdict WARNING)",
     kPerCoreCaveat},
    {"PER_CORE_SPREAD_CRITICAL", "per-core (sample run)", "per_core[*].spread_pct",
     C::kGreaterEqual, kSpreadCriticalPct, "%", S::kCritical,
     "cores are badly unbalanced (balance verdict CRITICAL)", kPerCoreCaveat},
    {"PER_CORE_HALF_GAP", "per-core (sample run)", "per_core[*].half_gap_pct", C::kGreaterEqual,
     kHalfGapHintPct, "%", S::kHint, "front and back halves of the cores differ",
     "suggests NUMA or L2-slice skew; needs >= 4 cores"},
};

std::string Num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

bool Fires(C c, double value, double threshold) {
  switch (c) {
    case C::kGreater: return value > threshold;
    case C::kGreaterEqual: return value >= threshold;
    case C::kLess: return value < threshold;
  }
  return false;
}

// Collects the findings of one rule; `applied` records that a field existed.
class RuleRun {
 public:
  RuleRun(const FindingRule& rule, Findings* out) : rule_(rule), out_(out) {}

  // A field in native units: `scale` converts to the rule's unit (100 for
  // fractions). Compared in native units, so 0.30 is not above 30 %.
  void Check(const std::string& field, double native, double scale = 1) {
    applied_ = true;
    if (Fires(rule_.comparison, native, rule_.threshold / scale)) Fire(field, native * scale);
  }
  // A field whose decision was taken elsewhere (per_core.h, derived.h).
  void Decided(const std::string& field, double value, bool fires) {
    applied_ = true;
    if (fires) Fire(field, value);
  }
  void Absent(std::string note) {
    if (!applied_) out_->not_applied.push_back({std::string(rule_.id), std::move(note)});
  }
  bool applied() const { return applied_; }

 private:
  void Fire(const std::string& field, double value) {
    out_->items.push_back({std::string(rule_.id), rule_.severity, field, value, rule_.comparison,
                           rule_.threshold, std::string(rule_.unit), std::string(rule_.message),
                           Cat(rule_.caveat, "; ", kRoutingCaveat)});
  }
  const FindingRule& rule_;
  Findings* out_;
  bool applied_ = false;
};

const double* Field(const Evidence& ev, const std::string& name) {
  auto it = ev.merged.find(name);
  return it == ev.merged.end() || !std::isfinite(it->second) ? nullptr : &it->second;
}

// The prefixed (A2/A3, A5) and unprefixed (310P) spellings of a column.
std::vector<std::string> Spellings(const std::string& suffix) {
  return {"aic_" + suffix, "aiv_" + suffix, suffix};
}

void PipeRule(const Evidence& ev, RuleRun& run, const std::string& suffix) {
  for (const std::string& name : Spellings(suffix)) {
    const double* v = Field(ev, name);
    if (v != nullptr && *v >= 0 && *v <= 1) run.Check(name, *v, 100);
  }
  run.Absent(Cat("no in-range ", suffix,
                 " column (PipeUtilization not collected, or the "
                 "ratio was out of range)"));
}

void SharedGmRule(const Evidence& ev, RuleRun& run) {
  for (const std::string p : {"aic_", "aiv_", ""}) {
    const double* m2 = Field(ev, p + "mte2_ratio");
    const double* m3 = Field(ev, p + "mte3_ratio");
    if (m2 == nullptr || m3 == nullptr || *m2 < 0 || *m2 > 1 || *m3 < 0 || *m3 > 1) continue;
    run.Check(Cat(p, "mte2_ratio + ", p, "mte3_ratio"), *m2 + *m3, 100);
  }
  run.Absent("no core type has both mte2_ratio and mte3_ratio (A2/A3 AIC has no MTE3)");
}

void MemoryRule(const Evidence& ev, RuleRun& run) {
  bool bytes = false;
  for (const auto& [name, v] : ev.merged) {
    if (name.find("_datas(KB)") != std::string::npos) bytes = true;
    if (name.find("_bw_usage_rate(%)") != std::string::npos && std::isfinite(v)) {
      run.Check(name, v);
    }
  }
  run.Absent(bytes ? "no *_bw_usage_rate(%) field: only msprof op Memory reports usage rates"
                   : "no *_bw_usage_rate(%) and no byte (*_datas(KB)) fields: absent in "
                     "op_summary and on CANN 9.2 / A5; DRAM traffic is not derived from "
                     "main_mem_*_bw");
}

void L2Rule(const Evidence& ev, RuleRun& run) {
  std::map<std::string, L2Count> total;
  for (const auto& [key, c] : L2Counts(ev.merged)) {
    L2Count& t = total[key.substr(0, 3)];
    t.hit += c.hit;
    t.miss += c.miss;
  }
  for (const auto& [core, c] : total) {
    run.Check(Cat(core, "_l2_total_hit_rate"), c.hit / (c.hit + c.miss), 100);
  }
  run.Absent("no L2 hit / miss counts (L2Cache not collected, or not supported: 310P)");
}

void ConflictRule(const Evidence& ev, RuleRun& run, const std::string& suffix) {
  for (const std::string& name : Spellings(suffix)) {
    const double* v = Field(ev, name);
    if (v != nullptr && *v >= 0) run.Check(name, *v, 100);
  }
  run.Absent(Cat(
      "no ", suffix, " column (ResourceConflictRatio not collected",
      suffix.find("bankgroup") != std::string::npos ? ", or A5: no bank-group counter" : "", ")"));
}

void DvfsRule(const Evidence& ev, RuleRun& run) {
  const DvfsCheck& d = ev.dvfs;
  if (d.source == ClockSource::kOpprofCurrentFreq && d.rated_mhz > 0 && d.observed_mhz > 0) {
    run.Decided("dvfs.deviation_pct", d.deviation_pct, d.observed_mhz < d.rated_mhz);
  }
  run.Absent(d.source == ClockSource::kOpprofCurrentFreq
                 ? "OpBasicInfo has a Current Freq but no rated clock is known"
                 : "no OpBasicInfo Current / Rated Freq (not an msprof op capture); the DVFS "
                   "section shows the check on the unified db's AICORE_FREQ or the "
                   "back-calculated clock");
}

void HeadRule(const Evidence& ev, RuleRun& run) {
  if (ev.head_overhead_status == HeadOverheadStatus::kOk) {
    run.Check("head_overhead_pct", ev.head_overhead_pct);
  }
  run.Absent(Cat("head overhead ", Name(ev.head_overhead_status),
                 ev.head_overhead_note.empty() ? "" : ": ", ev.head_overhead_note));
}

// Derived from the balance verdict and half-gap hint of per_core.h.
void PerCoreRule(const Evidence& ev, RuleRun& run, std::string_view id) {
  for (const PerCore* p : {&ev.per_core, &ev.per_core_secondary}) {
    if (!p->ok()) continue;
    const std::string at = Cat("per_core[", Name(p->core_type), "].");
    if (id == "PER_CORE_HALF_GAP") {
      if (p->cores.size() >= 4) run.Decided(at + "half_gap_pct", p->half_gap_pct, p->half_gap_hint);
      continue;
    }
    const BalanceVerdict fires_on =
        id == "PER_CORE_SPREAD_WARNING" ? BalanceVerdict::kWarning : BalanceVerdict::kCritical;
    run.Decided(at + "spread_pct", p->spread_pct, p->verdict == fires_on);
  }
  run.Absent(Cat("no per-core table (", StatusText(ev.per_core), ")",
                 id == "PER_CORE_HALF_GAP" ? ", or fewer than 4 cores" : ""));
}

void Apply(const FindingRule& rule, const Evidence& ev, Findings* out) {
  RuleRun run(rule, out);
  const std::string_view id = rule.id;
  if (id == "PIPE_MTE2_RATIO_HIGH") return PipeRule(ev, run, "mte2_ratio");
  if (id == "PIPE_SCALAR_RATIO_HIGH") return PipeRule(ev, run, "scalar_ratio");
  if (id == "PIPE_FIXP_RATIO_HIGH") return PipeRule(ev, run, "fixpipe_ratio");
  if (id == "GM_MTE2_MTE3_SHARED") return SharedGmRule(ev, run);
  if (id == "MEMORY_BW_USAGE_GOOD") return MemoryRule(ev, run);
  if (id == "L2_HIT_RATE_GOOD" || id == "L2_HIT_RATE_LOW") return L2Rule(ev, run);
  if (id == "CONFLICT_BANKGROUP_HIGH") return ConflictRule(ev, run, "vec_bankgroup_cflt_ratio");
  if (id == "CONFLICT_BANK_HIGH") return ConflictRule(ev, run, "vec_bank_cflt_ratio");
  if (id == "CONFLICT_RESOURCE_HIGH") return ConflictRule(ev, run, "vec_resc_cflt_ratio");
  if (id == "DVFS_CURRENT_BELOW_RATED") return DvfsRule(ev, run);
  if (id == "HEAD_OVERHEAD_HIGH") return HeadRule(ev, run);
  PerCoreRule(ev, run, id);
}

std::string Threshold(const FindingRule& r) {
  return Cat(Name(r.comparison), " ", r.threshold, " ", r.unit);
}

std::string FindingLine(const Finding& f) {
  return Cat("[", Name(f.severity), "] ", f.rule_id, " ", f.field, "=", Num(f.value), " ", f.unit,
             " (", Name(f.comparison), " ", f.threshold, " ", f.unit, "): ", f.message);
}

}  // namespace

std::string_view Name(FindingSeverity s) {
  switch (s) {
    case S::kGood: return "good";
    case S::kHint: return "hint";
    case S::kWarning: return "warning";
    case S::kCritical: return "critical";
  }
  return "";
}

std::string_view Name(Comparison c) {
  switch (c) {
    case C::kGreater: return ">";
    case C::kGreaterEqual: return ">=";
    case C::kLess: return "<";
  }
  return "";
}

const std::vector<FindingRule>& FindingRules() { return kRules; }

const FindingRule* FindRule(std::string_view id) {
  for (const FindingRule& r : kRules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Findings EvaluateFindings(const Evidence& ev) {
  Findings out;
  for (const FindingRule& rule : kRules) Apply(rule, ev, &out);
  return out;
}

std::string FindingRulesMarkdown() {
  std::string md =
      "| rule id | source | field | fires when | severity | message | caveat |\n"
      "|---|---|---|---|---|---|---|\n";
  for (const FindingRule& r : kRules) {
    md += Cat("| `", r.id, "` | ", r.source, " | `", r.field, "` | ", Threshold(r), " | ",
              Name(r.severity), " | ", r.message, " | ", r.caveat, " |\n");
  }
  return md;
}

std::vector<std::string> FindingsTextLines(const Findings& f) {
  std::vector<std::string> out = {"", Cat("--- Findings (", kRoutingCaveat, ") ---")};
  if (f.items.empty()) out.push_back("  none fired");
  for (const Finding& x : f.items) {
    out.push_back(Cat("  ", FindingLine(x)));
    out.push_back(Cat("      caveat: ", x.caveat));
  }
  for (const FindingNotApplied& n : f.not_applied) {
    out.push_back(Cat("  not applied: ", n.rule_id, " (", n.note, ")"));
  }
  return out;
}

std::string FindingsMarkdown(const Findings& f) {
  std::string md = Cat("\n## Findings\n\n> ", kRoutingCaveat, ".\n\n");
  if (f.items.empty()) md += "No rule fired.\n";
  if (!f.items.empty()) {
    md += "| severity | rule | field | value | threshold | message | caveat |\n";
    md += "|---|---|---|---|---|---|---|\n";
  }
  for (const Finding& x : f.items) {
    md += Cat("| ", Name(x.severity), " | `", x.rule_id, "` | `", x.field, "` | ", Num(x.value),
              " ", x.unit, " | ", Name(x.comparison), " ", x.threshold, " ", x.unit, " | ",
              x.message, " | ", x.caveat, " |\n");
  }
  if (!f.not_applied.empty()) md += "\nNot applied (field absent):\n\n";
  for (const FindingNotApplied& n : f.not_applied) {
    md += Cat("- `", n.rule_id, "`: ", n.note, "\n");
  }
  return md;
}

}  // namespace npuperf::evidence
