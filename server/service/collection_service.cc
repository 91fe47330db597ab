#include "server/service/collection_service.h"

#include "absl/strings/str_cat.h"
#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

// The job that differs between two snapshots (first by id), if any.
const v1::Job* ChangedJob(const v1::Collection& before, const v1::Collection& after) {
  for (int i = 0; i < after.jobs_size(); ++i) {
    if (i >= before.jobs_size() ||
        before.jobs(i).SerializeAsString() != after.jobs(i).SerializeAsString()) {
      return &after.jobs(i);
    }
  }
  return nullptr;
}

}  // namespace

CollectionServiceImpl::CollectionServiceImpl(Scheduler& scheduler, ServiceContext sc,
                                             std::atomic<bool>& stopping)
    : scheduler_(scheduler), sc_(sc), stopping_(stopping) {}

grpc::Status CollectionServiceImpl::SubmitCollection(grpc::ServerContext* ctx,
                                                     const v1::SubmitCollectionRequest* req,
                                                     v1::SubmitCollectionResponse* resp) {
  return Serve(sc_, "SubmitCollection", ctx, false, [&](const Principal& p) -> absl::Status {
    if (stopping_) return absl::UnavailableError("server is shutting down");
    auto result = scheduler_.Submit(p.name, *req);
    if (!result.ok()) return result.status();
    *resp->mutable_collection() = std::move(result->first);
    resp->set_created(result->second);
    return absl::OkStatus();
  });
}

grpc::Status CollectionServiceImpl::GetCollection(grpc::ServerContext* ctx,
                                                  const v1::GetCollectionRequest* req,
                                                  v1::GetCollectionResponse* resp) {
  return Serve(sc_, "GetCollection", ctx, false, [&](const Principal& p) -> absl::Status {
    auto c = scheduler_.store().GetCollection(p.name, req->collection_id());
    if (!c.ok()) return c.status();
    *resp->mutable_collection() = *std::move(c);
    return absl::OkStatus();
  });
}

grpc::Status CollectionServiceImpl::ListCollections(grpc::ServerContext* ctx,
                                                    const v1::ListCollectionsRequest* req,
                                                    v1::ListCollectionsResponse* resp) {
  return Serve(sc_, "ListCollections", ctx, false, [&](const Principal& p) -> absl::Status {
    CollectionFilter f;
    f.team = p.name;
    for (int st : req->states()) f.states.push_back(static_cast<v1::CollectionState>(st));
    f.labels = {req->labels().begin(), req->labels().end()};
    if (req->page_size() < 0 || req->page_size() > 500) {
      return InvalidArgumentWithFields({{"page_size", "must be in 0..500"}});
    }
    f.limit = req->page_size() == 0 ? 50 : req->page_size();
    if (!req->page_token().empty()) {
      const auto sep = req->page_token().find(':');
      if (sep == std::string::npos) return InvalidArgumentWithFields({{"page_token", "malformed"}});
      f.before_created_ms = std::stoll(req->page_token().substr(0, sep));
      f.before_id = req->page_token().substr(sep + 1);
    }
    auto list = scheduler_.store().ListCollections(f);
    if (!list.ok()) return list.status();
    for (auto& c : *list) *resp->add_collections() = std::move(c);
    if (resp->collections_size() == f.limit) {
      const auto& last = resp->collections(resp->collections_size() - 1);
      resp->set_next_page_token(absl::StrCat(
          last.created_at().seconds() * 1000 + last.created_at().nanos() / 1'000'000, ":", last.id()));
    }
    return absl::OkStatus();
  });
}

