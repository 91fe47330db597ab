// The collection page (report.h RenderCollectionPage).
#include <algorithm>
#include <map>

#include "report/html.h"
#include "report/page_util.h"
#include "report/report.h"
#include "report/svg.h"

namespace npuperf::report {
namespace {

using CaseKey = std::pair<std::string, std::string>;  // operator, case

// The most rounds a sparkline draws: the newest.
constexpr size_t kSparklineRounds = 60;

std::string StateText(v1::JobState s) {
  std::string n = v1::JobState_Name(s);
  return n.rfind("JOB_STATE_", 0) == 0 ? n.substr(10) : n;
}

// Each case's rounds in id order.
std::map<CaseKey, std::vector<const v1::Round*>> ByCase(const std::vector<v1::Round>& history) {
  std::map<CaseKey, std::vector<const v1::Round*>> out;
  for (const v1::Round& r : history) out[{r.operator_name(), r.case_id()}].push_back(&r);
  for (auto& [key, rounds] : out) {
    std::sort(rounds.begin(), rounds.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
    rounds.erase(std::unique(rounds.begin(), rounds.end(),
                             [](auto* a, auto* b) { return a->id() == b->id(); }),
                 rounds.end());
  }
  return out;
}

Cell HistoryCell(const std::vector<const v1::Round*>* rounds, int64_t round_id) {
  if (rounds == nullptr || rounds->empty()) return Cell("no history", "muted");
  std::vector<double> values;
  int highlight = -1;
  const size_t first = rounds->size() > kSparklineRounds ? rounds->size() - kSparklineRounds : 0;
  for (size_t i = first; i < rounds->size(); ++i) {
    const v1::Round* r = (*rounds)[i];
    if (r->id() == round_id) highlight = static_cast<int>(values.size());
    values.push_back(r->evidence().duration().aggregate_us());
  }
  return RawCell(Sparkline(values, highlight) + "<span class=\"note\">" +
                     std::to_string(values.size()) + " rounds</span>",
                 "history");
}

}  // namespace

std::string RenderCollectionPage(const v1::Collection& col, const std::vector<v1::Round>& history) {
  const auto cases = ByCase(history);
  std::vector<std::vector<Cell>> rows;
  for (const v1::Job& j : col.jobs()) {
    const auto it = cases.find({j.operator_name(), j.case_id()});
    const std::string state = StateText(j.state());
    rows.push_back({j.operator_name() + (j.case_id().empty() ? "" : "/" + j.case_id()),
                    Cell(state, "state state-" + ClassName(state) +
                                    (j.state() == v1::JOB_STATE_FAILED ? " critical" : "")),
                    Cell(j.round_id() > 0 ? std::to_string(j.round_id()) : "-", "num"),
                    Cell(j.round_id() > 0 ? Num(j.kernel_time_us(), 3) : "-", "num"),
                    j.bound_label().empty() ? "-" : j.bound_label(),
                    HistoryCell(it == cases.end() ? nullptr : &it->second, j.round_id()),
                    Cell(j.reason(), "note")});
  }
  const auto& n = col.counts();
  std::string body =
      Para(std::to_string(n.total()) + " jobs: " + std::to_string(n.succeeded()) + " succeeded, " +
               std::to_string(n.failed()) + " failed, " + std::to_string(n.cancelled()) +
               " cancelled, " + std::to_string(n.queued() + n.leased() + n.running()) + " pending",
           "summary");
  if (!col.spec().description().empty()) body += Para(col.spec().description());
  body += Section("cases", "Cases",
                  rows.empty() ? Para("no jobs")
                               : Table("cases",
                                       {"operator/case", "state", "round", "kernel us", "bound",
                                        "history (kernel us by round)", "reason"},
                                       rows));
  body += Para(
      "each sparkline is the case's kernel time over its rounds in id order; the red dot "
      "is this collection's round.",
      "note");
  std::string state = v1::CollectionState_Name(col.state());
  if (state.rfind("COLLECTION_STATE_", 0) == 0) state = state.substr(17);
  std::string sub =
      "team " + col.team() + " · " + state + " · created " + internal::Time(col.created_at());
  if (!col.spec().labels().empty()) sub += " · labels " + internal::LabelsText(col.spec().labels());
  return Page("collection", "collection " + col.id(), sub, body);
}

}  // namespace npuperf::report
