#include "server/core/evidence_validator.h"

#include <cmath>
#include <set>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/input_rules.h"
#include "evidence/findings.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

using Allowed = absl::Span<const std::string_view>;

// The spellings of evidence/labels.h (tests/server/core/evidence_validator_test.cc
// checks every Name() of the library against these lists).
constexpr std::string_view kPipeBounds[] = {"UNKNOWN",    "MTE2_BOUND", "CUBE_BOUND",   "VEC_BOUND",
                                            "FIXP_BOUND", "MTE3_BOUND", "SCALAR_BOUND", "NO_BOUND"};
constexpr std::string_view kRoutingLabels[] = {"insufficient_evidence",
                                               "compute_candidate",
                                               "data_movement_candidate",
                                               "scalar_candidate",
                                               "mixed",
                                               "no_dominant_pipe"};
constexpr std::string_view kFamilies[] = {"compute", "data_movement", "scalar"};
constexpr std::string_view kCoreTypes[] = {"AIC", "AIV"};
constexpr std::string_view kPerCoreStatuses[] = {"no_sample_run",      "no_aicore_db",
                                                 "ambiguous_prof_dir", "ambiguous_aicore_db",
                                                 "sqlite_error",       "no_positive_core_cycles",
                                                 "no_core_time",       "not_collected"};
constexpr std::string_view kVerdicts[] = {"PASS", "WARNING", "CRITICAL"};
constexpr std::string_view kDvfsStatuses[] = {"unknown", "ok", "suspect"};
// evidence/labels.cc Name(ClockSource) and Name(TimingSource): every value
// the library writes (the unified db's with issue 31).
constexpr std::string_view kClockSources[] = {"none", "opprof.current_freq",
                                              "op_summary.cycles_back_calculated",
                                              "aicore.db.back_calculated", "msprof_db.AICORE_FREQ"};
constexpr std::string_view kTimingSources[] = {
    "op_summary.Task Duration(us)", "task_time.task_time(us)", "api_statistic.node.launch",
    "opprof.OpBasicInfo.Task Duration(us)", "msprof_db.TASK.endNs-startNs"};
constexpr std::string_view kClockStates[] = {"rated", "dvfs_suspect", "unknown"};
constexpr std::string_view kModes[] = {"standard", "quick", "compare", "timeline"};
constexpr std::string_view kAttributionStatuses[] = {"unique_exact_target_window",
                                                     "target_not_found", "duplicate_target_window"};
// A timeline alone never proves pipelining (reference-scripts.md §2.11).
constexpr std::string_view kTimelinePipelineStatuses[] = {"requires_tile_dag_correlation",
                                                          "unverified"};
constexpr std::string_view kPipeClasses[] = {"compute", "movement", "scalar", "wait", "unknown"};
constexpr size_t kMaxViolations = 100;
// Device ids of the evidence: -1 (none) or an NPU index.
constexpr double kMaxDeviceId = 1 << 20;

// Collects violations, one per bad field, and stops at kMaxViolations.
class Checker {
 public:
  std::vector<FieldViolation> out;

  void Add(const std::string& field, std::string why) {
    if (out.size() < kMaxViolations) out.push_back({field, std::move(why)});
  }
  bool Finite(const std::string& f, double v) {
    if (std::isfinite(v)) return true;
    Add(f, std::isnan(v) ? "is nan" : (v > 0 ? "is inf" : "is -inf"));
    return false;
  }
  void NonNegative(const std::string& f, double v) {
    if (Finite(f, v) && v < 0) Add(f, absl::StrCat("is ", v, "; must be >= 0"));
  }
  void Range(const std::string& f, double v, double lo, double hi) {
    if (Finite(f, v) && (v < lo || v > hi)) {
      Add(f, absl::StrCat("is ", v, "; must be in [", lo, ", ", hi, "]"));
    }
  }
  // Empty, or one of the allowed spellings.
  void OneOf(const std::string& f, const std::string& v, Allowed allowed) {
    if (v.empty()) return;
    for (std::string_view a : allowed) {
      if (v == a) return;
    }
    Add(f, "is not a known value");
  }
  void Text(const std::string& f, const std::string& v, size_t max) {
    if (v.size() > max) Add(f, absl::StrCat(v.size(), " bytes; at most ", max));
  }
  void Line(const std::string& f, const std::string& v, size_t max) {
    if (v.size() > max || !IsPrintableLine(v)) {
      Add(f, absl::StrCat("must be at most ", max, " bytes of printable text"));
    }
  }
  // False (reported) when n is over max: the caller then skips the items.
  bool Count(const std::string& f, int n, int max) {
    if (n <= max) return true;
    Add(f, absl::StrCat(n, " entries; at most ", max));
    return false;
  }
  void Texts(const std::string& f, const google::protobuf::RepeatedPtrField<std::string>& items,
             size_t max_bytes, bool line) {
    if (!Count(f, items.size(), kMaxEvidenceListItems)) return;
    for (int i = 0; i < items.size(); ++i) {
      const std::string fi = absl::StrCat(f, "[", i, "]");
      line ? Line(fi, items[i], max_bytes) : Text(fi, items[i], max_bytes);
    }
  }
};

