// The comparison page (report.h RenderComparisonPage).
#include "report/html.h"
#include "report/page_util.h"
#include "report/report.h"
#include "report/roofline_chart.h"
#include "report/svg.h"

namespace npuperf::report {
namespace {

std::string CaseName(const v1::RoundComparison& c) {
  return c.case_id().empty() ? c.operator_name() : c.operator_name() + "/" + c.case_id();
}

std::string VerdictCss(v1::Verdict v) { return "v-" + ClassName(VerdictText(v)); }

std::string RatioCell(const v1::DurationComparison& d) {
  std::string s = Num(d.ratio(), 3);
  if (d.ratio_ci_low() > 0 && d.ratio_ci_high() > 0) {
    s += " [" + Num(d.ratio_ci_low(), 3) + ", " + Num(d.ratio_ci_high(), 3) + "]";
  }
  return s;
}

std::string VerdictTable(const ComparisonPage& p) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& c : p.comparisons) {
    const auto& d = c.duration();
    std::string flags;
    for (const auto& f : c.flags()) flags += "<span class=\"flag\">" + Escape(f) + "</span>";
    rows.push_back(
        {CaseName(c), Cell(VerdictText(c.verdict()), "verdict " + VerdictCss(c.verdict())),
         Cell(
             std::to_string(c.baseline_round_id()) + " → " + std::to_string(c.candidate_round_id()),
             "num"),
         Cell(Num(d.baseline_us(), 3), "num"), Cell(Num(d.candidate_us(), 3), "num"),
         Cell(RatioCell(d), "num"), Cell(d.p_value() > 0 ? Num(d.p_value(), 4) : "-", "num"),
         c.rule(), RawCell(flags)});
  }
  if (rows.empty()) return Para("no case to show");
  return Table("verdicts",
               {"operator/case", "verdict", "rounds", "baseline us", "candidate us", "ratio [CI]",
                "p", "rule", "flags"},
               rows);
}

std::string Forest(const ComparisonPage& p) {
  std::vector<ForestRow> rows;
  for (const auto& c : p.comparisons) {
    const auto& d = c.duration();
    if (d.ratio() <= 0) continue;
    rows.push_back(
        {CaseName(c), d.ratio(), d.ratio_ci_low(), d.ratio_ci_high(), VerdictCss(c.verdict())});
  }
  if (rows.empty()) return Section("forest", "Duration ratios", Para("no ratio to plot"));
  return Section(
      "forest", "Duration ratios (candidate / baseline, below 1 is faster)",
      ForestPlot(rows) + Para("dots are the ratio of the aggregates, lines the Hodges-Lehmann "
                              "interval where the samples allow one.",
                              "note"));
}

std::string Changes(const ComparisonPage& p) {
  std::vector<std::vector<Cell>> rows;
  const auto side = [](const std::string& a, const std::string& b, bool changed) {
    return Cell((a.empty() ? "-" : a) + " → " + (b.empty() ? "-" : b),
                changed ? "changed warning" : "");
  };
  for (const auto& c : p.comparisons) {
    rows.push_back(
        {CaseName(c), side(c.baseline_bound(), c.candidate_bound(), c.bound_changed()),
         side(c.baseline_balance(), c.candidate_balance(), c.balance_changed()),
         side(c.baseline_dvfs(), c.candidate_dvfs(), c.baseline_dvfs() != c.candidate_dvfs())});
  }
  if (rows.empty()) return "";
  return Section("changes", "Bound route, per-core and DVFS",
                 Table("changes", {"operator/case", "bound", "per-core balance", "DVFS"}, rows));
}

std::string FindingChanges(const ComparisonPage& p) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& c : p.comparisons) {
    for (const auto& fc : c.finding_changes()) {
      const auto& f = fc.finding();
      rows.push_back({CaseName(c), Cell(fc.change(), "change-" + ClassName(fc.change())),
                      Cell(f.severity(), "s-" + ClassName(f.severity())), f.rule_id(), f.field(),
                      Cell(Num(f.value(), 2) + " " + f.unit(), "num"), f.message()});
    }
  }
  std::string body =
      rows.empty()
          ? Para("no finding appeared or disappeared")
          : Table("finding-changes",
                  {"operator/case", "change", "severity", "rule", "field", "value", "meaning"},
                  rows);
  return Section("finding-changes", "Finding changes", body);
}

std::string Details(const ComparisonPage& p) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& c : p.comparisons) {
    for (const auto& m : c.metric_deltas()) {
      if (!m.notable()) continue;
      rows.push_back({CaseName(c), m.group(), m.field(), Cell(Num(m.baseline(), 4), "num"),
                      Cell(Num(m.candidate(), 4), "num"), Cell(Num(m.delta(), 4), "num")});
    }
    for (const auto& f : c.fingerprint_differences()) {
      rows.push_back(
          {CaseName(c), "fingerprint", f.field(), f.baseline(), f.candidate(),
           Cell(f.blocking() ? "blocking" : "informative", f.blocking() ? "critical" : "")});
    }
  }
  if (rows.empty()) return "";
  return Section(
      "details", "Notable metric and fingerprint changes",
      Table("deltas", {"operator/case", "group", "field", "baseline", "candidate", "delta"}, rows));
}

}  // namespace

std::string VerdictText(v1::Verdict v) {
  std::string s = v1::Verdict_Name(v);
  return s.rfind("VERDICT_", 0) == 0 ? s.substr(8) : s;
}

std::string RenderComparisonPage(const ComparisonPage& p) {
  std::string body = Para(p.summary, "summary");
  if (p.geomean_ratio > 0) {
    body +=
        Para("geomean duration ratio " + Num(p.geomean_ratio, 3) + " over " +
                 std::to_string(p.counts.comparable()) + " comparable cases (below 1 is faster)",
             "summary");
  }
  body += Section("verdicts", "Verdicts", VerdictTable(p));
  body += Forest(p) + Changes(p) +
          internal::RooflineComparison(p.baseline_evidence_json, p.candidate_evidence_json) +
          FindingChanges(p) + Details(p);
  if (!p.unmatched.empty()) {
    std::vector<std::vector<Cell>> rows;
    for (const auto& u : p.unmatched) rows.push_back({u});
    body += Section("unmatched", "Present on one side only",
                    Table("unmatched", {"operator/case"}, rows));
  }
  return Page("comparison", p.title, "comparison of rounds", body);
}

}  // namespace npuperf::report
