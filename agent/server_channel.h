#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "npuperf/v1/agent_service.grpc.pb.h"

namespace npuperf::agent {

// The only gRPC code of the agent: AgentService calls with the bearer token
// and a deadline on each, statuses mapped back to absl. Thread-safe (gRPC
// stubs are).
class ServerChannel {
 public:
  // stub: the generated interface (a mock in tests).
  ServerChannel(std::unique_ptr<v1::AgentService::StubInterface> stub, std::string token);

  // Connects to HOST:PORT with the shared keepalive settings; over TLS when
  // tls_ca names the PEM file of the CA that signed the server's certificate.
  static std::unique_ptr<ServerChannel> Connect(const std::string& address, std::string token,
                                                const std::string& tls_ca = "");

  absl::StatusOr<v1::RegisterAgentResponse> Register(const v1::RegisterAgentRequest& req);
  // Long-polls for a job; CANCELLED at once after StopLeasePolls().
  absl::StatusOr<v1::LeaseJobResponse> LeaseJob(const v1::LeaseJobRequest& req);
  // Cancels the pending long-poll and refuses new ones (shutdown).
  void StopLeasePolls();
  absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& req);
  absl::StatusOr<v1::ReportResultResponse> ReportResult(const v1::ReportResultRequest& req);
  // The whole bundle (size-checked against max_bytes).
  absl::StatusOr<std::string> DownloadBundle(const std::string& sha256, int64_t max_bytes);

  // Runs one session: sends next_heartbeat() every interval and hands each
  // answer to on_response, until stop() or the stream fails. Returns the
  // stream's final status.
  absl::Status RunSession(const std::function<v1::Heartbeat()>& next_heartbeat,
                          const std::function<void(const v1::AgentSessionResponse&)>& on_response,
                          std::chrono::milliseconds interval, const std::function<bool()>& stop);

 private:
  void Prepare(grpc::ClientContext* ctx, std::chrono::milliseconds deadline);

  std::unique_ptr<v1::AgentService::StubInterface> stub_;
  const std::string token_;
  std::mutex mu_;
  bool polls_stopped_ = false;                    // guarded by mu_
  std::set<grpc::ClientContext*> polls_;          // guarded by mu_
};

}  // namespace npuperf::agent