std::string Key(const std::string& prefix, const std::string& key) {
  if (key.size() <= 64 && IsPrintableLine(key)) return absl::StrCat(prefix, "[", key, "]");
  return prefix + "[?]";
}

void CheckIdentity(const v1::Evidence& e, Checker& c) {
  c.Line("evidence.op_name", e.op_name(), kMaxOpNameBytes);
  c.Line("evidence.op_type", e.op_type(), kMaxEvidenceFieldBytes);
  c.Line("evidence.task_type", e.task_type(), kMaxEvidenceFieldBytes);
  c.Text("evidence.input_shapes", e.input_shapes(), kMaxEvidenceTextBytes);
  c.Text("evidence.input_data_types", e.input_data_types(), kMaxEvidenceTextBytes);
  c.Text("evidence.input_formats", e.input_formats(), kMaxEvidenceTextBytes);
  c.Line("evidence.operator_name", e.operator_name(), kMaxOperatorNameBytes);
  c.Line("evidence.case_id", e.case_id(), kMaxCaseIdBytes);
  c.NonNegative("evidence.block_num", static_cast<double>(e.block_num()));
  c.NonNegative("evidence.mix_block_num", static_cast<double>(e.mix_block_num()));
  c.NonNegative("evidence.task_duration_us", e.task_duration_us());
  c.NonNegative("evidence.aicore_time_us", e.aicore_time_us());
  c.NonNegative("evidence.aiv_time_us", e.aiv_time_us());
  c.Finite("evidence.head_overhead_us", e.head_overhead_us());
  c.NonNegative("evidence.cube_utilization_pct", e.cube_utilization_pct());
  if (!v1::SevenMetricStatus_IsValid(e.seven_metric_status())) {
    c.Add("evidence.seven_metric_status", "is not a known value");
  }
}

void CheckDuration(const v1::DurationStats& d, Checker& c) {
  if (c.Count("evidence.duration.samples_us", d.samples_us_size(), kMaxSamples)) {
    for (int i = 0; i < d.samples_us_size(); ++i) {
      c.NonNegative(absl::StrCat("evidence.duration.samples_us[", i, "]"), d.samples_us(i));
    }
  }
  if (c.Count("evidence.duration.core_samples_us", d.core_samples_us_size(), kMaxSamples)) {
    for (int i = 0; i < d.core_samples_us_size(); ++i) {
      c.NonNegative(absl::StrCat("evidence.duration.core_samples_us[", i, "]"),
                    d.core_samples_us(i));
    }
  }
  if (d.core_samples_us_size() > 0 && d.core_samples_us_size() != d.samples_us_size()) {
    c.Add("evidence.duration.core_samples_us",
          absl::StrCat("has ", d.core_samples_us_size(), " samples for ", d.samples_us_size(),
                       " repeats (one per repeat, or none)"));
  }
  c.NonNegative("evidence.duration.aggregate_us", d.aggregate_us());
  if (!v1::AggregationMethod_IsValid(d.method())) {
    c.Add("evidence.duration.method", "is not a known value");
  }
  c.OneOf("evidence.duration.source", d.source(), kTimingSources);
}

