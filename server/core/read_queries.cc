#include "server/core/read_queries.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/artifacts.h"
#include "server/core/assignment.h"
#include "server/core/health_rules.h"
#include "server/core/job_state.h"
#include "server/core/limits.h"
#include "server/core/request_rules.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

void CheckCollectionId(const std::string& id, const std::string& field,
                       std::vector<FieldViolation>& bad) {
  if (id.empty()) bad.push_back({field, "required"});
  CheckLength(id, kMaxCollectionIdBytes, field, bad);
}

absl::StatusOr<CollectionFilter> CollectionFilterOf(const std::string& team,
                                                    const v1::ListCollectionsRequest& req) {
  std::vector<FieldViolation> bad;
  CollectionFilter f;
  f.team = team;
  for (int i = 0; i < req.states_size(); ++i) {
    const int st = req.states(i);
    if (!v1::CollectionState_IsValid(st) || st == v1::COLLECTION_STATE_UNSPECIFIED) {
      bad.push_back({absl::StrCat("states[", i, "]"), absl::StrCat("unknown state ", st)});
    }
    f.states.push_back(static_cast<v1::CollectionState>(st));
  }
  if (req.states_size() > 16) bad.push_back({"states", "at most 16 states"});
  CheckLabelFilter(req.labels(), "labels", bad);
  f.labels = {req.labels().begin(), req.labels().end()};
  if (req.page_size() < 0 || req.page_size() > kMaxCollectionsPage) {
    bad.push_back({"page_size", absl::StrCat("must be in 0..", kMaxCollectionsPage)});
  }
  f.limit = req.page_size() == 0 ? kDefaultCollectionsPage : req.page_size();
  if (!req.page_token().empty()) {
    auto cursor = ParseCollectionToken(req.page_token(), "page_token");
    if (cursor.ok()) {
      f.before_created_ms = cursor->created_ms;
      f.before_id = cursor->id;
    } else {
      bad.push_back({"page_token", "malformed page token; pass the one a response gave"});
    }
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  return f;
}

void CheckRoundRequest(const v1::ListRoundsRequest& req, std::vector<FieldViolation>& bad) {
  if (req.operator_name().empty() && req.collection_id().empty()) {
    bad.push_back({"operator_name", "give operator_name or collection_id"});
  }
  CheckLength(req.operator_name(), kMaxOperatorNameBytes, "operator_name", bad);
  CheckLength(req.case_id(), kMaxCaseIdBytes, "case_id", bad);
  CheckLength(req.collection_id(), kMaxCollectionIdBytes, "collection_id", bad);
  CheckLength(req.metric(), kMaxMetricNameBytes, "metric", bad);
  CheckLabelFilter(req.labels(), "labels", bad);
  if (req.has_since()) CheckTimestamp(req.since(), "since", bad);
  if (req.has_until()) CheckTimestamp(req.until(), "until", bad);
  if (req.page_size() < 0 || req.page_size() > kMaxRoundsPage) {
    bad.push_back({"page_size", absl::StrCat("0..", kMaxRoundsPage)});
  }
  if (req.changes() && req.metric().empty()) {
    bad.push_back({"changes", "needs metric (the series whose change points to find)"});
  }
  if (!std::isfinite(req.min_change_pct()) || req.min_change_pct() < 0 ||
      req.min_change_pct() > 1000) {
    bad.push_back({"min_change_pct", "0..1000 percent"});
  } else if (req.min_change_pct() != 0 && !req.changes()) {
    bad.push_back({"min_change_pct", "only with changes"});
  }
}

absl::StatusOr<RoundFilter> RoundFilterOf(const std::string& team,
                                          const v1::ListRoundsRequest& req) {
  std::vector<FieldViolation> bad;
  CheckRoundRequest(req, bad);
  auto after = ParseIdToken(req.page_token(), "page_token");
  if (!after.ok())
    bad.push_back({"page_token", "malformed page token; pass the one a response gave"});
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  RoundFilter f;
  f.after_id = *after;
  f.team = team;
  f.operator_name = req.operator_name();
  f.case_id = req.case_id();
  f.collection_id = req.collection_id();
  f.labels = {req.labels().begin(), req.labels().end()};
  // Asking for a server label (npuperf.confirmation=7) asks for those rounds.
  for (const auto& [key, value] : f.labels) {
    f.include_server_rounds = f.include_server_rounds || absl::StartsWith(key, kServerLabelPrefix);
  }
  if (req.has_since()) f.since_ms = TimeUtil::TimestampToMilliseconds(req.since());
  if (req.has_until()) f.until_ms = TimeUtil::TimestampToMilliseconds(req.until());
  f.metric = req.metric();
  f.limit = req.page_size() == 0 ? kDefaultRoundsPage : req.page_size();
  return f;
}

}  // namespace