grpc::Status CollectionServiceImpl::WatchCollection(
    grpc::ServerContext* ctx, const v1::WatchCollectionRequest* req,
    grpc::ServerWriter<v1::WatchCollectionResponse>* writer) {
  return Serve(sc_, "WatchCollection", ctx, false, [&](const Principal& p) -> absl::Status {
    v1::Collection last;
    int64_t sequence = 0;
    uint64_t seen = 0;
    auto stop = [&] { return ctx->IsCancelled() || stopping_.load(); };
    while (true) {
      seen = scheduler_.updates().version();
      auto c = scheduler_.store().GetCollection(p.name, req->collection_id());
      if (!c.ok()) return c.status();
      if (sequence == 0 || c->SerializeAsString() != last.SerializeAsString()) {
        v1::WatchCollectionResponse event;
        *event.mutable_collection() = *c;
        if (sequence > 0) {
          if (const v1::Job* j = ChangedJob(last, *c)) *event.mutable_changed_job() = *j;
        }
        event.set_sequence(++sequence);
        if (!writer->Write(event)) return absl::CancelledError("watcher went away");
        last = *std::move(c);
      }
      if (IsTerminal(last.state())) return absl::OkStatus();
      if (stop()) return absl::UnavailableError("server is shutting down or client cancelled");
      scheduler_.updates().WaitNewer(seen, absl::Seconds(5), stop);
    }
  });
}

grpc::Status CollectionServiceImpl::CancelCollection(grpc::ServerContext* ctx,
                                                     const v1::CancelCollectionRequest* req,
                                                     v1::CancelCollectionResponse* resp) {
  return Serve(sc_, "CancelCollection", ctx, false, [&](const Principal& p) -> absl::Status {
    auto c = scheduler_.Cancel(p.name, req->collection_id(), req->reason());
    if (!c.ok()) return c.status();
    *resp->mutable_collection() = *std::move(c);
    return absl::OkStatus();
  });
}

grpc::Status CollectionServiceImpl::UploadBundle(grpc::ServerContext* ctx,
                                                 grpc::ServerReader<v1::UploadBundleRequest>* reader,
                                                 v1::UploadBundleResponse* resp) {
  return Serve(sc_, "UploadBundle", ctx, false, [&](const Principal& p) -> absl::Status {
    const int64_t limit = scheduler_.options().max_bundle_bytes;
    v1::UploadBundleRequest msg;
    if (!reader->Read(&msg) || !msg.has_header()) {
      return InvalidArgumentWithFields({{"header", "the first message must be a BundleHeader"}});
    }
    const v1::BundleHeader header = msg.header();
    if (!IsSha256Hex(header.sha256())) {
      return InvalidArgumentWithFields({{"header.sha256", "must be 64 lowercase hex digits"}});
    }
    if (header.size_bytes() <= 0 || header.size_bytes() > limit) {
      return absl::ResourceExhaustedError(
          absl::StrCat("bundle of ", header.size_bytes(), " bytes; the limit is ", limit));
    }
    std::string content;
    Sha256 hash;
    while (reader->Read(&msg)) {
      if (!msg.has_chunk()) return InvalidArgumentWithFields({{"chunk", "expected tar bytes"}});
      if (static_cast<int64_t>(content.size() + msg.chunk().size()) > header.size_bytes()) {
        return InvalidArgumentWithFields({{"header.size_bytes", "more bytes than announced"}});
      }
      hash.Update(msg.chunk());
      content += msg.chunk();
    }
    if (static_cast<int64_t>(content.size()) != header.size_bytes()) {
      return InvalidArgumentWithFields({{"header.size_bytes", "fewer bytes than announced"}});
    }
    if (hash.HexDigest() != header.sha256()) {
      return InvalidArgumentWithFields({{"header.sha256", "does not match the uploaded bytes"}});
    }
    if (auto s = VerifyBundle(content, limit * 4); !s.ok()) return s;
    auto existed = scheduler_.PutBundle(p.name, header.name(), header.sha256(), content);
    if (!existed.ok()) return existed.status();
    resp->set_sha256(header.sha256());
    resp->set_size_bytes(header.size_bytes());
    resp->set_already_present(*existed);
    return absl::OkStatus();
  });
}

}  // namespace npuperf::server
