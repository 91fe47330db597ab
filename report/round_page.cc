// The round page (report.h RenderRoundPage).
#include <algorithm>
#include <map>
#include <set>

#include "evidence/bound.h"
#include "evidence/derived.h"
#include "evidence/findings.h"
#include "evidence/per_core.h"
#include "report/html.h"
#include "report/page_util.h"
#include "report/report.h"
#include "report/roofline_chart.h"
#include "report/svg.h"

namespace npuperf::report {
namespace {

using internal::RuleClass;

const v1::MetricGroup* Group(const v1::Evidence& e, std::string_view name) {
  for (const auto& g : e.metrics()) {
    if (g.group() == name) return &g;
  }
  return nullptr;
}

std::map<std::string, double> Sorted(const v1::MetricGroup& g) {
  return {g.fields().begin(), g.fields().end()};
}

std::string KernelTime(const v1::Evidence& e) {
  const auto& d = e.duration();
  const std::vector<double> samples(d.samples_us().begin(), d.samples_us().end());
  std::string range = "-";
  if (!samples.empty()) {
    const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    range = Num(*lo, 3) + " .. " + Num(*hi, 3);
  }
  std::string method = v1::AggregationMethod_Name(d.method());
  if (method.rfind("AGGREGATION_METHOD_", 0) == 0) method = method.substr(19);
  std::string out =
      Table("kv", {"kernel time (us)", "method", "samples", "sample range (us)", "source"},
            {{Cell(Num(d.aggregate_us(), 3), "num kernel-us"), method,
              Cell(std::to_string(samples.size()), "num"), Cell(range, "num"), d.source()}});
  if (!samples.empty()) out += SampleStrip(samples, d.aggregate_us());
  out +=
      Table("kv", {"Task Duration (us)", "aicore_time (us)", "aiv_time (us)", "head overhead (us)"},
            {{Cell(Num(e.task_duration_us(), 3), "num"), Cell(Num(e.aicore_time_us(), 3), "num"),
              Cell(Num(e.aiv_time_us(), 3), "num"), Cell(Num(e.head_overhead_us(), 3), "num")}});
  return Section("kernel-time", "Kernel time", out);
}

std::string Bound(const v1::Evidence& e) {
  const auto& b = e.bound();
  std::string families;
  for (const auto& f : b.triggered_families()) families += (families.empty() ? "" : ", ") + f;
  std::string out =
      Table("kv bound", {"bound label", "primary core", "routing label", "triggered families"},
            {{Cell(b.label(), "bound-label"), b.primary_core(),
              Cell(b.routing_label(), "routing-label"), families.empty() ? "-" : families}});
  for (const auto& c : b.caveats()) out += Para(c, "note");
  return Section("bound", "Bound and routing", out);
}

// Pipe ratios by core type: "aic_"/"aiv_" prefixes, unprefixed (310P) as AIC.
std::string PipeRatios(const v1::Evidence& e) {
  std::map<std::string, std::vector<Bar>> by_core;
  const v1::MetricGroup* pipe = Group(e, "PipeUtilization");
  const std::map<std::string, double> fields =
      pipe != nullptr
          ? Sorted(*pipe)
          : std::map<std::string, double>(e.bound().ratios().begin(), e.bound().ratios().end());
  for (const auto& [name, v] : fields) {
    if (name.size() < 6 || name.substr(name.size() - 6) != "_ratio") continue;
    const std::string core = name.rfind("aiv_", 0) == 0 ? "AIV" : "AIC";
    by_core[core].push_back({name, v});
  }
  const std::vector<RuleLine> rules = {
      {evidence::kBoundMax, "rule-max", Num(100 * evidence::kBoundMax, 0) + " % (largest)"},
      {evidence::kBoundHigh, "rule-high", Num(100 * evidence::kBoundHigh, 0) + " %"}};
  std::string out;
  for (const auto& [core, bars] : by_core) {
    out += "<h3>" + Escape(core) + "</h3>\n" + RatioBars("pipe-" + ClassName(core), bars, rules);
  }
  if (out.empty()) out = Para("no pipe ratios in this capture (PipeUtilization not collected)");
  out += Para(
      "A pipe above 80 % routes the bound; MTE2 or CUBE holding the largest share above "
      "70 % does too (evidence/bound.h).",
      "note");
  return Section("pipe-ratios", "Pipe ratios per core type", out);
}

std::string CoreMark(const v1::PerCore& p, int id) {
  if (std::count(p.slowest_cores().begin(), p.slowest_cores().end(), id) > 0) return "slowest";
  if (std::count(p.fastest_cores().begin(), p.fastest_cores().end(), id) > 0) return "fastest";
  return "";
}

std::string VerdictClass(const std::string& verdict) {
  if (verdict == "PASS") return "good";
  if (verdict == "WARNING") return "warning";
  return verdict == "CRITICAL" ? "critical" : "";
}

std::string PerCoreBlock(const v1::PerCore& p) {
  std::string out = "<h3>" + Escape(p.core_type().empty() ? "per-core" : p.core_type()) + "</h3>\n";
  if (p.cores_size() == 0) return out + Para("not available: " + p.status(), "note");
  std::vector<CoreBar> cores;
  for (const auto& c : p.cores())
    cores.push_back({c.core_id(), c.time_us(), CoreMark(p, c.core_id())});
  const bool hint = p.cores_size() >= 4 && p.half_gap_pct() >= evidence::kHalfGapHintPct;
  out += BalanceChart(cores, p.avg_us(), hint);
  auto ids = [](const auto& v) {
    std::string s;
    for (int id : v) s += (s.empty() ? "" : ", ") + std::to_string(id);
    return s.empty() ? std::string("-") : s;
  };
  out += Table("kv per-core",
               {"verdict", "spread %", "min / avg / max (us)", "half gap %", "clock (GHz)",
                "slowest cores", "fastest cores", "device"},
               {{Cell(p.verdict(), "verdict-cell " + VerdictClass(p.verdict())),
                 Cell(Num(p.spread_pct(), 2), "num"),
                 Num(p.min_us(), 3) + " / " + Num(p.avg_us(), 3) + " / " + Num(p.max_us(), 3),
                 Cell(Num(p.half_gap_pct(), 2), hint ? "num hint" : "num"),
                 Cell(Num(p.freq_ghz(), 3), "num"), Cell(ids(p.slowest_cores()), "slowest-ids"),
                 Cell(ids(p.fastest_cores()), "fastest-ids"), std::to_string(p.device_id())}});
  if (hint) {
    out += Para("two-cluster hint: the front and back halves of the cores differ by " +
                    Num(p.half_gap_pct(), 2) + " % (>= " + Num(evidence::kHalfGapHintPct, 0) +
                    " %): NUMA or L2-slice skew?",
                "hint two-cluster");
  }
  return out + Para("status: " + p.status(), "note");
}

std::string PerCore(const v1::Evidence& e) {
  std::string out = PerCoreBlock(e.per_core());
  if (e.has_per_core_secondary() && !e.per_core_secondary().core_type().empty()) {
    out += PerCoreBlock(e.per_core_secondary());
  }
  out += Para("spread >= " + Num(evidence::kSpreadWarningPct, 0) +
                  " % is WARNING, >= " + Num(evidence::kSpreadCriticalPct, 0) +
                  " % CRITICAL; red bars are the slowest cores, green the fastest.",
              "note");
  return Section("per-core", "Per-core balance", out);
}

}  // namespace

std::string RenderRoundPage(const v1::Round& r) {
  const v1::Evidence& e = r.evidence();
  const std::string title = "round " + std::to_string(r.id()) + ": " + r.operator_name() +
                            (r.case_id().empty() ? "" : "/" + r.case_id());
  std::string sub = "kernel " + e.op_name() + " · team " + r.team() + " · collection " +
                    r.collection_id() + " · job " + std::to_string(r.job_id()) + " · " +
                    internal::Time(r.created_at());
  if (!r.labels().empty()) sub += " · labels " + internal::LabelsText(r.labels());
  if (e.has_timeline()) {  // a supplemental instruction profile: no durations of its own
    const v1::TimelineSummary& t = e.timeline();
    std::string facts =
        Para("instruction timeline of round " + std::to_string(t.anchor_round_id()) +
                 " (--instr-profiling=on perturbs durations: the formal round's "
                 "stand; pipeline overlap needs a Tile-DAG attestation to be "
                 "proven)",
             "note");
    facts += Para(std::string("round ") + std::to_string(t.anchor_round_id()) +
                      " may be closed: " + (t.completion_eligible() ? "yes" : "no") +
                      " · roofline " + t.roofline_terminal_status() + " · pipeline overlap " +
                      t.pipeline_overlap_status() +
                      (t.tile_dag_attestation_sha256().empty()
                           ? " · no Tile-DAG attestation"
                           : " · attestation sha256 " + t.tile_dag_attestation_sha256()),
                  t.completion_eligible() ? "" : "note");
    for (const std::string& b : t.completion_blockers()) facts += Para("blocked: " + b, "note");
    return Page("round", title + " (timeline)", sub,
                Section("timeline-facts", "Timeline", facts) +
                    internal::TimelineSection(nlohmann::json::parse(e.evidence_json(), nullptr,
                                                                    /*allow_exceptions=*/false)));
  }
  std::string body = KernelTime(e) + Bound(e) + internal::RooflineSection(e) + PipeRatios(e) +
                     PerCore(e) + internal::MemoryTables(e) + internal::DvfsAndFindings(e);
  return Page("round", title, sub, body);
}

}  // namespace npuperf::report
