#include "agent/server_channel.h"

#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/constants.h"
#include "common/keepalive.h"
#include "common/status_util.h"
#include "grpcpp/create_channel.h"

namespace npuperf::agent {

ServerChannel::ServerChannel(std::unique_ptr<v1::AgentService::StubInterface> stub,
                             std::string token, Clock& clock)
    : stub_(std::move(stub)), token_(std::move(token)), clock_(clock) {}

std::unique_ptr<ServerChannel> ServerChannel::Connect(const std::string& address, std::string token,
                                                      const ChannelTls& tls, Clock& clock) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive::kClientKeepaliveTimeMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive::kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5'000);
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (!tls.root_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = tls.root_pem;
    ssl.pem_private_key = tls.key_pem;
    ssl.pem_cert_chain = tls.cert_pem;
    creds = grpc::SslCredentials(ssl);
  }
  auto channel = grpc::CreateCustomChannel(address, creds, args);
  return std::make_unique<ServerChannel>(v1::AgentService::NewStub(channel), std::move(token),
                                         clock);
}

void ServerChannel::Prepare(grpc::ClientContext* ctx, std::chrono::milliseconds deadline) {
  if (!token_.empty()) ctx->AddMetadata("authorization", "Bearer " + token_);
  ctx->set_deadline(clock_.SystemNow() + deadline);
}

absl::StatusOr<v1::RegisterAgentResponse> ServerChannel::Register(
    const v1::RegisterAgentRequest& req) {
  grpc::ClientContext ctx;
  Prepare(&ctx, kRpcDeadline);
  v1::RegisterAgentResponse resp;
  auto s = FromGrpcStatus(stub_->RegisterAgent(&ctx, req, &resp));
  if (!s.ok()) return s;
  return resp;
}

absl::StatusOr<v1::LeaseJobResponse> ServerChannel::LeaseJob(const v1::LeaseJobRequest& req) {
  grpc::ClientContext ctx;
  Prepare(&ctx, kRpcDeadline + std::chrono::milliseconds(req.wait_ms()));
  {
    absl::MutexLock lock(&mu_);
    if (polls_stopped_) return absl::CancelledError("agent stopping");
    polls_.insert(&ctx);
  }
  v1::LeaseJobResponse resp;
  auto s = FromGrpcStatus(stub_->LeaseJob(&ctx, req, &resp));
  {
    absl::MutexLock lock(&mu_);
    polls_.erase(&ctx);
  }
  if (!s.ok()) return s;
  return resp;
}

void ServerChannel::StopLeasePolls() {
  absl::MutexLock lock(&mu_);
  polls_stopped_ = true;
  for (auto* ctx : polls_) ctx->TryCancel();
}

absl::StatusOr<v1::ReportProgressResponse> ServerChannel::ReportProgress(
    const v1::ReportProgressRequest& req) {
  grpc::ClientContext ctx;
  Prepare(&ctx, kRpcDeadline);
  v1::ReportProgressResponse resp;
  auto s = FromGrpcStatus(stub_->ReportProgress(&ctx, req, &resp));
  if (!s.ok()) return s;
  return resp;
}

absl::StatusOr<v1::ReportResultResponse> ServerChannel::ReportResult(
    const v1::ReportResultRequest& req) {
  grpc::ClientContext ctx;
  Prepare(&ctx, kRpcDeadline);
  v1::ReportResultResponse resp;
  auto s = FromGrpcStatus(stub_->ReportResult(&ctx, req, &resp));
  if (!s.ok()) return s;
  return resp;
}

absl::StatusOr<std::string> ServerChannel::DownloadBundle(const std::string& sha256,
                                                          const std::string& agent_id,
                                                          int64_t job_id, int64_t max_bytes) {
  grpc::ClientContext ctx;
  Prepare(&ctx, std::chrono::minutes(5));
  v1::DownloadBundleRequest req;
  req.set_sha256(sha256);
  req.set_agent_id(agent_id);
  req.set_job_id(job_id);
  auto reader = stub_->DownloadBundle(&ctx, req);
  std::string content;
  v1::DownloadBundleResponse chunk;
  while (reader->Read(&chunk)) {
    if (static_cast<int64_t>(content.size() + chunk.chunk().size()) > max_bytes) {
      ctx.TryCancel();
      reader->Finish();
      return absl::ResourceExhaustedError("bundle larger than the agent's limit");
    }
    content += chunk.chunk();
  }
  auto s = FromGrpcStatus(reader->Finish());
  if (!s.ok()) return s;
  return content;
}

absl::StatusOr<v1::UploadArtifactResponse> ServerChannel::UploadArtifact(
    const v1::ArtifactHeader& header, const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path.string(), ": cannot be read"));
  grpc::ClientContext ctx;
  Prepare(&ctx, kArtifactUploadDeadline);
  v1::UploadArtifactResponse resp;
  auto writer = stub_->UploadArtifact(&ctx, &resp);
  v1::UploadArtifactRequest msg;
  *msg.mutable_header() = header;
  bool open = writer->Write(msg);
  std::string buf(kArtifactChunkBytes, '\0');
  while (open && in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() <= 0) break;
    msg.set_chunk(buf.data(), static_cast<size_t>(in.gcount()));
    open = writer->Write(msg);  // false: the server answered early (already stored, refused)
  }
  writer->WritesDone();
  auto s = FromGrpcStatus(writer->Finish());
  if (!s.ok()) return s;
  return resp;
}

absl::Status ServerChannel::RunSession(
    const std::function<v1::Heartbeat()>& next_heartbeat,
    const std::function<void(const v1::AgentSessionResponse&)>& on_response,
    std::chrono::milliseconds interval, absl::Mutex& mu, const absl::Condition& stop) {
  auto stopping = [&mu, &stop] {
    absl::MutexLock lock(&mu);
    return stop.Eval();
  };
  grpc::ClientContext ctx;
  if (!token_.empty()) ctx.AddMetadata("authorization", "Bearer " + token_);
  auto stream = stub_->AgentSession(&ctx);
  std::thread reader([&] {
    v1::AgentSessionResponse resp;
    while (stream->Read(&resp)) on_response(resp);
  });
  bool ok = true;
  while (ok && !stopping()) {
    // The period runs from before the write, so the next heartbeat's time is
    // fixed once this one is on the wire.
    const Clock::MonotonicTime next = clock_.MonotonicNow() + interval;
    v1::AgentSessionRequest req;
    *req.mutable_heartbeat() = next_heartbeat();
    ok = stream->Write(req);
    if (!ok) break;
    absl::MutexLock lock(&mu);
    clock_.AwaitWithDeadline(mu, stop, next);
  }
  stream->WritesDone();
  if (stopping()) ctx.TryCancel();
  reader.join();
  return FromGrpcStatus(stream->Finish());
}

bool ServerWentAway(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsCancelled(s);
}

}  // namespace npuperf::agent