// Field names that RATIO_OUT_OF_RANGE errors flag ("pipe ratio <field>=...").
std::set<std::string> FlaggedRatios(const v1::Evidence& e) {
  std::set<std::string> out;
  for (const auto& err : e.errors()) {
    if (err.code() != "RATIO_OUT_OF_RANGE") continue;
    std::string_view m = err.message();
    const size_t start = m.find("ratio ");
    const size_t eq = m.find('=', start);
    if (start != std::string_view::npos && eq != std::string_view::npos) {
      out.emplace(m.substr(start + 6, eq - start - 6));
    }
  }
  return out;
}

void CheckLaunch(const v1::LaunchSelection& l, Checker& c) {
  c.Line("evidence.launch.selector", l.selector(), kMaxEvidenceFieldBytes);
  c.NonNegative("evidence.launch.total", l.total());
  if (!c.Count("evidence.launch.used", l.used_size(), kMaxSamples)) return;
  for (int i = 0; i < l.used_size(); ++i) {
    const v1::UsedLaunch& u = l.used(i);
    const std::string f = absl::StrCat("evidence.launch.used[", i, "]");
    if (u.index() < 1 || u.index() > l.total()) {
      c.Add(f + ".index",
            absl::StrCat("is ", u.index(), "; must be in [1, total=", l.total(), "]"));
    }
    if (u.stream_id() < -1) c.Add(f + ".stream_id", "must be >= -1 (-1: N/A)");
    if (u.task_id() < -1) c.Add(f + ".task_id", "must be >= -1 (-1: N/A)");
    if (u.start_ns() < 0) c.Add(f + ".start_ns", "must be >= 0 (0: unknown)");
    c.NonNegative(f + ".duration_us", u.duration_us());
    c.Line(f + ".where", u.where(), kMaxEvidenceFieldBytes);
  }
}

void CheckMetrics(const v1::Evidence& e, Checker& c) {
  if (!c.Count("evidence.metrics", e.metrics_size(), kMaxMetricGroups)) return;
  const std::set<std::string> flagged = FlaggedRatios(e);
  for (int i = 0; i < e.metrics_size(); ++i) {
    const v1::MetricGroup& g = e.metrics(i);
    const std::string f = absl::StrCat("evidence.metrics[", i, "]");
    c.Line(f + ".group", g.group(), kMaxMetricFieldNameBytes);
    if (!c.Count(f + ".fields", g.fields_size(), kMaxMetricFields)) continue;
    for (const auto& [name, value] : g.fields()) {
      const std::string ff = Key(f + ".fields", name);
      c.Line(ff, name, kMaxMetricFieldNameBytes);
      if (absl::EndsWith(name, "_ratio") && !flagged.contains(name)) {
        c.Range(ff, value, 0, 1);
      } else {
        c.Finite(ff, value);
      }
    }
  }
  c.Texts("evidence.missing_metrics", e.missing_metrics(), kMaxMetricFieldNameBytes, true);
}

// "process_scope_unattributed", or "unavailable:<status>[:<detail>]".
bool KnownPerCoreStatus(const std::string& s) {
  if (s.empty() || s == "process_scope_unattributed") return true;
  if (!absl::StartsWith(s, "unavailable:")) return false;
  std::string_view rest = std::string_view(s).substr(12);
  rest = rest.substr(0, rest.find(':'));
  for (std::string_view known : kPerCoreStatuses) {
    if (rest == known) return true;
  }
  return false;
}

void CheckCoreList(const std::string& f, const google::protobuf::RepeatedField<int32_t>& ids,
                   Checker& c) {
  if (!c.Count(f, ids.size(), kMaxCoreList)) return;
  for (int i = 0; i < ids.size(); ++i) c.NonNegative(absl::StrCat(f, "[", i, "]"), ids[i]);
}

