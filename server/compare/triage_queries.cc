#include "server/compare/triage_queries.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/input_rules.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/limits.h"
#include "server/core/triage_rules.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// A state a request names: a known value other than UNSPECIFIED.
bool IsKnownState(int s) {
  return v1::RegressionState_IsValid(s) && s != v1::REGRESSION_STATE_UNSPECIFIED;
}

// Whether the round carries the label key=value.
bool Carries(const v1::Round& r, const std::string& label) {
  const size_t eq = label.find('=');
  if (eq == std::string::npos) return false;
  auto it = r.labels().find(label.substr(0, eq));
  return it != r.labels().end() && it->second == label.substr(eq + 1);
}

}  // namespace

v1::Regression RegressionToProto(const RegressionRecord& r) {
  v1::Regression out;
  out.set_id(r.id);
  out.set_operator_name(r.key.operator_name);
  out.set_case_id(r.key.case_id);
  out.set_baseline_label(r.key.baseline_label);
  out.set_rule(r.key.rule);
  out.set_state(r.state);
  if (r.id == 0) return out;
  *out.mutable_detected_at() = TimeUtil::MillisecondsToTimestamp(r.detected_ms);
  *out.mutable_last_seen_at() = TimeUtil::MillisecondsToTimestamp(r.last_seen_ms);
  out.set_first_round_id(r.first_round_id);
  out.set_last_round_id(r.last_round_id);
  out.set_seen_rounds(r.seen_rounds);
  if (r.ended_ms > 0) *out.mutable_ended_at() = TimeUtil::MillisecondsToTimestamp(r.ended_ms);
  return out;
}

TriageQueries::TriageQueries(Store& store, Clock& clock) : store_(store), clock_(clock) {}

absl::StatusOr<v1::TriageRegressionResponse> TriageQueries::TriageRegression(
    const std::string& team, const v1::TriageRegressionRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.id() <= 0) bad.push_back({"id", "must be a regression id (at least 1)"});
  if (!IsKnownState(req.expected_state())) {
    bad.push_back({"expected_state", "must be the regression's current state"});
  }
  if (!IsKnownState(req.new_state()) || req.new_state() == v1::REGRESSION_STATE_DETECTED) {
    bad.push_back({"new_state", "must be ACKNOWLEDGED, FIXED, WONT_FIX or FALSE_POSITIVE"});
  }
  if (std::string why = NoteProblem(req.note(), kMaxTriageNoteBytes); !why.empty())
    bad.push_back({"note", why});
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  RegressionTriage t;
  t.team = team;
  t.id = req.id();
  t.expected = req.expected_state();
  t.next = req.new_state();
  t.note = req.note();
  t.now_ms = ToUnixMillis(clock_.SystemNow());
  auto r = store_.TriageRegression(t);
  if (!r.ok()) return r.status();
  v1::TriageRegressionResponse resp;
  *resp.mutable_regression() = RegressionToProto(*r);
  return resp;
}

absl::StatusOr<v1::GetRegressionResponse> TriageQueries::GetRegression(
    const std::string& team, const v1::GetRegressionRequest& req) {
  if (req.id() <= 0) {
    return InvalidArgumentWithFields({{"id", "must be a regression id (at least 1)"}});
  }
  auto d = store_.GetRegression(team, req.id());
  if (!d.ok()) return d.status();
  v1::GetRegressionResponse resp;
  *resp.mutable_regression() = RegressionToProto(d->regression);
  for (const RegressionTransitionRecord& t : d->transitions) {
    v1::RegressionTransition* out = resp.add_transitions();
    out->set_from_state(t.from);
    out->set_to_state(t.to);
    out->set_actor(t.actor);
    out->set_note(t.note);
    *out->mutable_at() = TimeUtil::MillisecondsToTimestamp(t.at_ms);
  }
  return resp;
}

absl::Status TriageQueries::TrackListing(const std::string& team,
                                         const v1::ListRegressionsRequest& req,
                                         const std::vector<v1::Round>& candidates,
                                         v1::CompareCollectionsResponse& all,
                                         v1::ListRegressionsResponse* resp) {
  const std::string& label = req.baseline_label();
  std::set<int64_t> labelled;
  for (const v1::Round& r : candidates) {
    if (!label.empty() && Carries(r, label)) labelled.insert(r.id());
  }
  // Which comparison each observation is of (regressed ones are listed).
  std::vector<RegressionObservation> seen;
  std::vector<int> of;
  for (int i = 0; i < all.comparisons_size(); ++i) {
    const v1::RoundComparison& c = all.comparisons(i);
    const bool regressed = c.verdict() == v1::VERDICT_REGRESSED;
    const bool fine = c.verdict() == v1::VERDICT_STABLE || c.verdict() == v1::VERDICT_IMPROVED;
    if (labelled.count(c.candidate_round_id()) == 0 || (!regressed && !fine)) continue;
    seen.push_back({{team, c.operator_name(), c.case_id(), label, kDurationRule},
                    regressed,
                    c.candidate_round_id()});
    of.push_back(i);
  }
  std::map<int, RegressionRecord> tracked;
  if (!seen.empty()) {
    auto current = store_.ObserveRegressions(seen, ToUnixMillis(clock_.SystemNow()));
    if (!current.ok()) return current.status();
    for (size_t k = 0; k < seen.size(); ++k) {
      if (seen[k].regressed) tracked[of[k]] = (*current)[k];
    }
  }
  const bool track = !label.empty();
  for (int i = 0; i < all.comparisons_size(); ++i) {
    v1::RoundComparison& c = *all.mutable_comparisons(i);
    if (c.verdict() != v1::VERDICT_REGRESSED) continue;
    auto it = tracked.find(i);
    if (it != tracked.end() && HiddenByDefault(it->second.state) && !req.include_closed()) {
      resp->set_hidden_closed(resp->hidden_closed() + 1);
      continue;
    }
    *resp->add_regressions() = std::move(c);
    if (track) {
      *resp->add_tracked() = it != tracked.end() ? RegressionToProto(it->second) : v1::Regression();
    }
  }
  auto precision = Precision(team);
  if (!precision.ok()) return precision.status();
  for (auto& p : *precision) *resp->add_precision() = std::move(p);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::RegressionPrecision>> TriageQueries::Precision(
    const std::string& team) {
  auto counts = store_.CountRegressions(team);
  if (!counts.ok()) return counts.status();
  std::vector<v1::RegressionPrecision> out;
  for (const auto& [rule, n] : TriagedByRule(*counts)) {
    v1::RegressionPrecision p;
    p.set_rule(rule);
    p.set_confirmed(static_cast<int32_t>(n.confirmed));
    p.set_false_positives(static_cast<int32_t>(n.false_positives));
    p.set_precision(RulePrecision(n.confirmed, n.false_positives));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace npuperf::server
