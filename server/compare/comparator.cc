#include "server/compare/comparator.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_util.h"
#include "server/compare/verdict_stats.h"
#include "server/core/noise_rules.h"

namespace npuperf::server {
namespace {

using v1::Verdict;

std::string Pct(double ratio) { return absl::StrFormat("%+.2f%%", (ratio - 1) * 100); }

std::string Num(double v) { return absl::StrFormat("%.4g", v); }

// ---- comparability ---------------------------------------------------------

struct FieldPair {
  const char* name;
  std::string baseline;
  std::string candidate;
  bool blocking;
};

// Compare mode runs the standard protocol (plus the golden join): its
// durations are standard ones.
std::string ProtocolOf(const std::string& mode) { return mode == "compare" ? "standard" : mode; }

// Every fingerprint field, blocking or informative. Blocking fields change
// what is measured (chip, software stack, input shape, protocol); the others
// say where and with what code it ran — the code is expected to differ
// between the rounds of an optimisation.
std::vector<FieldPair> FingerprintFields(const v1::Round& b, const v1::Round& c) {
  const v1::Fingerprint& fb = b.evidence().fingerprint();
  const v1::Fingerprint& fc = c.evidence().fingerprint();
  const v1::Evidence& eb = b.evidence();
  const v1::Evidence& ec = c.evidence();
  auto str = [](int64_t v) { return absl::StrCat(v); };
  return {
      {"soc", fb.soc(), fc.soc(), true},
      {"cann_version", fb.cann_version(), fc.cann_version(), true},
      {"msprof_version", fb.msprof_version(), fc.msprof_version(), true},
      {"driver_version", fb.driver_version(), fc.driver_version(), true},
      {"mode", ProtocolOf(fb.mode()), ProtocolOf(fc.mode()), true},
      {"case_id", b.case_id(), c.case_id(), true},
      {"case_shape", fb.case_shape(), fc.case_shape(), true},
      {"case_dtype", fb.case_dtype(), fc.case_dtype(), true},
      {"input_shapes", eb.input_shapes(), ec.input_shapes(), true},
      {"input_data_types", eb.input_data_types(), ec.input_data_types(), true},
      {"warm_up", str(fb.warm_up()), str(fc.warm_up()), true},
      {"seed", str(fb.seed()), str(fc.seed()), true},
      {"operator_name", b.operator_name(), c.operator_name(), false},
      {"op_name", eb.op_name(), ec.op_name(), false},
      {"host", fb.host(), fc.host(), false},
      {"device_id", str(fb.device_id()), str(fc.device_id()), false},
      {"bundle_sha256", fb.bundle_sha256(), fc.bundle_sha256(), false},
      {"argv", absl::StrJoin(fb.argv(), " "), absl::StrJoin(fc.argv(), " "), false},
      {"repeats", str(fb.repeats()), str(fc.repeats()), false},
      {"clock_state", fb.clock_state(), fc.clock_state(), false},
      {"agent_version", fb.agent_version(), fc.agent_version(), false},
      {"block_num", str(eb.block_num()), str(ec.block_num()), false},
  };
}

// Shapes and dtypes block only when both sides know them: quick rounds have
// no op_summary and leave them empty.
bool BothKnown(const FieldPair& f) { return !f.baseline.empty() && !f.candidate.empty(); }

void AddFingerprintDifferences(const v1::Round& b, const v1::Round& c, v1::RoundComparison* out) {
  for (FieldPair& f : FingerprintFields(b, c)) {
    if (f.baseline == f.candidate) continue;
    const bool optional_field =
        std::string(f.name).rfind("case_", 0) == 0 || std::string(f.name).rfind("input_", 0) == 0;
    const bool blocking = f.blocking && (!optional_field || BothKnown(f));
    auto* d = out->add_fingerprint_differences();
    d->set_field(f.name);
    d->set_baseline(std::move(f.baseline));
    d->set_candidate(std::move(f.candidate));
    d->set_blocking(blocking);
  }
}

// ---- metric deltas ---------------------------------------------------------

// Ratio metrics (0..1) are judged in percentage points, percentages directly
// in points (core/noise_rules.h IsRatioField, IsPercentField), everything
// else (times, cycles, bandwidths) relative to the baseline.
void AddMetricDeltas(const v1::Evidence& b, const v1::Evidence& c, const VerdictOptions& o,
                     v1::RoundComparison* out) {
  std::map<std::string, const v1::MetricGroup*> cand;
  for (const auto& g : c.metrics()) cand[g.group()] = &g;
  for (const auto& gb : b.metrics()) {
    auto it = cand.find(gb.group());
    if (it == cand.end()) continue;
    const std::map<std::string, double> fb(gb.fields().begin(), gb.fields().end());
    for (const auto& [field, vb] : fb) {
      auto vc_it = it->second->fields().find(field);
      if (vc_it == it->second->fields().end()) continue;
      const double vc = vc_it->second;
      bool notable;
      if (IsRatioField(field)) {
        notable = std::abs(vc - vb) * 100 >= o.ratio_threshold_pp;
      } else if (IsPercentField(field)) {
        notable = std::abs(vc - vb) >= o.ratio_threshold_pp;
      } else {
        notable = vb != 0 ? std::abs(vc / vb - 1) * 100 >= o.duration_threshold_pct : vc != 0;
      }
      auto* d = out->add_metric_deltas();
      d->set_group(gb.group());
      d->set_field(field);
      d->set_baseline(vb);
      d->set_candidate(vc);
      d->set_delta(vc - vb);
      d->set_notable(notable);
    }
  }
}

// ---- thresholds ------------------------------------------------------------

// The spread of `family` measured for the candidate's case on the soc and
// mode both sides ran with, or null.
const NoiseRecord* MatchingNoise(const v1::Round& b, const v1::Round& c, const VerdictOptions& o,
                                 const std::string& family) {
  if (o.noise == nullptr) return nullptr;
  auto it = o.noise->find(CaseKey(c));
  if (it == o.noise->end() || CaseKey(b) != it->first) return nullptr;
  const v1::Fingerprint& fb = b.evidence().fingerprint();
  const v1::Fingerprint& fc = c.evidence().fingerprint();
  if (fb.soc() != fc.soc() || ProtocolOf(fb.mode()) != ProtocolOf(fc.mode())) return nullptr;
  for (const NoiseRecord& n : it->second) {
    if (n.family == family && n.soc == fc.soc() && ProtocolOf(n.mode) == ProtocolOf(fc.mode())) {
      return &n;
    }
  }
  return nullptr;
}

// The options for one pair with its thresholds chosen, and the duration's
// threshold fields (100..104) filled.
VerdictOptions ThresholdsFor(const v1::Round& b, const v1::Round& c, const VerdictOptions& o,
                             v1::DurationComparison* d) {
  VerdictOptions out = o;
  d->set_expected_false_alarm_rate(std::nan(""));
  if (o.duration_threshold_requested) {
    d->set_threshold_source("request");
  } else if (const NoiseRecord* n = MatchingNoise(b, c, o, kDurationFamily)) {
    out.duration_threshold_pct = NoiseThreshold(n->spread, kDurationFloorPct);
    d->set_threshold_source("calibrated");
    d->set_measured_spread_pct(n->spread);
    d->set_expected_false_alarm_rate(DurationFalseAlarmRate(out.duration_threshold_pct, n->spread));
    d->set_calibration_id(n->calibration_id);
  } else {
    d->set_threshold_source("default");
  }
  d->set_threshold_pct(out.duration_threshold_pct);
  if (!o.ratio_threshold_requested) {
    if (const NoiseRecord* n = MatchingNoise(b, c, o, kRatioFamily)) {
      out.ratio_threshold_pp = NoiseThreshold(n->spread, kRatioFloorPp);
    }
  }
  return out;
}

// ---- duration verdict ------------------------------------------------------

std::string ErrorsOf(const v1::Evidence& e) {
  std::vector<std::string> parts;
  for (const auto& err : e.errors()) parts.push_back(absl::StrCat(err.code(), ": ", err.message()));
  return absl::StrJoin(parts, "; ");
}

std::string DvfsWhy(const char* side, const v1::Evidence& e) {
  return absl::StrCat(side, " is DVFS-suspect (observed ", Num(e.dvfs().observed_mhz()),
                      " MHz vs rated ", Num(e.dvfs().rated_mhz()), " MHz)");
}

// Rules 3 to 5 of comparator.h for samples that are all positive, once
// ratio and p-value are set.
void JudgeDuration(const v1::Evidence& b, const v1::Evidence& c, const VerdictOptions& o,
                   v1::DurationComparison* d) {
  const int nb = b.duration().samples_us_size();
  const int nc = c.duration().samples_us_size();
  if (DvfsSuspect(b) || DvfsSuspect(c)) {
    d->set_verdict(v1::VERDICT_INSUFFICIENT);
    d->set_rule(DvfsSuspect(b) ? DvfsWhy("baseline", b) : DvfsWhy("candidate", c));
    return;
  }
  const double min_p = MinAchievablePValue(nb, nc);
  if (min_p > o.alpha) {
    d->set_verdict(v1::VERDICT_INSUFFICIENT);
    d->set_rule(absl::StrCat("too few samples: ", nb, " vs ", nc,
                             " cannot reach alpha=", Num(o.alpha), " (smallest p ", Num(min_p),
                             "); use at least 5 repeats per side"));
    return;
  }
  const double change_pct = std::abs(d->ratio() - 1) * 100;
  if (d->p_value() >= o.alpha) {
    d->set_verdict(v1::VERDICT_STABLE);
    d->set_rule(absl::StrCat("p=", Num(d->p_value()), ">=", Num(o.alpha), " (", Pct(d->ratio()),
                             " not significant)"));
    return;
  }
  const std::string source = absl::StrCat(" (", d->threshold_source(), ")");
  if (change_pct < o.duration_threshold_pct) {
    d->set_verdict(v1::VERDICT_STABLE);
    d->set_rule(absl::StrCat("p=", Num(d->p_value()), "<", Num(o.alpha), " but |", Pct(d->ratio()),
                             "|<", Num(o.duration_threshold_pct), "%", source));
    return;
  }
  d->set_verdict(d->ratio() < 1 ? v1::VERDICT_IMPROVED : v1::VERDICT_REGRESSED);
  d->set_rule(absl::StrCat("p=", Num(d->p_value()), "<", Num(o.alpha), " and ", Pct(d->ratio()),
                           d->ratio() < 1 ? " faster" : " slower", " beyond ",
                           Num(o.duration_threshold_pct), "%", source));
}

void DecideDuration(const v1::Evidence& b, const v1::Evidence& c, const VerdictOptions& o,
                    v1::DurationComparison* d) {
  const std::vector<double> sb(b.duration().samples_us().begin(), b.duration().samples_us().end());
  const std::vector<double> sc(c.duration().samples_us().begin(), c.duration().samples_us().end());
  *d->mutable_baseline_samples_us() = b.duration().samples_us();
  *d->mutable_candidate_samples_us() = c.duration().samples_us();
  d->set_baseline_us(b.duration().aggregate_us());
  d->set_candidate_us(c.duration().aggregate_us());
  auto positive = [](const std::vector<double>& s) {
    for (double v : s) {
      if (!(v > 0) || !std::isfinite(v)) return false;
    }
    return !s.empty();
  };
  if (!positive(sb) || !positive(sc) || !(d->baseline_us() > 0) || !(d->candidate_us() > 0)) {
    d->set_verdict(v1::VERDICT_ERRORED);
    d->set_rule("no positive duration samples on one side");
    return;
  }
  d->set_ratio(d->candidate_us() / d->baseline_us());
  const RatioEstimate hl = HodgesLehmannRatio(sb, sc, o.alpha);
  if (hl.low && hl.high) {
    d->set_ratio_ci_low(*hl.low);
    d->set_ratio_ci_high(*hl.high);
  }
  d->set_p_value(MannWhitneyU(sb, sc).p_value);
  JudgeDuration(b, c, o, d);
}

void AddFlags(const v1::Evidence& b, const v1::Evidence& c, v1::RoundComparison* out) {
  out->set_baseline_bound(b.bound().label());
  out->set_candidate_bound(c.bound().label());
  out->set_bound_changed(!b.bound().label().empty() && !c.bound().label().empty() &&
                         b.bound().label() != c.bound().label());
  if (out->bound_changed()) {
    out->add_flags(
        absl::StrCat("bound_route_changed:", b.bound().label(), "->", c.bound().label()));
  }
  const bool per_core_both = !b.per_core().verdict().empty() && !c.per_core().verdict().empty();
  out->set_baseline_balance(b.per_core().verdict());
  out->set_candidate_balance(c.per_core().verdict());
  out->set_balance_changed(per_core_both && b.per_core().verdict() != c.per_core().verdict());
  if (out->balance_changed()) {
    out->add_flags(
        absl::StrCat("balance_changed:", b.per_core().verdict(), "->", c.per_core().verdict()));
  }
  out->set_baseline_dvfs(b.dvfs().status());
  out->set_candidate_dvfs(c.dvfs().status());
  if (DvfsSuspect(b)) out->add_flags("dvfs_suspect:baseline");
  if (DvfsSuspect(c)) out->add_flags("dvfs_suspect:candidate");
  // Partial seven-metric evidence makes the metric deltas incomplete.
  if (b.seven_metric_status() == v1::SEVEN_METRIC_STATUS_PARTIAL ||
      c.seven_metric_status() == v1::SEVEN_METRIC_STATUS_PARTIAL) {
    out->add_flags("metrics_partial");
  }
}

// ---- findings --------------------------------------------------------------

// "RULE(field)": what a finding is matched by across rounds.
std::string FindingKey(const v1::Finding& f) {
  return absl::StrCat(f.rule_id(), "(", f.field(), ")");
}

bool NotApplied(const v1::Evidence& e, const std::string& rule_id) {
  for (const auto& n : e.findings_not_applied()) {
    if (n.rule_id() == rule_id) return true;
  }
  return false;
}

// The findings of `from` that `to` lacks: `change` when `to` applied the
// rule, "unmeasured" when its field is absent there.
void AddOneSided(const v1::Evidence& from, const v1::Evidence& to, const char* change,
                 v1::RoundComparison* out) {
  std::map<std::string, const v1::Finding*> other;
  for (const auto& f : to.findings()) other[FindingKey(f)] = &f;
  for (const auto& f : from.findings()) {
    if (other.count(FindingKey(f)) > 0) continue;
    const bool unmeasured = NotApplied(to, f.rule_id());
    auto* c = out->add_finding_changes();
    c->set_change(unmeasured ? "unmeasured" : change);
    *c->mutable_finding() = f;
    if (!unmeasured) out->add_flags(absl::StrCat("finding_", change, ":", FindingKey(f)));
  }
}

void AddFindingChanges(const v1::Evidence& b, const v1::Evidence& c, v1::RoundComparison* out) {
  AddOneSided(b, c, "disappeared", out);
  AddOneSided(c, b, "appeared", out);
}

}  // namespace

std::string CaseKey(const v1::Round& r) {
  return absl::StrCat(r.operator_name(), "/", r.case_id());
}

bool HasDurationVerdict(v1::Verdict v) {
  return v == v1::VERDICT_IMPROVED || v == v1::VERDICT_REGRESSED || v == v1::VERDICT_STABLE;
}

void CountVerdict(v1::Verdict v, v1::ComparisonCounts* n) {
  n->set_matched(n->matched() + 1);
  if (HasDurationVerdict(v)) n->set_comparable(n->comparable() + 1);
  switch (v) {
    case v1::VERDICT_IMPROVED: n->set_improved(n->improved() + 1); break;
    case v1::VERDICT_REGRESSED: n->set_regressed(n->regressed() + 1); break;
    case v1::VERDICT_STABLE: n->set_stable(n->stable() + 1); break;
    case v1::VERDICT_INSUFFICIENT: n->set_insufficient(n->insufficient() + 1); break;
    case v1::VERDICT_NOT_COMPARABLE: n->set_not_comparable(n->not_comparable() + 1); break;
    default: n->set_errored(n->errored() + 1); break;
  }
}

absl::StatusOr<VerdictOptions> ResolveVerdictOptions(const v1::CompareOptions& options,
                                                     const std::string& field_prefix) {
  VerdictOptions o;
  std::vector<FieldViolation> bad;
  if (options.alpha() != 0) {
    if (!(options.alpha() > 0 && options.alpha() <= 0.5)) {
      bad.push_back({field_prefix + ".alpha", "must be in (0, 0.5]"});
    }
    o.alpha = options.alpha();
  }
  if (options.duration_threshold_pct() != 0) {
    if (!(options.duration_threshold_pct() > 0 && options.duration_threshold_pct() <= 100)) {
      bad.push_back({field_prefix + ".duration_threshold_pct", "must be in (0, 100]"});
    }
    o.duration_threshold_pct = options.duration_threshold_pct();
    o.duration_threshold_requested = true;
  }
  if (options.ratio_threshold_pp() != 0) {
    if (!(options.ratio_threshold_pp() > 0 && options.ratio_threshold_pp() <= 100)) {
      bad.push_back({field_prefix + ".ratio_threshold_pp", "must be in (0, 100]"});
    }
    o.ratio_threshold_pp = options.ratio_threshold_pp();
    o.ratio_threshold_requested = true;
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  return o;
}

NoiseBook NoiseBookOf(std::vector<NoiseRecord> spreads) {
  NoiseBook book;
  for (NoiseRecord& n : spreads) {
    std::string key = absl::StrCat(n.operator_name, "/", n.case_id);
    book[key].push_back(std::move(n));
  }
  return book;
}

v1::RoundComparison CompareRounds(const v1::Round& baseline, const v1::Round& candidate,
                                  const VerdictOptions& options) {
  v1::RoundComparison out;
  out.set_baseline_round_id(baseline.id());
  out.set_candidate_round_id(candidate.id());
  out.set_operator_name(candidate.operator_name());
  out.set_case_id(candidate.case_id());
  const v1::Evidence& b = baseline.evidence();
  const v1::Evidence& c = candidate.evidence();
  const VerdictOptions o = ThresholdsFor(baseline, candidate, options, out.mutable_duration());
  AddFingerprintDifferences(baseline, candidate, &out);
  AddMetricDeltas(b, c, o, &out);
  AddFlags(b, c, &out);
  AddFindingChanges(b, c, &out);
  DecideDuration(b, c, o, out.mutable_duration());

  std::vector<std::string> blocking;
  for (const auto& d : out.fingerprint_differences()) {
    if (d.blocking()) {
      blocking.push_back(absl::StrCat(d.field(), " (", d.baseline(), " vs ", d.candidate(), ")"));
    }
  }
  if (b.has_timeline() || c.has_timeline()) {
    // Instruction profiling perturbs durations (reference-scripts.md §2.11).
    out.set_verdict(v1::VERDICT_NOT_COMPARABLE);
    out.set_rule(absl::StrCat(b.has_timeline() ? "baseline" : "candidate",
                              " is an instruction timeline: it carries no durations to compare"));
  } else if (b.errors_size() > 0 || c.errors_size() > 0) {
    out.set_verdict(v1::VERDICT_ERRORED);
    out.set_rule(b.errors_size() > 0 ? absl::StrCat("baseline evidence errors: ", ErrorsOf(b))
                                     : absl::StrCat("candidate evidence errors: ", ErrorsOf(c)));
  } else if (out.duration().verdict() == v1::VERDICT_ERRORED) {
    out.set_verdict(v1::VERDICT_ERRORED);
    out.set_rule(out.duration().rule());
  } else if (!blocking.empty()) {
    out.set_verdict(v1::VERDICT_NOT_COMPARABLE);
    out.set_rule(absl::StrCat("fingerprint differs: ", absl::StrJoin(blocking, ", ")));
  } else {
    out.set_verdict(out.duration().verdict());
    out.set_rule(out.duration().rule());
  }
  return out;
}

v1::CompareCollectionsResponse CompareRoundSets(const std::vector<v1::Round>& baseline,
                                                const std::vector<v1::Round>& candidate,
                                                const VerdictOptions& options) {
  auto newest = [](const std::vector<v1::Round>& rounds) {
    std::map<std::string, const v1::Round*> by_key;
    for (const v1::Round& r : rounds) {
      const v1::Round*& slot = by_key[CaseKey(r)];
      if (slot == nullptr || slot->id() < r.id()) slot = &r;
    }
    return by_key;
  };
  const auto base = newest(baseline);
  const auto cand = newest(candidate);
  v1::CompareCollectionsResponse out;
  v1::ComparisonCounts* n = out.mutable_counts();
  std::vector<double> ratios;
  for (const auto& [key, b] : base) {
    auto it = cand.find(key);
    if (it == cand.end()) {
      out.add_unmatched(absl::StrCat(key, " (baseline only)"));
      continue;
    }
    v1::RoundComparison cmp = CompareRounds(*b, *it->second, options);
    CountVerdict(cmp.verdict(), n);
    if (HasDurationVerdict(cmp.verdict())) ratios.push_back(cmp.duration().ratio());
    *out.add_comparisons() = std::move(cmp);
  }
  for (const auto& [key, c] : cand) {
    if (base.count(key) == 0) out.add_unmatched(absl::StrCat(key, " (candidate only)"));
  }
  n->set_unmatched(out.unmatched_size());
  out.set_geomean_ratio(GeometricMean(ratios));
  return out;
}

v1::GetGoldenReportResponse GoldenReport(const std::vector<v1::Round>& rounds) {
  v1::GetGoldenReportResponse out;
  out.set_label(kGoldenLabel);
  std::vector<double> ratios;
  for (const v1::Round& r : rounds) {
    const v1::GoldenRatio& g = r.evidence().golden();
    if (g.status().empty() || g.status() == "not_provided") continue;
    auto* c = out.add_cases();
    c->set_operator_name(r.operator_name());
    c->set_case_id(r.case_id());
    *c->mutable_golden() = g;
    c->set_round_id(r.id());
    if (g.status() == "joined" && g.ratio() > 0) ratios.push_back(g.ratio());
  }
  out.set_geomean_ratio(GeometricMean(ratios));
  return out;
}

bool DvfsSuspect(const v1::Evidence& e) {
  return e.dvfs().status() == "suspect" || e.fingerprint().clock_state() == "dvfs_suspect";
}

}  // namespace npuperf::server