ReadQueries::ReadQueries(Store& store) : store_(store) {}

absl::StatusOr<v1::GetCollectionResponse> ReadQueries::GetCollection(
    const std::string& team, const v1::GetCollectionRequest& req) {
  std::vector<FieldViolation> bad;
  CheckCollectionId(req.collection_id(), "collection_id", bad);
  if (req.job_page_size() < 0 || req.job_page_size() > kMaxJobsPage) {
    bad.push_back({"job_page_size", absl::StrCat("must be in 0..", kMaxJobsPage)});
  }
  auto after = ParseIdToken(req.job_page_token(), "job_page_token");
  if (!after.ok()) {
    bad.push_back({"job_page_token", "malformed page token; pass the one a response gave"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  const int32_t size = req.job_page_size() == 0 ? kDefaultJobsPage : req.job_page_size();
  // The spec comes with the first page only: it lists every case id (about
  // 9 bytes each, 0.9 MB for 100,000 cases), and reading and sending it with
  // each of a big collection's pages cost more than the jobs (issue 36).
  auto c = *after > 0
               ? store_.GetCollectionPageWithoutSpec(team, req.collection_id(), *after, size + 1)
               : store_.GetCollectionPage(team, req.collection_id(), *after, size + 1);
  if (!c.ok()) return c.status();
  v1::GetCollectionResponse resp;
  if (KeepJobsPage(&*c, size)) {
    resp.set_next_job_page_token(absl::StrCat(c->jobs(c->jobs_size() - 1).id()));
  }
  if (absl::Status s = FillWaitingReason(store_, &*c); !s.ok()) return s;
  *resp.mutable_collection() = *std::move(c);
  return resp;
}

absl::StatusOr<v1::ListCollectionsResponse> ReadQueries::ListCollections(
    const std::string& team, const v1::ListCollectionsRequest& req) {
  auto f = CollectionFilterOf(team, req);
  if (!f.ok()) return f.status();
  auto list = store_.ListCollections(*f);
  if (!list.ok()) return list.status();
  v1::ListCollectionsResponse resp;
  for (auto& c : *list) *resp.add_collections() = std::move(c);
  const int fit = FitInBytes(resp.collections(), kMaxPageBytes);
  if (fit < resp.collections_size() || resp.collections_size() == f->limit) {
    KeepFirst(resp.mutable_collections(), fit);
    const auto& last = resp.collections(resp.collections_size() - 1);
    resp.set_next_page_token(
        CollectionToken(TimeUtil::TimestampToMilliseconds(last.created_at()), last.id()));
  }
  return resp;
}

absl::StatusOr<v1::GetRoundResponse> ReadQueries::GetRound(const std::string& team,
                                                           const v1::GetRoundRequest& req) {
  if (req.round_id() <= 0) return InvalidArgumentWithFields({{"round_id", "must be a round id"}});
  auto r = store_.GetRound(team, req.round_id());
  if (!r.ok()) return r.status();
  auto artifacts = store_.ListArtifacts(team, req.round_id());
  if (!artifacts.ok()) return artifacts.status();
  v1::GetRoundResponse resp;
  *resp.mutable_round() = *std::move(r);
  for (const ArtifactRecord& a : *artifacts)
    *resp.mutable_round()->add_artifacts() = ToRoundArtifact(a);
  return resp;
}

absl::StatusOr<v1::ListRoundsResponse> ReadQueries::ListRounds(const std::string& team,
                                                               const v1::ListRoundsRequest& req) {
  auto f = RoundFilterOf(team, req);
  if (!f.ok()) return f.status();
  auto page = store_.ListRounds(*f);
  if (!page.ok()) return page.status();
  v1::ListRoundsResponse resp;
  for (auto& r : page->rounds) *resp.add_rounds() = std::move(r);
  int64_t last_id = page->last_id;
  const int fit = FitInBytes(resp.rounds(), kMaxPageBytes);
  if (fit < resp.rounds_size()) {
    KeepFirst(resp.mutable_rounds(), fit);
    last_id = resp.rounds(fit - 1).id();  // ascending ids: the series past it goes too
    std::erase_if(page->series, [&](const v1::MetricPoint& p) { return p.round_id() > last_id; });
  }
  for (auto& m : page->series) *resp.add_series() = std::move(m);
  if (last_id > 0) resp.set_next_page_token(absl::StrCat(last_id));
  return resp;
}

absl::StatusOr<v1::ListAgentsResponse> ReadQueries::ListAgents(const AgentsViewer& viewer) {
  auto agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  auto quarantined = store_.ListQuarantines(/*include_released=*/false, kMaxQuarantinesPage);
  if (!quarantined.ok()) return quarantined.status();
  OverlayQuarantines(*quarantined, &*agents);
  return ViewAgents(*std::move(agents), viewer);
}

}  // namespace npuperf::server