void CheckPerCore(const std::string& f, const v1::PerCore& p, Checker& c) {
  c.Line(f + ".status", p.status(), kMaxEvidenceFieldBytes);
  if (!KnownPerCoreStatus(p.status())) c.Add(f + ".status", "is not a known value");
  c.Range(f + ".device_id", p.device_id(), -1, kMaxDeviceId);  // -1: none
  c.OneOf(f + ".core_type", p.core_type(), kCoreTypes);
  if (c.Count(f + ".cores", p.cores_size(), kMaxCores)) {
    for (int i = 0; i < p.cores_size(); ++i) {
      const std::string cf = absl::StrCat(f, ".cores[", i, "]");
      c.NonNegative(cf + ".core_id", p.cores(i).core_id());
      c.NonNegative(cf + ".cycles", static_cast<double>(p.cores(i).cycles()));
      c.NonNegative(cf + ".time_us", p.cores(i).time_us());
    }
  }
  c.NonNegative(f + ".freq_ghz", p.freq_ghz());
  c.NonNegative(f + ".min_us", p.min_us());
  c.NonNegative(f + ".avg_us", p.avg_us());
  c.NonNegative(f + ".max_us", p.max_us());
  c.Range(f + ".spread_pct", p.spread_pct(), 0, 100);
  c.OneOf(f + ".verdict", p.verdict(), kVerdicts);
  c.Range(f + ".half_gap_pct", p.half_gap_pct(), 0, 100);
  CheckCoreList(f + ".slowest_cores", p.slowest_cores(), c);
  CheckCoreList(f + ".fastest_cores", p.fastest_cores(), c);
}

void CheckBound(const v1::BoundDiagnosis& b, Checker& c) {
  c.OneOf("evidence.bound.label", b.label(), kPipeBounds);
  c.OneOf("evidence.bound.primary_core", b.primary_core(), kCoreTypes);
  c.OneOf("evidence.bound.routing_label", b.routing_label(), kRoutingLabels);
  if (c.Count("evidence.bound.triggered_families", b.triggered_families_size(), 3)) {
    for (int i = 0; i < b.triggered_families_size(); ++i) {
      c.OneOf(absl::StrCat("evidence.bound.triggered_families[", i, "]"), b.triggered_families(i),
              kFamilies);
    }
  }
  if (c.Count("evidence.bound.ratios", b.ratios_size(), kMaxMetricFields)) {
    for (const auto& [name, value] : b.ratios()) {
      const std::string f = Key("evidence.bound.ratios", name);
      c.Line(f, name, kMaxMetricFieldNameBytes);
      c.Range(f, value, 0, 1);
    }
  }
  c.Texts("evidence.bound.caveats", b.caveats(), kMaxEvidenceTextBytes, false);
}

void CheckDvfsAndGolden(const v1::Evidence& e, Checker& c) {
  const v1::DvfsCheck& d = e.dvfs();
  c.OneOf("evidence.dvfs.status", d.status(), kDvfsStatuses);
  c.NonNegative("evidence.dvfs.observed_mhz", d.observed_mhz());
  c.NonNegative("evidence.dvfs.rated_mhz", d.rated_mhz());
  c.Finite("evidence.dvfs.deviation_pct", d.deviation_pct());
  c.NonNegative("evidence.dvfs.tolerance_pct", d.tolerance_pct());
  c.OneOf("evidence.dvfs.source", d.source(), kClockSources);
  const v1::GoldenRatio& g = e.golden();
  c.Line("evidence.golden.status", g.status(), kMaxEvidenceFieldBytes);
  if (!g.status().empty() && g.status() != "joined" && g.status() != "not_provided" &&
      !absl::StartsWith(g.status(), "mismatch")) {
    c.Add("evidence.golden.status", "is not a known value");
  }
  c.NonNegative("evidence.golden.golden_us", g.golden_us());
  c.NonNegative("evidence.golden.kernel_us", g.kernel_us());
  c.NonNegative("evidence.golden.ratio", g.ratio());
  c.OneOf("evidence.golden.label", g.label(), {"golden_reference_ratio"});
}

