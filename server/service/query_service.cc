#include "server/service/query_service.h"

#include <utility>

namespace npuperf::server {

QueryServiceImpl::QueryServiceImpl(ReadQueries& reads, ComparisonQueries& comparisons,
                                   ServiceContext sc, v1::GetServerInfoResponse info,
                                   Artifacts* artifacts, Calibrations* calibrations,
                                   Bisections* bisections)
    : reads_(reads),
      comparisons_(comparisons),
      sc_(sc),
      info_(std::move(info)),
      artifacts_(artifacts),
      calibrations_(calibrations),
      bisections_(bisections) {}

grpc::Status QueryServiceImpl::GetRound(grpc::ServerContext* ctx, const v1::GetRoundRequest* req,
                                        v1::GetRoundResponse* resp) {
  return Forward("GetRound", ctx, reads_, &ReadQueries::GetRound, req, resp);
}

grpc::Status QueryServiceImpl::ListRounds(grpc::ServerContext* ctx,
                                          const v1::ListRoundsRequest* req,
                                          v1::ListRoundsResponse* resp) {
  return Forward("ListRounds", ctx, comparisons_, &ComparisonQueries::ListRounds, req, resp);
}

grpc::Status QueryServiceImpl::CompareRounds(grpc::ServerContext* ctx,
                                             const v1::CompareRoundsRequest* req,
                                             v1::CompareRoundsResponse* resp) {
  grpc::Status s =
      Forward("CompareRounds", ctx, comparisons_, &ComparisonQueries::CompareRounds, req, resp);
  if (s.ok()) sc_.metrics.CountVerdict("compare_rounds", resp->comparison().verdict());
  return s;
}

grpc::Status QueryServiceImpl::CompareCollections(grpc::ServerContext* ctx,
                                                  const v1::CompareCollectionsRequest* req,
                                                  v1::CompareCollectionsResponse* resp) {
  grpc::Status s = Forward("CompareCollections", ctx, comparisons_,
                           &ComparisonQueries::CompareCollections, req, resp);
  if (s.ok()) sc_.metrics.CountVerdicts("compare_collections", resp->counts());
  return s;
}

grpc::Status QueryServiceImpl::CompareMany(grpc::ServerContext* ctx,
                                           const v1::CompareManyRequest* req,
                                           v1::CompareManyResponse* resp) {
  grpc::Status s =
      Forward("CompareMany", ctx, comparisons_, &ComparisonQueries::CompareMany, req, resp);
  if (s.ok()) sc_.metrics.CountVerdicts("compare_many", resp->counts());
  return s;
}

grpc::Status QueryServiceImpl::CompareImplementations(grpc::ServerContext* ctx,
                                                      const v1::CompareImplementationsRequest* req,
                                                      v1::CompareImplementationsResponse* resp) {
  grpc::Status s = Forward("CompareImplementations", ctx, comparisons_,
                           &ComparisonQueries::CompareImplementations, req, resp);
  if (s.ok()) sc_.metrics.CountVerdicts("compare_implementations", resp->counts());
  return s;
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
  grpc::Status s =
      Forward("ListRegressions", ctx, comparisons_, &ComparisonQueries::ListRegressions, req, resp);
  if (s.ok()) {
    sc_.metrics.CountVerdicts(
        req->baseline_label().empty() ? "regressions_recent" : "regressions_pinned",
        resp->counts());
  }
  return s;
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

grpc::Status QueryServiceImpl::GetServerInfo(grpc::ServerContext* ctx,
                                             const v1::GetServerInfoRequest*,
                                             v1::GetServerInfoResponse* resp) {
  return ServeReply(sc_, "GetServerInfo", ctx, std::nullopt, resp,
                    [&](const Principal&) { return info_; });
}

grpc::Status QueryServiceImpl::DownloadArtifact(
    grpc::ServerContext* ctx, const v1::DownloadArtifactRequest* req,
    grpc::ServerWriter<v1::DownloadArtifactResponse>* writer) {
  return Serve(sc_, "DownloadArtifact", ctx, PrincipalKind::kTeam,
               [&](const Principal& p) -> absl::Status {
                 if (artifacts_ == nullptr) {
                   return absl::NotFoundError("this server keeps no artifacts");
                 }
                 return artifacts_->Download(
                     p.name, *req, [writer](int64_t size_bytes, const std::string& piece) {
                       v1::DownloadArtifactResponse chunk;
                       if (size_bytes > 0) chunk.set_size_bytes(size_bytes);
                       chunk.set_chunk(piece);
                       return writer->Write(chunk);
                     });
               });
}

grpc::Status QueryServiceImpl::TriageRegression(grpc::ServerContext* ctx,
                                                const v1::TriageRegressionRequest* req,
                                                v1::TriageRegressionResponse* resp) {
  return Forward("TriageRegression", ctx, comparisons_.triage(), &TriageQueries::TriageRegression,
                 req, resp);
}

grpc::Status QueryServiceImpl::GetRegression(grpc::ServerContext* ctx,
                                             const v1::GetRegressionRequest* req,
                                             v1::GetRegressionResponse* resp) {
  return Forward("GetRegression", ctx, comparisons_.triage(), &TriageQueries::GetRegression, req,
                 resp);
}

grpc::Status QueryServiceImpl::RequestConfirmation(grpc::ServerContext* ctx,
                                                   const v1::RequestConfirmationRequest* req,
                                                   v1::RequestConfirmationResponse* resp) {
  return Forward("RequestConfirmation", ctx, comparisons_, &ComparisonQueries::RequestConfirmation,
                 req, resp);
}

grpc::Status QueryServiceImpl::GetConfirmation(grpc::ServerContext* ctx,
                                               const v1::GetConfirmationRequest* req,
                                               v1::GetConfirmationResponse* resp) {
  return Forward("GetConfirmation", ctx, comparisons_, &ComparisonQueries::GetConfirmation, req,
                 resp);
}

grpc::Status QueryServiceImpl::StartCalibration(grpc::ServerContext* ctx,
                                                const v1::StartCalibrationRequest* req,
                                                v1::StartCalibrationResponse* resp) {
  return ForwardCalibration("StartCalibration", ctx, &Calibrations::StartCalibration, req, resp);
}

grpc::Status QueryServiceImpl::GetCalibration(grpc::ServerContext* ctx,
                                              const v1::GetCalibrationRequest* req,
                                              v1::GetCalibrationResponse* resp) {
  return ForwardCalibration("GetCalibration", ctx, &Calibrations::GetCalibration, req, resp);
}

grpc::Status QueryServiceImpl::ListNoise(grpc::ServerContext* ctx, const v1::ListNoiseRequest* req,
                                         v1::ListNoiseResponse* resp) {
  return ForwardCalibration("ListNoise", ctx, &Calibrations::ListNoise, req, resp);
}

grpc::Status QueryServiceImpl::StartBisection(grpc::ServerContext* ctx,
                                              const v1::StartBisectionRequest* req,
                                              v1::StartBisectionResponse* resp) {
  return ForwardBisection("StartBisection", ctx, &Bisections::Start, req, resp);
}

grpc::Status QueryServiceImpl::GetBisection(grpc::ServerContext* ctx,
                                            const v1::GetBisectionRequest* req,
                                            v1::GetBisectionResponse* resp) {
  return ForwardBisection("GetBisection", ctx, &Bisections::Get, req, resp);
}

grpc::Status QueryServiceImpl::ListBisections(grpc::ServerContext* ctx,
                                              const v1::ListBisectionsRequest* req,
                                              v1::ListBisectionsResponse* resp) {
  return ForwardBisection("ListBisections", ctx, &Bisections::List, req, resp);
}

grpc::Status QueryServiceImpl::CancelBisection(grpc::ServerContext* ctx,
                                               const v1::CancelBisectionRequest* req,
                                               v1::CancelBisectionResponse* resp) {
  return ForwardBisection("CancelBisection", ctx, &Bisections::CancelOne, req, resp);
}

}  // namespace npuperf::server
