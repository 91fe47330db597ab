#include "server/service/agent_service.h"

#include "server/core/constants.h"
#include "server/core/job_rules.h"
#include "server/service/peer_certificate.h"

namespace npuperf::server {

absl::StatusOr<AgentIdentity> AgentServiceImpl::IdentityOf(const char* method,
                                                           const grpc::ServerContext& ctx,
                                                           const Principal& p) {
  auto who = DecideAgentCertificate(PeerCertificateOf(ctx),
                                    AgentIdentity::Of(p, sc_.auth.required()), certs_.require);
  if (auto why = AgentRefusalOf(who.status())) {
    sc_.metrics.CountAgentRefusal(method, AgentRefusalName(*why));
  }
  return who;
}

template <typename F>
grpc::Status AgentServiceImpl::ServeAgent(const char* method, grpc::ServerContext* ctx,
                                          F&& handler) {
  return Serve(sc_, method, ctx, PrincipalKind::kAgent, [&](const Principal& p) -> absl::Status {
    auto who = IdentityOf(method, *ctx, p);
    if (!who.ok()) return who.status();
    return handler(*who);
  });
}

template <typename Resp, typename F>
grpc::Status AgentServiceImpl::ServeAgentReply(const char* method, grpc::ServerContext* ctx,
                                               Resp* resp, F&& call) {
  return ServeReply(sc_, method, ctx, PrincipalKind::kAgent, resp,
                    [&](const Principal& p) -> absl::StatusOr<Resp> {
                      auto who = IdentityOf(method, *ctx, p);
                      if (!who.ok()) return who.status();
                      return call(*who);
                    });
}

AgentServiceImpl::AgentServiceImpl(Scheduler& scheduler, ServiceContext sc,
                                   std::atomic<bool>& stopping, AgentCertPolicy certs)
    : scheduler_(scheduler), sc_(sc), stopping_(stopping), certs_(certs) {}

grpc::Status AgentServiceImpl::RegisterAgent(grpc::ServerContext* ctx,
                                             const v1::RegisterAgentRequest* req,
                                             v1::RegisterAgentResponse* resp) {
  return ServeAgentReply("RegisterAgent", ctx, resp, [&](const AgentIdentity& who) {
    return scheduler_.RegisterAgent(who, *req);
  });
}

grpc::Status AgentServiceImpl::AgentSession(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::AgentSessionResponse, v1::AgentSessionRequest>* stream) {
  return ServeAgent("AgentSession", ctx, [&](const AgentIdentity& who) -> absl::Status {
    v1::AgentSessionRequest req;
    while (!stopping_ && stream->Read(&req)) {
      MessageDeadlineScope beat(sc_.clock, kAgentStoreDeadline);
      auto resp = scheduler_.Heartbeat(who, req.heartbeat());
      if (!resp.ok()) return resp.status();
      if (!stream->Write(*resp)) break;
    }
    return stopping_ ? absl::UnavailableError("server is shutting down") : absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::LeaseJob(grpc::ServerContext* ctx, const v1::LeaseJobRequest* req,
                                        v1::LeaseJobResponse* resp) {
  return ServeAgent("LeaseJob", ctx, [&](const AgentIdentity& who) -> absl::Status {
    if (stopping_) return absl::UnavailableError("server is shutting down");
    auto got =
        scheduler_.LeaseJobs(who, *req, [&] { return ctx->IsCancelled() || stopping_.load(); });
    if (!got.ok()) return got.status();
    for (size_t i = 0; i < got->size(); ++i) {
      *(i == 0 ? resp->mutable_assignment() : resp->add_more_assignments()) = std::move((*got)[i]);
    }
    return absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::ReportProgress(grpc::ServerContext* ctx,
                                              const v1::ReportProgressRequest* req,
                                              v1::ReportProgressResponse* resp) {
  return ServeAgent("ReportProgress", ctx, [&](const AgentIdentity& who) -> absl::Status {
    auto cancel = scheduler_.ReportProgress(who, *req);
    if (!cancel.ok()) return cancel.status();
    resp->set_cancel_requested(*cancel);
    return absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::ReportResult(grpc::ServerContext* ctx,
                                            const v1::ReportResultRequest* req,
                                            v1::ReportResultResponse* resp) {
  return ServeAgentReply("ReportResult", ctx, resp, [&](const AgentIdentity& who) {
    return scheduler_.ReportResult(who, *req);
  });
}

grpc::Status AgentServiceImpl::DownloadBundle(
    grpc::ServerContext* ctx, const v1::DownloadBundleRequest* req,
    grpc::ServerWriter<v1::DownloadBundleResponse>* writer) {
  return ServeAgent("DownloadBundle", ctx, [&](const AgentIdentity& who) -> absl::Status {
    return scheduler_.DownloadBundle(who, *req,
                                     [writer](int64_t size_bytes, const std::string& piece) {
                                       v1::DownloadBundleResponse chunk;
                                       if (size_bytes > 0) chunk.set_size_bytes(size_bytes);
                                       chunk.set_chunk(piece);
                                       return writer->Write(chunk);
                                     });
  });
}

grpc::Status AgentServiceImpl::UploadArtifact(grpc::ServerContext* ctx,
                                              grpc::ServerReader<v1::UploadArtifactRequest>* reader,
                                              v1::UploadArtifactResponse* resp) {
  return ServeAgentReply("UploadArtifact", ctx, resp, [&](const AgentIdentity& who) {
    return scheduler_.UploadArtifact(
        who, [reader](v1::UploadArtifactRequest* msg) { return reader->Read(msg); });
  });
}

}  // namespace npuperf::server
