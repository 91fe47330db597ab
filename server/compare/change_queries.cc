// ComparisonQueries::ListRounds (a page of rounds with the change points of
// each case's series) and the drifts of ListRegressions: both from
// change_points.h.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/util/time_util.h"
#include "server/compare/change_points.h"
#include "server/compare/comparison_queries.h"
#include "server/core/read_queries.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// Rounds of a case whose series is searched for a drift, and the most cases
// searched per ListRegressions (each one store read of kDriftWindowRounds).
constexpr int kDriftWindowRounds = 100;
constexpr int kMaxDriftCases = 200;

// One case's points, oldest first.
struct CaseSeries {
  std::vector<const v1::MetricPoint*> points;
  std::vector<double> values;
};

// The page's series split by the case of each point's round.
std::map<std::string, CaseSeries> SeriesByCase(const v1::ListRoundsResponse& page) {
  std::map<int64_t, const std::string*> case_of;
  for (const v1::Round& r : page.rounds()) case_of[r.id()] = &r.case_id();
  std::map<std::string, CaseSeries> out;
  for (const v1::MetricPoint& p : page.series()) {
    auto it = case_of.find(p.round_id());
    if (it == case_of.end()) continue;  // the page's rounds and series agree
    CaseSeries& s = out[*it->second];
    s.points.push_back(&p);
    s.values.push_back(p.value());
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::ListRoundsResponse> ComparisonQueries::ListRounds(
    const std::string& team, const v1::ListRoundsRequest& req) {
  absl::StatusOr<v1::ListRoundsResponse> page = ReadQueries(store_).ListRounds(team, req);
  if (!page.ok() || !req.changes()) return page;
  ChangePointOptions options;
  if (req.min_change_pct() > 0) options.min_change_pct = req.min_change_pct();
  for (auto& [case_id, series] : SeriesByCase(*page)) {
    for (const ChangePoint& c : FindChangePoints(series.values, options)) {
      const v1::MetricPoint& first = *series.points[static_cast<size_t>(c.index)];
      v1::SeriesChange* out = page->add_changes();
      out->set_case_id(case_id);
      out->set_round_id(first.round_id());
      *out->mutable_at() = first.at();
      out->set_before_median(c.before_median);
      out->set_after_median(c.after_median);
      out->set_change_pct(c.change_pct);
      out->set_p_value(c.p_value);
      out->set_points_before(c.points_before);
      out->set_points_after(c.points_after);
    }
  }
  return page;
}

absl::Status ComparisonQueries::AddDrifts(const std::string& team,
                                          const std::vector<v1::Round>& candidates,
                                          int64_t since_ms, const VerdictOptions& options,
                                          v1::ListRegressionsResponse* resp) {
  ChangePointOptions cp;
  cp.min_change_pct = options.duration_threshold_pct;
  int examined = 0;
  for (const v1::Round& c : candidates) {
    if (examined == kMaxDriftCases) {
      resp->set_drift_cases_unexamined(resp->drift_cases_unexamined() + 1);
      continue;
    }
    ++examined;
    RoundFilter f;
    f.team = team;
    f.operator_name = c.operator_name();
    f.case_id = c.case_id();
    f.metric = "duration";
    f.limit = kDriftWindowRounds;
    f.newest_first = true;
    absl::StatusOr<RoundPage> page = store_.ListRounds(f);
    if (!page.ok()) return page.status();
    std::vector<v1::MetricPoint>& series = page->series;
    std::sort(series.begin(), series.end(), [](const v1::MetricPoint& a, const v1::MetricPoint& b) {
      return a.round_id() < b.round_id();
    });
    std::vector<double> values;
    for (const v1::MetricPoint& p : series) values.push_back(p.value());
    std::vector<ChangePoint> changes = FindChangePoints(values, cp);
    if (changes.empty() || changes.back().change_pct <= 0) continue;  // slower only
    // A slow drift is a staircase of upward steps: it began at the first
    // step of the run of upward steps that ends at the newest level.
    size_t first = changes.size() - 1;
    while (first > 0 && changes[first - 1].change_pct > 0) --first;
    const ChangePoint& start = changes[first];
    const ChangePoint& last = changes.back();
    const v1::MetricPoint& began = series[static_cast<size_t>(start.index)];
    v1::Drift* d = resp->add_drifts();
    d->set_operator_name(c.operator_name());
    d->set_case_id(c.case_id());
    d->set_began_round_id(began.round_id());
    *d->mutable_began_at() = began.at();
    d->set_before_us(start.before_median);
    d->set_after_us(last.after_median);
    d->set_change_pct(
        start.before_median == 0 ? 0 : 100 * (last.after_median / start.before_median - 1));
    double p = 0;
    for (size_t i = first; i < changes.size(); ++i) p = std::max(p, changes[i].p_value);
    d->set_p_value(p);
    d->set_rounds_since(static_cast<int32_t>(values.size()) - start.index);
    d->set_began_in_window(TimeUtil::TimestampToMilliseconds(began.at()) >= since_ms);
  }
  auto* drifts = resp->mutable_drifts();
  std::stable_sort(drifts->begin(), drifts->end(), [](const v1::Drift& a, const v1::Drift& b) {
    return a.change_pct() > b.change_pct();
  });
  return absl::OkStatus();
}

}  // namespace npuperf::server
