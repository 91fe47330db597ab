#include "server/service/query_service.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// Runs one ComparisonQueries method for the caller's team; shape checks and
// choices live there, this adapter only authenticates and maps statuses.
template <typename Req, typename Resp>
grpc::Status Forward(ServiceContext& sc, const char* method, grpc::ServerContext* ctx,
                     ComparisonQueries& queries,
                     absl::StatusOr<Resp> (ComparisonQueries::*fn)(const std::string&, const Req&),
                     const Req& req, Resp* resp) {
  return Serve(sc, method, ctx, false, [&](const Principal& p) -> absl::Status {
    auto out = (queries.*fn)(p.name, req);
    if (!out.ok()) return out.status();
    *resp = *std::move(out);
    return absl::OkStatus();
  });
}

}  // namespace

QueryServiceImpl::QueryServiceImpl(Store& store, ComparisonQueries& comparisons, ServiceContext sc)
    : store_(store), comparisons_(comparisons), sc_(sc) {}

grpc::Status QueryServiceImpl::GetRound(grpc::ServerContext* ctx, const v1::GetRoundRequest* req,
                                        v1::GetRoundResponse* resp) {
  return Serve(sc_, "GetRound", ctx, false, [&](const Principal& p) -> absl::Status {
    auto r = store_.GetRound(p.name, req->round_id());
    if (!r.ok()) return r.status();
    *resp->mutable_round() = *std::move(r);
    return absl::OkStatus();
  });
}

grpc::Status QueryServiceImpl::ListRounds(grpc::ServerContext* ctx,
                                          const v1::ListRoundsRequest* req,
                                          v1::ListRoundsResponse* resp) {
  return Serve(sc_, "ListRounds", ctx, false, [&](const Principal& p) -> absl::Status {
    std::vector<FieldViolation> bad;
    if (req->operator_name().empty() && req->collection_id().empty()) {
      bad.push_back({"operator_name", "give operator_name or collection_id"});
    }
    if (req->page_size() < 0 || req->page_size() > 1000) bad.push_back({"page_size", "0..1000"});
    RoundFilter f;
    if (!req->page_token().empty() && !absl::SimpleAtoi(req->page_token(), &f.after_id)) {
      bad.push_back({"page_token", "malformed"});
    }
    if (!bad.empty()) return InvalidArgumentWithFields(bad);
    f.team = p.name;
    f.operator_name = req->operator_name();
    f.case_id = req->case_id();
    f.collection_id = req->collection_id();
    f.labels = {req->labels().begin(), req->labels().end()};
    if (req->has_since()) f.since_ms = TimeUtil::TimestampToMilliseconds(req->since());
    if (req->has_until()) f.until_ms = TimeUtil::TimestampToMilliseconds(req->until());
    f.metric = req->metric();
    f.limit = req->page_size() == 0 ? 100 : req->page_size();
    auto page = store_.ListRounds(f);
    if (!page.ok()) return page.status();
    for (auto& r : page->rounds) *resp->add_rounds() = std::move(r);
    for (auto& m : page->series) *resp->add_series() = std::move(m);
    if (page->last_id > 0) resp->set_next_page_token(absl::StrCat(page->last_id));
    return absl::OkStatus();
  });
}

grpc::Status QueryServiceImpl::CompareRounds(grpc::ServerContext* ctx, const v1::CompareRoundsRequest* req,
                                     v1::CompareRoundsResponse* resp) {
  return Forward(sc_, "CompareRounds", ctx, comparisons_, &ComparisonQueries::CompareRounds, *req, resp);
}

grpc::Status QueryServiceImpl::CompareCollections(grpc::ServerContext* ctx, const v1::CompareCollectionsRequest* req,
                                     v1::CompareCollectionsResponse* resp) {
  return Forward(sc_, "CompareCollections", ctx, comparisons_, &ComparisonQueries::CompareCollections, *req, resp);
}

grpc::Status QueryServiceImpl::GetGoldenReport(grpc::ServerContext* ctx, const v1::GetGoldenReportRequest* req,
                                     v1::GetGoldenReportResponse* resp) {
  return Forward(sc_, "GetGoldenReport", ctx, comparisons_, &ComparisonQueries::GetGoldenReport, *req, resp);
}

grpc::Status QueryServiceImpl::ListRegressions(grpc::ServerContext* ctx, const v1::ListRegressionsRequest* req,
                                     v1::ListRegressionsResponse* resp) {
  return Forward(sc_, "ListRegressions", ctx, comparisons_, &ComparisonQueries::ListRegressions, *req, resp);
}

grpc::Status QueryServiceImpl::PinBaseline(grpc::ServerContext* ctx, const v1::PinBaselineRequest* req,
                                     v1::PinBaselineResponse* resp) {
  return Forward(sc_, "PinBaseline", ctx, comparisons_, &ComparisonQueries::PinBaseline, *req, resp);
}

grpc::Status QueryServiceImpl::ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest*,
                                          v1::ListAgentsResponse* resp) {
  return Serve(sc_, "ListAgents", ctx, false, [&](const Principal&) -> absl::Status {
    auto agents = store_.ListAgents();
    if (!agents.ok()) return agents.status();
    for (auto& a : *agents) *resp->add_agents() = std::move(a);
    return absl::OkStatus();
  });
}

}  // namespace npuperf::server
