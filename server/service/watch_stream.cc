#include "server/service/watch_stream.h"

#include <utility>

#include "common/status_util.h"
#include "server/core/job_state.h"

namespace npuperf::server {

grpc::ServerWriteReactor<v1::WatchCollectionResponse>* WatchStream::Open(
    ServiceContext sc, WatchHub& hub, grpc::CallbackServerContext* ctx,
    const v1::WatchCollectionRequest& req) {
  auto stream = std::make_shared<WatchStream>(sc, hub);
  {
    absl::MutexLock lock(&stream->mu_);
    stream->self_ = stream;
  }
  stream->Start(ctx, req);
  return stream.get();
}

WatchStream::WatchStream(ServiceContext sc, WatchHub& hub)
    : sc_(sc), hub_(hub), started_(sc.clock.MonotonicNow()) {}

void WatchStream::Start(grpc::CallbackServerContext* ctx, const v1::WatchCollectionRequest& req) {
  auto principal = Authorize(sc_, *ctx, PrincipalKind::kTeam);
  absl::StatusOr<WatchHub::Subscription> sub =
      principal.ok() ? hub_.Subscribe(principal->name, req.collection_id(), shared_from_this())
                     : absl::StatusOr<WatchHub::Subscription>(principal.status());
  absl::MutexLock lock(&mu_);
  if (!sub.ok()) return End(sub.status());
  subscription_ = sub->id;
  WatchChange first;
  first.collection = sub->snapshot;
  event_ = WatchEvent(first, /*full=*/true, ++sequence_);
  last_written_ = IsTerminal(first.collection->state());
  writing_ = true;
  StartWrite(&event_);
}

void WatchStream::OnChange(std::shared_ptr<const WatchChange> change) {
  absl::MutexLock lock(&mu_);
  if (ended_) return;
  pending_ = std::move(change);
  ++pending_count_;
  WriteNext();
}

void WatchStream::OnStop() {
  absl::MutexLock lock(&mu_);
  subscription_ = 0;
  End(absl::UnavailableError("server is shutting down"));
}

void WatchStream::WriteNext() {
  if (writing_ || ended_) return;
  if (last_written_) return End(absl::OkStatus());
  if (pending_ == nullptr) return;
  event_ = WatchEvent(*pending_, /*full=*/pending_count_ > 1, ++sequence_);
  last_written_ = IsTerminal(pending_->collection->state());
  pending_ = nullptr;
  pending_count_ = 0;
  writing_ = true;
  StartWrite(&event_);
}

void WatchStream::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
  if (!ok) return End(absl::CancelledError("watcher went away"));
  WriteNext();
}

void WatchStream::OnCancel() {
  absl::MutexLock lock(&mu_);
  End(absl::CancelledError("watcher went away"));
}

void WatchStream::End(const absl::Status& status) {
  if (ended_) return;
  ended_ = true;
  pending_ = nullptr;
  if (subscription_ != 0) hub_.Unsubscribe(subscription_);
  subscription_ = 0;
  CountFinished(sc_, "WatchCollection", started_, status.code());
  Finish(ToGrpcStatus(status));
}

void WatchStream::OnDone() {
  std::shared_ptr<WatchStream> self;
  absl::MutexLock lock(&mu_);
  if (subscription_ != 0) hub_.Unsubscribe(subscription_);
  subscription_ = 0;
  ended_ = true;
  self.swap(self_);  // released after the lock (the hub may hold the last reference)
}

}  // namespace npuperf::server
