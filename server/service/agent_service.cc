#include "server/service/agent_service.h"

#include "server/core/constants.h"

namespace npuperf::server {

AgentIdentity AgentServiceImpl::IdentityOf(const Principal& p) const {
  return AgentIdentity::Of(p, sc_.auth.required());
}

AgentServiceImpl::AgentServiceImpl(Scheduler& scheduler, ServiceContext sc,
                                   std::atomic<bool>& stopping)
    : scheduler_(scheduler), sc_(sc), stopping_(stopping) {}

grpc::Status AgentServiceImpl::RegisterAgent(grpc::ServerContext* ctx,
                                             const v1::RegisterAgentRequest* req,
                                             v1::RegisterAgentResponse* resp) {
  return ServeReply(
      sc_, "RegisterAgent", ctx, PrincipalKind::kAgent, resp,
      [&](const Principal& p) { return scheduler_.RegisterAgent(IdentityOf(p), *req); });
}

grpc::Status AgentServiceImpl::AgentSession(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::AgentSessionResponse, v1::AgentSessionRequest>* stream) {
  return Serve(
      sc_, "AgentSession", ctx, PrincipalKind::kAgent, [&](const Principal& p) -> absl::Status {
        const AgentIdentity who = IdentityOf(p);
        v1::AgentSessionRequest req;
        while (!stopping_ && stream->Read(&req)) {
          auto resp = scheduler_.Heartbeat(who, req.heartbeat());
          if (!resp.ok()) return resp.status();
          if (!stream->Write(*resp)) break;
        }
        return stopping_ ? absl::UnavailableError("server is shutting down") : absl::OkStatus();
      });
}

grpc::Status AgentServiceImpl::LeaseJob(grpc::ServerContext* ctx, const v1::LeaseJobRequest* req,
                                        v1::LeaseJobResponse* resp) {
  return Serve(sc_, "LeaseJob", ctx, PrincipalKind::kAgent,
               [&](const Principal& p) -> absl::Status {
                 if (stopping_) return absl::UnavailableError("server is shutting down");
                 auto got = scheduler_.LeaseJob(
                     IdentityOf(p), *req, [&] { return ctx->IsCancelled() || stopping_.load(); });
                 if (!got.ok()) return got.status();
                 if (got->has_value()) *resp->mutable_assignment() = **got;
                 return absl::OkStatus();
               });
}

grpc::Status AgentServiceImpl::ReportProgress(grpc::ServerContext* ctx,
                                              const v1::ReportProgressRequest* req,
                                              v1::ReportProgressResponse* resp) {
  return Serve(sc_, "ReportProgress", ctx, PrincipalKind::kAgent,
               [&](const Principal& p) -> absl::Status {
                 auto cancel = scheduler_.ReportProgress(IdentityOf(p), *req);
                 if (!cancel.ok()) return cancel.status();
                 resp->set_cancel_requested(*cancel);
                 return absl::OkStatus();
               });
}

grpc::Status AgentServiceImpl::ReportResult(grpc::ServerContext* ctx,
                                            const v1::ReportResultRequest* req,
                                            v1::ReportResultResponse* resp) {
  return ServeReply(sc_, "ReportResult", ctx, PrincipalKind::kAgent, resp, [&](const Principal& p) {
    return scheduler_.ReportResult(IdentityOf(p), *req);
  });
}

grpc::Status AgentServiceImpl::DownloadBundle(
    grpc::ServerContext* ctx, const v1::DownloadBundleRequest* req,
    grpc::ServerWriter<v1::DownloadBundleResponse>* writer) {
  return Serve(sc_, "DownloadBundle", ctx, PrincipalKind::kAgent,
               [&](const Principal& p) -> absl::Status {
                 return scheduler_.DownloadBundle(
                     IdentityOf(p), *req, [writer](int64_t size_bytes, const std::string& piece) {
                       v1::DownloadBundleResponse chunk;
                       if (size_bytes > 0) chunk.set_size_bytes(size_bytes);
                       chunk.set_chunk(piece);
                       return writer->Write(chunk);
                     });
               });
}

}  // namespace npuperf::server
