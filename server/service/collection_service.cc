#include "server/service/collection_service.h"

#include "server/service/watch_stream.h"

namespace npuperf::server {

CollectionServiceImpl::CollectionServiceImpl(Scheduler& scheduler, ReadQueries& reads,
                                             Timelines& timelines, ServiceContext sc,
                                             std::atomic<bool>& stopping)
    : scheduler_(scheduler), reads_(reads), timelines_(timelines), sc_(sc), stopping_(stopping) {}

grpc::Status CollectionServiceImpl::SubmitTimeline(grpc::ServerContext* ctx,
                                                   const v1::SubmitTimelineRequest* req,
                                                   v1::SubmitTimelineResponse* resp) {
  return Serve(sc_, "SubmitTimeline", ctx, PrincipalKind::kTeam,
               [&](const Principal& p) -> absl::Status {
                 if (stopping_) return absl::UnavailableError("server is shutting down");
                 auto result = timelines_.Submit(p.name, *req);
                 if (!result.ok()) return result.status();
                 *resp = *std::move(result);
                 return absl::OkStatus();
               });
}

grpc::Status CollectionServiceImpl::SubmitCollection(grpc::ServerContext* ctx,
                                                     const v1::SubmitCollectionRequest* req,
                                                     v1::SubmitCollectionResponse* resp) {
  return Serve(sc_, "SubmitCollection", ctx, PrincipalKind::kTeam,
               [&](const Principal& p) -> absl::Status {
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
  return ServeReply(sc_, "GetCollection", ctx, PrincipalKind::kTeam, resp,
                    [&](const Principal& p) { return reads_.GetCollection(p.name, *req); });
}

grpc::Status CollectionServiceImpl::ListCollections(grpc::ServerContext* ctx,
                                                    const v1::ListCollectionsRequest* req,
                                                    v1::ListCollectionsResponse* resp) {
  return ServeReply(sc_, "ListCollections", ctx, PrincipalKind::kTeam, resp,
                    [&](const Principal& p) { return reads_.ListCollections(p.name, *req); });
}

grpc::ServerWriteReactor<v1::WatchCollectionResponse>* CollectionServiceImpl::WatchCollection(
    grpc::CallbackServerContext* ctx, const v1::WatchCollectionRequest* req) {
  return WatchStream::Open(sc_, scheduler_.watches(), ctx, *req);
}

grpc::Status CollectionServiceImpl::CancelCollection(grpc::ServerContext* ctx,
                                                     const v1::CancelCollectionRequest* req,
                                                     v1::CancelCollectionResponse* resp) {
  return Serve(sc_, "CancelCollection", ctx, PrincipalKind::kTeam,
               [&](const Principal& p) -> absl::Status {
                 auto c = scheduler_.Cancel(p.name, req->collection_id(), req->reason());
                 if (!c.ok()) return c.status();
                 *resp->mutable_collection() = *std::move(c);
                 return absl::OkStatus();
               });
}

grpc::Status CollectionServiceImpl::UploadBundle(
    grpc::ServerContext* ctx, grpc::ServerReader<v1::UploadBundleRequest>* reader,
    v1::UploadBundleResponse* resp) {
  return ServeReply(sc_, "UploadBundle", ctx, PrincipalKind::kTeam, resp, [&](const Principal& p) {
    return scheduler_.UploadBundle(
        p.name, [reader](v1::UploadBundleRequest* msg) { return reader->Read(msg); });
  });
}

}  // namespace npuperf::server
