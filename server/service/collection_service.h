#pragma once

#include <atomic>

#include "npuperf/v1/collection_service.grpc.pb.h"
#include "server/compare/timelines.h"
#include "server/core/read_queries.h"
#include "server/core/scheduler.h"
#include "server/service/serve.h"

namespace npuperf::server {

// gRPC adapter for CollectionService (team tokens): Serve, then the
// Scheduler (writes) or ReadQueries (reads, watches), which check the
// requests. Uses the synchronous API with grpc's bounded thread pool
// (style.md §6 allows it for v1), except WatchCollection: a callback
// stream (watch_stream.h), so idle watchers hold no thread. Thread-safe.
class CollectionServiceImpl final
    : public v1::CollectionService::WithCallbackMethod_WatchCollection<
          v1::CollectionService::Service> {
 public:
  CollectionServiceImpl(Scheduler& scheduler, ReadQueries& reads, Timelines& timelines,
                        ServiceContext sc, std::atomic<bool>& stopping);

  grpc::Status SubmitCollection(grpc::ServerContext* ctx, const v1::SubmitCollectionRequest* req,
                                v1::SubmitCollectionResponse* resp) override;
  grpc::Status GetCollection(grpc::ServerContext* ctx, const v1::GetCollectionRequest* req,
                             v1::GetCollectionResponse* resp) override;
  grpc::Status ListCollections(grpc::ServerContext* ctx, const v1::ListCollectionsRequest* req,
                               v1::ListCollectionsResponse* resp) override;
  grpc::ServerWriteReactor<v1::WatchCollectionResponse>* WatchCollection(
      grpc::CallbackServerContext* ctx, const v1::WatchCollectionRequest* req) override;
  grpc::Status CancelCollection(grpc::ServerContext* ctx, const v1::CancelCollectionRequest* req,
                                v1::CancelCollectionResponse* resp) override;
  grpc::Status UploadBundle(grpc::ServerContext* ctx,
                            grpc::ServerReader<v1::UploadBundleRequest>* reader,
                            v1::UploadBundleResponse* resp) override;
  grpc::Status SubmitTimeline(grpc::ServerContext* ctx, const v1::SubmitTimelineRequest* req,
                              v1::SubmitTimelineResponse* resp) override;

 private:
  Scheduler& scheduler_;
  ReadQueries& reads_;
  Timelines& timelines_;
  ServiceContext sc_;
  std::atomic<bool>& stopping_;
};

}  // namespace npuperf::server
