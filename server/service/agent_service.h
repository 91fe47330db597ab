#pragma once

#include <atomic>

#include "npuperf/v1/agent_service.grpc.pb.h"
#include "server/core/agent_certificate.h"
#include "server/core/scheduler.h"
#include "server/service/serve.h"

namespace npuperf::server {

// How AgentService treats client certificates (docs/security.md, "Agent
// client certificates"). A presented certificate must always name the
// caller's agent (DecideAgentCertificate).
struct AgentCertPolicy {
  // --require-agent-cert: every call must present one. Default: off.
  bool require = false;
};

// gRPC adapter for AgentService (agent tokens only): Serve, the client
// certificate check, then the Scheduler with the caller's AgentIdentity,
// which checks the requests. LeaseJob long-polls inside
// the Scheduler; AgentSession answers each heartbeat with directives and cancellations.
// Thread-safe.
class AgentServiceImpl final : public v1::AgentService::Service {
 public:
  AgentServiceImpl(Scheduler& scheduler, ServiceContext sc, std::atomic<bool>& stopping,
                   AgentCertPolicy certs = {});

  grpc::Status RegisterAgent(grpc::ServerContext* ctx, const v1::RegisterAgentRequest* req,
                             v1::RegisterAgentResponse* resp) override;
  grpc::Status AgentSession(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::AgentSessionResponse, v1::AgentSessionRequest>* stream) override;
  grpc::Status LeaseJob(grpc::ServerContext* ctx, const v1::LeaseJobRequest* req,
                        v1::LeaseJobResponse* resp) override;
  grpc::Status ReportProgress(grpc::ServerContext* ctx, const v1::ReportProgressRequest* req,
                              v1::ReportProgressResponse* resp) override;
  grpc::Status ReportResult(grpc::ServerContext* ctx, const v1::ReportResultRequest* req,
                            v1::ReportResultResponse* resp) override;
  grpc::Status DownloadBundle(grpc::ServerContext* ctx, const v1::DownloadBundleRequest* req,
                              grpc::ServerWriter<v1::DownloadBundleResponse>* writer) override;
  grpc::Status UploadArtifact(grpc::ServerContext* ctx,
                              grpc::ServerReader<v1::UploadArtifactRequest>* reader,
                              v1::UploadArtifactResponse* resp) override;

 private:
  // The caller's identity (unbound with authentication off and no client
  // certificate), or its refusal by the certificate rule, counted
  // (npuperf_server_agent_calls_refused_total{method,reason}).
  absl::StatusOr<AgentIdentity> IdentityOf(const char* method, const grpc::ServerContext& ctx,
                                           const Principal& p);
  // Serve for AgentService: the handler gets the caller's identity.
  template <typename F>
  grpc::Status ServeAgent(const char* method, grpc::ServerContext* ctx, F&& handler);
  // ServeReply for AgentService.
  template <typename Resp, typename F>
  grpc::Status ServeAgentReply(const char* method, grpc::ServerContext* ctx, Resp* resp, F&& call);

  Scheduler& scheduler_;
  ServiceContext sc_;
  std::atomic<bool>& stopping_;
  const AgentCertPolicy certs_;
};

}  // namespace npuperf::server