void CheckFingerprint(const v1::Fingerprint& p, Checker& c) {
  const std::string f = "evidence.fingerprint.";
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"soc", &p.soc()},
                                    {"host", &p.host()},
                                    {"cann_version", &p.cann_version()},
                                    {"msprof_version", &p.msprof_version()},
                                    {"driver_version", &p.driver_version()},
                                    {"bundle_sha256", &p.bundle_sha256()},
                                    {"case_shape", &p.case_shape()},
                                    {"case_dtype", &p.case_dtype()},
                                    {"agent_version", &p.agent_version()}}) {
    c.Line(f + name, *value, kMaxEvidenceFieldBytes);
  }
  c.Texts(f + "argv", p.argv(), kMaxEvidenceTextBytes, false);
  c.Range(f + "device_id", p.device_id(), -1, kMaxDeviceId);
  c.NonNegative(f + "warm_up", p.warm_up());
  c.NonNegative(f + "repeats", p.repeats());
  c.OneOf(f + "clock_state", p.clock_state(), kClockStates);
  c.OneOf(f + "mode", p.mode(), kModes);
}

void CheckNotes(const v1::Evidence& e, Checker& c) {
  if (c.Count("evidence.errors", e.errors_size(), kMaxEvidenceListItems)) {
    for (int i = 0; i < e.errors_size(); ++i) {
      const std::string f = absl::StrCat("evidence.errors[", i, "]");
      const std::string& code = e.errors(i).code();
      if (code.empty() || code.size() > 64 ||
          code.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos) {
        c.Add(f + ".code", "must be 1..64 of [A-Z0-9_]");
      }
      c.Text(f + ".message", e.errors(i).message(), kMaxEvidenceTextBytes);
    }
  }
  c.Texts("evidence.warnings", e.warnings(), kMaxEvidenceTextBytes, false);
  c.Text("evidence.evidence_json", e.evidence_json(), kMaxEvidenceJsonBytes);
  c.Text("evidence.summary_text", e.summary_text(), kMaxSummaryBytes);
  c.Text("evidence.summary_markdown", e.summary_markdown(), kMaxSummaryBytes);
}

// A finding names a rule of the library's table and repeats that rule's
// severity, comparison, threshold and unit exactly.
void CheckFinding(const std::string& f, const v1::Finding& x, Checker& c) {
  const evidence::FindingRule* rule = evidence::FindRule(x.rule_id());
  if (rule == nullptr) {
    c.Add(f + ".rule_id", "is not a rule of the findings table");
  } else {
    if (x.severity() != evidence::Name(rule->severity)) c.Add(f + ".severity", "is not the rule's");
    if (x.comparison() != evidence::Name(rule->comparison)) {
      c.Add(f + ".comparison", "is not the rule's");
    }
    if (x.threshold() != rule->threshold) c.Add(f + ".threshold", "is not the rule's");
    if (x.unit() != rule->unit) c.Add(f + ".unit", "is not the rule's");
  }
  c.Line(f + ".field", x.field(), kMaxMetricFieldNameBytes);
  c.Finite(f + ".value", x.value());
  c.Text(f + ".message", x.message(), kMaxEvidenceTextBytes);
  c.Text(f + ".caveat", x.caveat(), kMaxEvidenceTextBytes);
}

void CheckFindings(const v1::Evidence& e, Checker& c) {
  if (c.Count("evidence.findings", e.findings_size(), kMaxEvidenceListItems)) {
    for (int i = 0; i < e.findings_size(); ++i) {
      CheckFinding(absl::StrCat("evidence.findings[", i, "]"), e.findings(i), c);
    }
  }
  if (c.Count("evidence.findings_not_applied", e.findings_not_applied_size(),
              kMaxEvidenceListItems)) {
    for (int i = 0; i < e.findings_not_applied_size(); ++i) {
      const std::string f = absl::StrCat("evidence.findings_not_applied[", i, "]");
      if (evidence::FindRule(e.findings_not_applied(i).rule_id()) == nullptr) {
        c.Add(f + ".rule_id", "is not a rule of the findings table");
      }
      c.Text(f + ".note", e.findings_not_applied(i).note(), kMaxEvidenceTextBytes);
    }
  }
}

