#include "server/service/agent_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace npuperf::server {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

}  // namespace

AgentServiceImpl::AgentServiceImpl(Scheduler& scheduler, ServiceContext sc,
                                   std::atomic<bool>& stopping)
    : scheduler_(scheduler), sc_(sc), stopping_(stopping) {}

grpc::Status AgentServiceImpl::RegisterAgent(grpc::ServerContext* ctx,
                                             const v1::RegisterAgentRequest* req,
                                             v1::RegisterAgentResponse* resp) {
  return Serve(sc_, "RegisterAgent", ctx, true, [&](const Principal&) -> absl::Status {
    std::vector<FieldViolation> bad;
    if (req->host().empty()) bad.push_back({"host", "required"});
    if (req->boot_id().empty()) bad.push_back({"boot_id", "required"});
    if (req->instance_id().empty()) bad.push_back({"instance_id", "required"});
    if (req->devices().empty()) bad.push_back({"devices", "at least one device"});
    if (!bad.empty()) return InvalidArgumentWithFields(bad);
    auto r = scheduler_.RegisterAgent(*req);
    if (!r.ok()) return r.status();
    *resp = *std::move(r);
    return absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::AgentSession(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<v1::AgentSessionResponse, v1::AgentSessionRequest>* stream) {
  return Serve(sc_, "AgentSession", ctx, true, [&](const Principal&) -> absl::Status {
    v1::AgentSessionRequest req;
    while (!stopping_ && stream->Read(&req)) {
      auto resp = scheduler_.Heartbeat(req.heartbeat());
      if (!resp.ok()) return resp.status();
      if (!stream->Write(*resp)) break;
    }
    return stopping_ ? absl::UnavailableError("server is shutting down") : absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::LeaseJob(grpc::ServerContext* ctx, const v1::LeaseJobRequest* req,
                                        v1::LeaseJobResponse* resp) {
  return Serve(sc_, "LeaseJob", ctx, true, [&](const Principal&) -> absl::Status {
    if (stopping_) return absl::UnavailableError("server is shutting down");
    if (req->wait_ms() < 0 || req->wait_ms() > 30'000) {
      return InvalidArgumentWithFields({{"wait_ms", "must be in 0..30000"}});
    }
    auto got = scheduler_.LeaseJob(*req, [&] { return ctx->IsCancelled() || stopping_.load(); });
    if (!got.ok()) return got.status();
    if (got->has_value()) *resp->mutable_assignment() = **got;
    return absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::ReportProgress(grpc::ServerContext* ctx,
                                              const v1::ReportProgressRequest* req,
                                              v1::ReportProgressResponse* resp) {
  return Serve(sc_, "ReportProgress", ctx, true, [&](const Principal&) -> absl::Status {
    auto cancel = scheduler_.ReportProgress(*req);
    if (!cancel.ok()) return cancel.status();
    resp->set_cancel_requested(*cancel);
    return absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::ReportResult(grpc::ServerContext* ctx,
                                            const v1::ReportResultRequest* req,
                                            v1::ReportResultResponse* resp) {
  return Serve(sc_, "ReportResult", ctx, true, [&](const Principal&) -> absl::Status {
    auto r = scheduler_.ReportResult(*req);
    if (!r.ok()) return r.status();
    *resp = *std::move(r);
    return absl::OkStatus();
  });
}

grpc::Status AgentServiceImpl::DownloadBundle(grpc::ServerContext* ctx,
                                              const v1::DownloadBundleRequest* req,
                                              grpc::ServerWriter<v1::DownloadBundleResponse>* writer) {
  return Serve(sc_, "DownloadBundle", ctx, true, [&](const Principal&) -> absl::Status {
    auto content = scheduler_.store().GetBundle(req->sha256());
    if (!content.ok()) return content.status();
    for (size_t off = 0; off == 0 || off < content->size(); off += kChunkBytes) {
      v1::DownloadBundleResponse chunk;
      if (off == 0) chunk.set_size_bytes(static_cast<int64_t>(content->size()));
      chunk.set_chunk(content->substr(off, kChunkBytes));
      if (!writer->Write(chunk)) return absl::CancelledError("agent went away");
    }
    return absl::OkStatus();
  });
}

}  // namespace npuperf::server
