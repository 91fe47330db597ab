// The implementation comparison and release report pages
// (report.h RenderImplementationPage, RenderReleasePage).
#include "absl/strings/str_cat.h"
#include "report/html.h"
#include "report/report.h"
#include "report/svg.h"

namespace npuperf::report {
namespace {

// A ratio, or "-" when the scope is absent.
std::string Ratio(double r, int decimals = 2) { return r > 0 ? Num(r, decimals) : "-"; }

std::string ScopeCell(const v1::ScopeComparison& s) {
  if (!(s.ratio() > 0)) return "-";
  std::string out = Num(s.ratio(), 3);
  if (s.ratio_ci_low() > 0 && s.ratio_ci_high() > 0) {
    absl::StrAppend(&out, " [", Num(s.ratio_ci_low(), 3), ", ", Num(s.ratio_ci_high(), 3), "]");
  }
  return out;
}

std::string VerdictCss(v1::Verdict v) { return "verdict v-" + ClassName(VerdictText(v)); }

std::string OperatorTable(const v1::CompareImplementationsResponse& r) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& op : r.operators()) {
    rows.push_back(
        {op.candidate_operator(), op.base_operator(), Cell(std::to_string(op.scenarios()), "num"),
         Cell(Ratio(op.core_ratio()), "num"), Cell(Ratio(op.task_duration_ratio()), "num"),
         Cell(std::to_string(op.not_compared()), "num")});
  }
  for (const auto* m : {&r.arithmetic_mean(), &r.geometric_mean()}) {
    rows.push_back({Cell(m->label(), "mean"), "-", "-", Cell(Ratio(m->core_ratio()), "num mean"),
                    Cell(Ratio(m->task_duration_ratio()), "num mean"), "-"});
  }
  return Table("implementations",
               {"operator", "base operator", "scenarios", "candidate/base core (swimlane)",
                "candidate/base Task Duration (profiling)", "not compared"},
               rows);
}

std::string Chart(const v1::CompareImplementationsResponse& r) {
  std::vector<PairedBar> bars;
  for (const auto& op : r.operators()) {
    bars.push_back({op.candidate_operator(), op.core_ratio(), op.task_duration_ratio()});
  }
  if (bars.empty()) return Para("no operator to plot");
  return PairedRatioBars("implementation-ratios", bars, "core (swimlane)",
                         "Task Duration (profiling)") +
         Para(
             "candidate/base ratio per operator (geometric mean over its cases); below 1 the "
             "candidate is faster.",
             "note");
}

std::string CaseTable(const v1::CompareImplementationsResponse& r) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& c : r.cases()) {
    if (c.status() != v1::IMPLEMENTATION_CASE_COMPARED) continue;
    const auto& t = c.task_duration();
    rows.push_back(
        {c.candidate_operator() + "/" + c.case_id(), c.base_operator(),
         Cell(Num(c.core().base_us(), 3) + " → " + Num(c.core().candidate_us(), 3), "num"),
         Cell(ScopeCell(c.core()), "num"),
         c.core().ratio() > 0
             ? Cell(VerdictText(c.core().verdict()), VerdictCss(c.core().verdict()))
             : Cell("-"),
         Cell(Num(t.base_us(), 3) + " → " + Num(t.candidate_us(), 3), "num"),
         Cell(ScopeCell(t), "num"), Cell(VerdictText(t.verdict()), VerdictCss(t.verdict())),
         t.rule()});
  }
  if (rows.empty()) return Para("no case was compared");
  return Table("impl-cases",
               {"operator/case", "base operator", "core us", "core ratio [CI]", "core verdict",
                "Task Duration us", "Task Duration ratio [CI]", "verdict", "rule"},
               rows);
}

std::string NotCompared(const v1::CompareImplementationsResponse& r) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& c : r.cases()) {
    if (c.status() == v1::IMPLEMENTATION_CASE_COMPARED) continue;
    rows.push_back({c.candidate_operator() + "/" + c.case_id(), c.base_operator(),
                    Cell(ImplementationStatusText(c.status()), "warning"), c.reason()});
  }
  for (const auto& u : r.unpaired()) {
    rows.push_back({u.operator_name(), u.side(), Cell("UNPAIRED", "warning"), u.reason()});
  }
  if (rows.empty()) return "";
  return Section(
      "not-compared", "Not compared",
      Table("not-compared", {"operator/case", "base operator / side", "status", "why"}, rows));
}

std::string ImplementationBody(const v1::CompareImplementationsResponse& r) {
  std::string body = Para("base " + r.base_collection_id() + ", candidate " +
                              r.candidate_collection_id() + ": " + std::to_string(r.pairs_size()) +
                              " operator pairs, ratios candidate/base (below 1 is faster)",
                          "summary");
  body += Section("impl-operators", "Operators", OperatorTable(r));
  body += Section("impl-chart", "Ratios per operator", Chart(r));
  body += Section("impl-cases", "Cases", CaseTable(r));
  return body + NotCompared(r);
}

std::string GroupTable(const v1::ReleaseReport& r) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& g : r.groups()) {
    rows.push_back({g.group(), Cell(std::to_string(g.operators()), "num"),
                    Cell(Num(100 * g.pass_rate(), 0) + " %",
                         g.passed() == g.operators() ? "num" : "num warning")});
  }
  rows.push_back({Cell("total", "mean"), Cell(std::to_string(r.total().operators()), "num mean"),
                  Cell(Num(100 * r.total().pass_rate(), 0) + " %", "num mean")});
  return Table("release-groups", {"model group", "operators", "pass rate"}, rows);
}

std::string Failures(const v1::ReleaseReport& r) {
  std::vector<std::vector<Cell>> rows;
  for (const auto& op : r.operators()) {
    for (const auto& f : op.failures()) rows.push_back({op.operator_name(), op.group(), f});
  }
  if (rows.empty()) return Para("every operator passed");
  return Table("release-failures", {"operator", "model group", "why it did not pass"}, rows);
}

}  // namespace

std::string ImplementationStatusText(v1::ImplementationCaseStatus s) {
  std::string n = v1::ImplementationCaseStatus_Name(s);
  const std::string prefix = "IMPLEMENTATION_CASE_";
  return n.rfind(prefix, 0) == 0 ? n.substr(prefix.size()) : n;
}

std::string RenderImplementationPage(const std::string& title,
                                     const v1::CompareImplementationsResponse& r) {
  return Page("implementations", title, "implementation comparison", ImplementationBody(r));
}

std::string RenderReleasePage(const std::string& title, const v1::ReleaseReport& r) {
  std::string body = Section("release-groups", "Operators and pass rate by model group",
                             GroupTable(r) + Failures(r));
  for (const auto& impl : r.implementations()) {
    body += Section("release-impl-" + ClassName(impl.candidate_collection_id()),
                    "Performance against " + impl.base_collection_id() + " (" +
                        impl.candidate_collection_id() + ")",
                    ImplementationBody(impl));
  }
  return Page("release", title, "release report", body);
}

}  // namespace npuperf::report
