#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/channel_tls.h"
#include "common/clock.h"
#include "npuperf/v1/agent_service.grpc.pb.h"

namespace npuperf::agent {

// Whether a call's status says the server went away or could not be reached
// (UNAVAILABLE, DEADLINE_EXCEEDED, CANCELLED: a restart, a network fault)
// rather than anything it answered about the request.
bool ServerWentAway(const absl::Status& s);

// The only gRPC code of the agent: AgentService calls with the bearer token
// and a deadline on each (the injected clock's SystemNow plus the call's
// budget), statuses mapped back to absl. Thread-safe (gRPC stubs are).
class ServerChannel {
 public:
  // stub: the generated interface (MockAgentServiceStub in tests).
  ServerChannel(std::unique_ptr<v1::AgentService::StubInterface> stub, std::string token,
                Clock& clock);

  // Connects to HOST:PORT with the shared keepalive settings; over TLS when
  // tls.root_pem holds the CA that signed the server's certificate (empty:
  // plaintext), presenting tls's client certificate when it has one.
  static std::unique_ptr<ServerChannel> Connect(const std::string& address, std::string token,
                                                const ChannelTls& tls, Clock& clock);

  absl::StatusOr<v1::RegisterAgentResponse> Register(const v1::RegisterAgentRequest& req);
  // Long-polls for a job; CANCELLED at once after StopLeasePolls().
  absl::StatusOr<v1::LeaseJobResponse> LeaseJob(const v1::LeaseJobRequest& req);
  // Cancels the pending long-poll and refuses new ones (shutdown).
  void StopLeasePolls();
  absl::StatusOr<v1::ReportProgressResponse> ReportProgress(const v1::ReportProgressRequest& req);
  absl::StatusOr<v1::ReportResultResponse> ReportResult(const v1::ReportResultRequest& req);
  // The whole bundle (size-checked against max_bytes) of the job agent_id
  // holds a lease on (the server streams bundles to lease holders only).
  absl::StatusOr<std::string> DownloadBundle(const std::string& sha256, const std::string& agent_id,
                                             int64_t job_id, int64_t max_bytes);

  // Streams the file at path as the artifact header announces (the header,
  // then the bytes in chunks of kArtifactChunkBytes, never the whole file in
  // memory); the server's answer, or NOT_FOUND when the file cannot be read.
  absl::StatusOr<v1::UploadArtifactResponse> UploadArtifact(const v1::ArtifactHeader& header,
                                                            const std::filesystem::path& path);

  // Runs one session: sends next_heartbeat() at once and then every interval,
  // and hands each answer to on_response (on a reader thread), until stop
  // holds or the stream fails. stop is evaluated with mu held, and the wait
  // between heartbeats is clock.AwaitWithDeadline(mu, stop, ...): whatever
  // makes stop true must change under mu, and then ends the wait at once.
  // Returns the stream's final status.
  // REQUIRES: mu not held.
  absl::Status RunSession(const std::function<v1::Heartbeat()>& next_heartbeat,
                          const std::function<void(const v1::AgentSessionResponse&)>& on_response,
                          std::chrono::milliseconds interval, absl::Mutex& mu,
                          const absl::Condition& stop);

 private:
  void Prepare(grpc::ClientContext* ctx, std::chrono::milliseconds deadline);

  std::unique_ptr<v1::AgentService::StubInterface> stub_;
  const std::string token_;
  Clock& clock_;
  absl::Mutex mu_;
  bool polls_stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::set<grpc::ClientContext*> polls_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::agent
