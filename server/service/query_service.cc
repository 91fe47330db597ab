#include "server/service/query_service.h"

namespace npuperf::server {

QueryServiceImpl::QueryServiceImpl(ReadQueries& reads, ComparisonQueries& comparisons,
                                   ServiceContext sc)
    : reads_(reads), comparisons_(comparisons), sc_(sc) {}

grpc::Status QueryServiceImpl::GetRound(grpc::ServerContext* ctx, const v1::GetRoundRequest* req,
                                        v1::GetRoundResponse* resp) {
  return Forward("GetRound", ctx, reads_, &ReadQueries::GetRound, req, resp);
}

grpc::Status QueryServiceImpl::ListRounds(grpc::ServerContext* ctx,
                                          const v1::ListRoundsRequest* req,
                                          v1::ListRoundsResponse* resp) {
  return Forward("ListRounds", ctx, reads_, &ReadQueries::ListRounds, req, resp);
}

grpc::Status QueryServiceImpl::CompareRounds(grpc::ServerContext* ctx,
                                             const v1::CompareRoundsRequest* req,
                                             v1::CompareRoundsResponse* resp) {
  return Forward("CompareRounds", ctx, comparisons_, &ComparisonQueries::CompareRounds, req, resp);
}

grpc::Status QueryServiceImpl::CompareCollections(grpc::ServerContext* ctx,
                                                  const v1::CompareCollectionsRequest* req,
                                                  v1::CompareCollectionsResponse* resp) {
  return Forward("CompareCollections", ctx, comparisons_, &ComparisonQueries::CompareCollections,
                 req, resp);
}

grpc::Status QueryServiceImpl::GetGoldenReport(grpc::ServerContext* ctx,
                                               const v1::GetGoldenReportRequest* req,
                                               v1::GetGoldenReportResponse* resp) {
  return Forward("GetGoldenReport", ctx, comparisons_, &ComparisonQueries::GetGoldenReport, req,
                 resp);
}

grpc::Status QueryServiceImpl::ListRegressions(grpc::ServerContext* ctx,
                                               const v1::ListRegressionsRequest* req,
                                               v1::ListRegressionsResponse* resp) {
  return Forward("ListRegressions", ctx, comparisons_, &ComparisonQueries::ListRegressions, req,
                 resp);
}

grpc::Status QueryServiceImpl::PinBaseline(grpc::ServerContext* ctx,
                                           const v1::PinBaselineRequest* req,
                                           v1::PinBaselineResponse* resp) {
  return Forward("PinBaseline", ctx, comparisons_, &ComparisonQueries::PinBaseline, req, resp);
}

grpc::Status QueryServiceImpl::ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest*,
                                          v1::ListAgentsResponse* resp) {
  // Teams and agent tokens alike; each sees what AgentsViewer allows.
  return ServeReply(sc_, "ListAgents", ctx, std::nullopt, resp, [&](const Principal& p) {
    return reads_.ListAgents(AgentsViewer::Of(p, sc_.auth.required()));
  });
}

}  // namespace npuperf::server
