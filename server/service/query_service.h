#pragma once

#include "npuperf/v1/query_service.grpc.pb.h"
#include "server/compare/bisections.h"
#include "server/compare/calibrations.h"
#include "server/compare/comparison_queries.h"
#include "server/core/artifacts.h"
#include "server/core/read_queries.h"
#include "server/service/serve.h"

namespace npuperf::server {

// gRPC adapter for QueryService (team tokens): Serve, then ReadQueries
// (rounds, agents), ComparisonQueries (comparisons, baselines, regressions)
// or its TriageQueries (triage), and Calibrations (measured noise), which
// check the requests, and Bisections. Thread-safe.
class QueryServiceImpl final : public v1::QueryService::Service {
 public:
  // info: what GetServerInfo answers (fixed for the process). artifacts:
  // where DownloadArtifact reads (null: it answers NOT_FOUND). calibrations:
  // what the calibration RPCs call (null: they answer UNIMPLEMENTED), and
  // bisections the bisection RPCs.
  QueryServiceImpl(ReadQueries& reads, ComparisonQueries& comparisons, ServiceContext sc,
                   v1::GetServerInfoResponse info, Artifacts* artifacts = nullptr,
                   Calibrations* calibrations = nullptr, Bisections* bisections = nullptr);

  grpc::Status GetRound(grpc::ServerContext* ctx, const v1::GetRoundRequest* req,
                        v1::GetRoundResponse* resp) override;
  grpc::Status ListRounds(grpc::ServerContext* ctx, const v1::ListRoundsRequest* req,
                          v1::ListRoundsResponse* resp) override;
  grpc::Status CompareRounds(grpc::ServerContext* ctx, const v1::CompareRoundsRequest* req,
                             v1::CompareRoundsResponse* resp) override;
  grpc::Status CompareCollections(grpc::ServerContext* ctx,
                                  const v1::CompareCollectionsRequest* req,
                                  v1::CompareCollectionsResponse* resp) override;
  grpc::Status CompareMany(grpc::ServerContext* ctx, const v1::CompareManyRequest* req,
                           v1::CompareManyResponse* resp) override;
  grpc::Status CompareImplementations(grpc::ServerContext* ctx,
                                      const v1::CompareImplementationsRequest* req,
                                      v1::CompareImplementationsResponse* resp) override;
  grpc::Status GetGoldenReport(grpc::ServerContext* ctx, const v1::GetGoldenReportRequest* req,
                               v1::GetGoldenReportResponse* resp) override;
  grpc::Status ListRegressions(grpc::ServerContext* ctx, const v1::ListRegressionsRequest* req,
                               v1::ListRegressionsResponse* resp) override;
  grpc::Status PinBaseline(grpc::ServerContext* ctx, const v1::PinBaselineRequest* req,
                           v1::PinBaselineResponse* resp) override;
  grpc::Status ListAgents(grpc::ServerContext* ctx, const v1::ListAgentsRequest* req,
                          v1::ListAgentsResponse* resp) override;
  grpc::Status GetServerInfo(grpc::ServerContext* ctx, const v1::GetServerInfoRequest* req,
                             v1::GetServerInfoResponse* resp) override;
  grpc::Status DownloadArtifact(grpc::ServerContext* ctx, const v1::DownloadArtifactRequest* req,
                                grpc::ServerWriter<v1::DownloadArtifactResponse>* writer) override;
  grpc::Status TriageRegression(grpc::ServerContext* ctx, const v1::TriageRegressionRequest* req,
                                v1::TriageRegressionResponse* resp) override;
  grpc::Status GetRegression(grpc::ServerContext* ctx, const v1::GetRegressionRequest* req,
                             v1::GetRegressionResponse* resp) override;
  grpc::Status RequestConfirmation(grpc::ServerContext* ctx,
                                   const v1::RequestConfirmationRequest* req,
                                   v1::RequestConfirmationResponse* resp) override;
  grpc::Status GetConfirmation(grpc::ServerContext* ctx, const v1::GetConfirmationRequest* req,
                               v1::GetConfirmationResponse* resp) override;
  grpc::Status StartCalibration(grpc::ServerContext* ctx, const v1::StartCalibrationRequest* req,
                                v1::StartCalibrationResponse* resp) override;
  grpc::Status GetCalibration(grpc::ServerContext* ctx, const v1::GetCalibrationRequest* req,
                              v1::GetCalibrationResponse* resp) override;
  grpc::Status ListNoise(grpc::ServerContext* ctx, const v1::ListNoiseRequest* req,
                         v1::ListNoiseResponse* resp) override;
  grpc::Status StartBisection(grpc::ServerContext* ctx, const v1::StartBisectionRequest* req,
                              v1::StartBisectionResponse* resp) override;
  grpc::Status GetBisection(grpc::ServerContext* ctx, const v1::GetBisectionRequest* req,
                            v1::GetBisectionResponse* resp) override;
  grpc::Status ListBisections(grpc::ServerContext* ctx, const v1::ListBisectionsRequest* req,
                              v1::ListBisectionsResponse* resp) override;
  grpc::Status CancelBisection(grpc::ServerContext* ctx, const v1::CancelBisectionRequest* req,
                               v1::CancelBisectionResponse* resp) override;

 private:
  // Forward to calibrations_, or UNIMPLEMENTED when there is none.
  template <typename Req, typename Resp>
  grpc::Status ForwardCalibration(const char* name, grpc::ServerContext* ctx,
                                  absl::StatusOr<Resp> (Calibrations::*method)(const std::string&,
                                                                               const Req&),
                                  const Req* req, Resp* resp) {
    return ServeReply(sc_, name, ctx, PrincipalKind::kTeam, resp,
                      [&](const Principal& p) -> absl::StatusOr<Resp> {
                        if (calibrations_ == nullptr) {
                          return absl::UnimplementedError("calibrations are not served here");
                        }
                        return (calibrations_->*method)(p.name, *req);
                      });
  }

  // Forward to bisections_, or UNIMPLEMENTED when there is none.
  template <typename Req, typename Resp>
  grpc::Status ForwardBisection(const char* name, grpc::ServerContext* ctx,
                                absl::StatusOr<Resp> (Bisections::*method)(const std::string&,
                                                                           const Req&),
                                const Req* req, Resp* resp) {
    return ServeReply(sc_, name, ctx, PrincipalKind::kTeam, resp,
                      [&](const Principal& p) -> absl::StatusOr<Resp> {
                        if (bisections_ == nullptr) {
                          return absl::UnimplementedError("bisections are not served here");
                        }
                        return (bisections_->*method)(p.name, *req);
                      });
  }

  // ServeReply for a team's call of one query method: method(team, *req).
  template <typename Queries, typename Req, typename Resp>
  grpc::Status Forward(const char* name, grpc::ServerContext* ctx, Queries& queries,
                       absl::StatusOr<Resp> (Queries::*method)(const std::string&, const Req&),
                       const Req* req, Resp* resp) {
    return ServeReply(sc_, name, ctx, PrincipalKind::kTeam, resp,
                      [&](const Principal& p) { return (queries.*method)(p.name, *req); });
  }

  ReadQueries& reads_;
  ComparisonQueries& comparisons_;
  ServiceContext sc_;
  const v1::GetServerInfoResponse info_;
  Artifacts* const artifacts_;
  Calibrations* const calibrations_;
  Bisections* const bisections_;
};

}  // namespace npuperf::server
