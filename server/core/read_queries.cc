#include "server/core/read_queries.h"

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/constants.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

absl::StatusOr<CollectionFilter> CollectionFilterOf(const std::string& team,
                                                    const v1::ListCollectionsRequest& req) {
  CollectionFilter f;
  f.team = team;
  for (int st : req.states()) f.states.push_back(static_cast<v1::CollectionState>(st));
  f.labels = {req.labels().begin(), req.labels().end()};
  if (req.page_size() < 0 || req.page_size() > kMaxCollectionsPage) {
    return InvalidArgumentWithFields(
        {{"page_size", absl::StrCat("must be in 0..", kMaxCollectionsPage)}});
  }
  f.limit = req.page_size() == 0 ? kDefaultCollectionsPage : req.page_size();
  if (!req.page_token().empty()) {
    const auto sep = req.page_token().find(':');
    if (sep == std::string::npos) return InvalidArgumentWithFields({{"page_token", "malformed"}});
    f.before_created_ms = std::stoll(req.page_token().substr(0, sep));
    f.before_id = req.page_token().substr(sep + 1);
  }
  return f;
}

absl::StatusOr<RoundFilter> RoundFilterOf(const std::string& team,
                                          const v1::ListRoundsRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.operator_name().empty() && req.collection_id().empty()) {
    bad.push_back({"operator_name", "give operator_name or collection_id"});
  }
  if (req.page_size() < 0 || req.page_size() > kMaxRoundsPage) {
    bad.push_back({"page_size", absl::StrCat("0..", kMaxRoundsPage)});
  }
  RoundFilter f;
  if (!req.page_token().empty() && !absl::SimpleAtoi(req.page_token(), &f.after_id)) {
    bad.push_back({"page_token", "malformed"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  f.team = team;
  f.operator_name = req.operator_name();
  f.case_id = req.case_id();
  f.collection_id = req.collection_id();
  f.labels = {req.labels().begin(), req.labels().end()};
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
  auto c = store_.GetCollection(team, req.collection_id());
  if (!c.ok()) return c.status();
  v1::GetCollectionResponse resp;
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
  if (resp.collections_size() == f->limit) {
    const auto& last = resp.collections(resp.collections_size() - 1);
    resp.set_next_page_token(
        absl::StrCat(last.created_at().seconds() * 1000 + last.created_at().nanos() / 1'000'000,
                     ":", last.id()));
  }
  return resp;
}

absl::StatusOr<v1::GetRoundResponse> ReadQueries::GetRound(const std::string& team,
                                                           const v1::GetRoundRequest& req) {
  auto r = store_.GetRound(team, req.round_id());
  if (!r.ok()) return r.status();
  v1::GetRoundResponse resp;
  *resp.mutable_round() = *std::move(r);
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
  for (auto& m : page->series) *resp.add_series() = std::move(m);
  if (page->last_id > 0) resp.set_next_page_token(absl::StrCat(page->last_id));
  return resp;
}

absl::StatusOr<v1::ListAgentsResponse> ReadQueries::ListAgents() {
  auto agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  v1::ListAgentsResponse resp;
  for (auto& a : *agents) *resp.add_agents() = std::move(a);
  return resp;
}

}  // namespace npuperf::server
