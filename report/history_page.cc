// The operator history page (report.h RenderHistoryPage).
#include <algorithm>
#include <map>

#include "report/html.h"
#include "report/page_util.h"
#include "report/report.h"
#include "report/svg.h"

namespace npuperf::report {
namespace {

struct CaseRounds {
  std::vector<const v1::Round*> rounds;  // id order
  const v1::Round* baseline = nullptr;
};

std::map<std::string, CaseRounds> ByCase(const HistoryPage& p) {
  std::map<std::string, CaseRounds> out;
  for (const v1::Round& r : p.rounds) out[r.case_id()].rounds.push_back(&r);
  for (const v1::Round& b : p.baseline) {
    if (b.operator_name() == p.operator_name) out[b.case_id()].baseline = &b;
  }
  for (auto& [id, c] : out) {
    std::sort(c.rounds.begin(), c.rounds.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
  }
  return out;
}

std::string CaseSection(const std::string& case_id, const CaseRounds& c, const HistoryPage& p,
                        const std::map<int64_t, const v1::RoundComparison*>& verdicts) {
  std::vector<SeriesPoint> points;
  std::vector<std::vector<Cell>> rows;
  for (const v1::Round* r : c.rounds) {
    const double us = r->evidence().duration().aggregate_us();
    const auto v = verdicts.find(r->id());
    std::string css = "none", verdict = "-";
    if (c.baseline != nullptr && r->id() == c.baseline->id()) {
      css = "pinned", verdict = "baseline";
    } else if (v != verdicts.end()) {
      verdict = VerdictText(v->second->verdict());
      css = "v-" + ClassName(verdict);
    }
    const std::string labels = internal::LabelsText(r->labels());
    points.push_back({"r" + std::to_string(r->id()), us, css,
                      "round " + std::to_string(r->id()) + ": " + Num(us, 3) + " us, " + verdict +
                          (labels.empty() ? "" : " (" + labels + ")")});
    rows.push_back({Cell(std::to_string(r->id()), "num"), internal::Time(r->created_at()),
                    r->collection_id(), Cell(Num(us, 3), "num"), r->evidence().bound().label(),
                    Cell(verdict, "verdict " + (css == "none" ? std::string() : css)),
                    v == verdicts.end() ? "" : v->second->rule(), labels});
  }
  const double base_us =
      c.baseline == nullptr ? 0 : c.baseline->evidence().duration().aggregate_us();
  std::string body = SeriesChart(
      points, base_us, c.baseline == nullptr ? "" : p.baseline_name + " " + Num(base_us, 3) + " us",
      "us");
  body += Table(
      "history",
      {"round", "created", "collection", "kernel us", "bound", "verdict", "rule", "labels"}, rows);
  return Section("case-" + ClassName(case_id), case_id.empty() ? "(no case id)" : "case " + case_id,
                 body);
}

}  // namespace

std::string RenderHistoryPage(const HistoryPage& p) {
  std::map<int64_t, const v1::RoundComparison*> verdicts;
  for (const auto& v : p.verdicts) verdicts[v.candidate_round_id()] = &v;
  std::string body;
  for (const auto& [case_id, c] : ByCase(p)) {
    if (!c.rounds.empty()) body += CaseSection(case_id, c, p, verdicts);
  }
  if (body.empty()) body = Para("no rounds");
  body += Para(p.baseline.empty()
                   ? "markers: each round's verdict against its predecessor (grey stable, green "
                     "improved, red regressed, amber insufficient)."
                   : "the dashed green line is " + p.baseline_name +
                         "; markers: each round's verdict against it (grey stable, green improved, "
                         "red regressed, amber insufficient).",
               "note");
  return Page("history", "history of " + p.operator_name,
              std::to_string(p.rounds.size()) + " rounds", body);
}

}  // namespace npuperf::report