// A timeline's evidence (Evidence.timeline): its statuses are the library's,
// its counts non-negative, and it carries no durations or metrics, which
// instruction profiling perturbs (they never stand beside a formal round's).
void CheckTimeline(const v1::Evidence& e, Checker& c) {
  if (!e.has_timeline()) {
    if (e.fingerprint().mode() == "timeline")
      c.Add("evidence.timeline", "is required in mode timeline");
    return;
  }
  const v1::TimelineSummary& t = e.timeline();
  const std::string f = "evidence.timeline.";
  if (t.attribution_status().empty()) c.Add(f + "attribution_status", "is required");
  c.OneOf(f + "attribution_status", t.attribution_status(), kAttributionStatuses);
  if (t.pipeline_evidence_status().empty()) c.Add(f + "pipeline_evidence_status", "is required");
  c.OneOf(f + "pipeline_evidence_status", t.pipeline_evidence_status(), kTimelinePipelineStatuses);
  if (t.pipeline_evidence_status() == "requires_tile_dag_correlation" &&
      t.attribution_status() != "unique_exact_target_window") {
    c.Add(f + "pipeline_evidence_status", "needs a unique target window");
  }
  for (const auto& [name, v] :
       {std::pair<const char*, int64_t>{"target_start_ns", t.target_start_ns()},
        {"target_duration_ns", t.target_duration_ns()},
        {"monitored_lanes", t.monitored_lanes()},
        {"events_in_window", t.events_in_window()},
        {"raw_event_pairs", t.raw_event_pairs()},
        {"overlap_ns", t.overlap_ns()},
        {"trace_bytes", t.trace_bytes()}}) {
    if (v < 0) c.Add(f + name, absl::StrCat("is ", v, "; must be >= 0"));
  }
  // The overlap is counted per lane inside the window.
  if (t.overlap_ns() > 0 &&
      (t.monitored_lanes() <= 0 || t.overlap_ns() / t.monitored_lanes() > t.target_duration_ns())) {
    c.Add(f + "overlap_ns", "exceeds the target window on every monitored lane");
  }
  if (t.biu_rows() < -1) c.Add(f + "biu_rows", "must be >= -1 (-1: absent)");
  if (t.ascend_task_rows() < -1) c.Add(f + "ascend_task_rows", "must be >= -1 (-1: absent)");
  if (c.Count(f + "pipe_event_counts", t.pipe_event_counts_size(),
              static_cast<int>(std::size(kPipeClasses)))) {
    for (const auto& [name, n] : t.pipe_event_counts()) {
      c.OneOf(Key(f + "pipe_event_counts", name), name, kPipeClasses);
      if (n < 0) c.Add(Key(f + "pipe_event_counts", name), "must be >= 0");
    }
  }
  c.Texts(f + "limitations", t.limitations(), kMaxEvidenceTextBytes, false);
  if (e.duration().samples_us_size() > 0 || e.metrics_size() > 0 || e.task_duration_us() > 0) {
    c.Add("evidence.duration", "absent on a timeline: instruction profiling perturbs durations");
  }
  if (e.fingerprint().mode() != "timeline") c.Add("evidence.fingerprint.mode", "must be timeline");
}

}  // namespace

std::vector<FieldViolation> ValidateEvidence(const v1::Evidence& e) {
  Checker c;
  const size_t bytes = e.ByteSizeLong();
  if (bytes > kMaxEvidenceBytes) {
    c.Add("evidence", absl::StrCat(bytes, " bytes serialized; at most ", kMaxEvidenceBytes));
  }
  CheckIdentity(e, c);
  CheckDuration(e.duration(), c);
  CheckLaunch(e.launch(), c);
  CheckMetrics(e, c);
  CheckPerCore("evidence.per_core", e.per_core(), c);
  CheckPerCore("evidence.per_core_secondary", e.per_core_secondary(), c);
  CheckBound(e.bound(), c);
  CheckDvfsAndGolden(e, c);
  CheckFingerprint(e.fingerprint(), c);
  CheckNotes(e, c);
  CheckFindings(e, c);
  CheckTimeline(e, c);
  return std::move(c.out);
}

std::string EvidenceRejection(const std::vector<FieldViolation>& violations) {
  const FieldViolation& first = violations.front();
  std::string field = first.field;
  if (absl::StartsWith(field, "evidence.")) field = field.substr(9);
  std::string reason = absl::StrCat("evidence rejected: ", field, " ", first.description);
  if (violations.size() > 1) absl::StrAppend(&reason, " (and ", violations.size() - 1, " more)");
  return reason;
}

}  // namespace npuperf::server
