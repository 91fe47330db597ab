#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "npuperf/v1/collection_service.pb.h"
#include "server/core/watch_hub.h"
#include "server/service/serve.h"

namespace npuperf::server {

// One WatchCollection stream on gRPC's callback API: no thread of its own
// and no timer. It authorizes the caller, subscribes to the WatchHub, writes
// the snapshot and then one event per change the hub delivers, one write in
// flight at a time; a watcher that falls behind (a change arrives while a
// write is pending and another follows) gets the latest full snapshot
// instead of the missed deltas. Ends OK after the terminal event,
// CANCELLED when the client goes away, UNAVAILABLE when the hub stops.
// Owns itself from Start() until gRPC's OnDone and the hub let it go.
class WatchStream final : public grpc::ServerWriteReactor<v1::WatchCollectionResponse>,
                          public WatchListener,
                          public std::enable_shared_from_this<WatchStream> {
 public:
  // The reactor gRPC gets for one call (Start()ed).
  static grpc::ServerWriteReactor<v1::WatchCollectionResponse>* Open(
      ServiceContext sc, WatchHub& hub, grpc::CallbackServerContext* ctx,
      const v1::WatchCollectionRequest& req);

  WatchStream(ServiceContext sc, WatchHub& hub);

  // WatchListener.
  void OnChange(std::shared_ptr<const WatchChange> change) override;
  void OnStop() override;

  // grpc::ServerWriteReactor.
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void Start(grpc::CallbackServerContext* ctx, const v1::WatchCollectionRequest& req);
  // Writes the next event if none is in flight.
  void WriteNext() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void End(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ServiceContext sc_;
  WatchHub& hub_;
  const Clock::MonotonicTime started_;  // the handling time's start
  absl::Mutex mu_;
  std::shared_ptr<WatchStream> self_ ABSL_GUARDED_BY(mu_);  // until OnDone
  uint64_t subscription_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  bool last_written_ ABSL_GUARDED_BY(mu_) = false;  // the terminal event went out
  // Changes not yet written: the latest and how many arrived since the last
  // write (more than one: resync with a full snapshot).
  std::shared_ptr<const WatchChange> pending_ ABSL_GUARDED_BY(mu_);
  int pending_count_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  v1::WatchCollectionResponse event_ ABSL_GUARDED_BY(mu_);  // the write in flight
};

}  // namespace npuperf::server
