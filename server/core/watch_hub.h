#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "npuperf/v1/collection_service.pb.h"
#include "server/core/metrics.h"
#include "server/store/store.h"

namespace npuperf::server {

// Limits of WatchCollection streams (SchedulerOptions::watches; flags of
// npuperf-server). Every field has its default.
struct WatchOptions {
  // Streams open at once per team and in total (RESOURCE_EXHAUSTED past
  // them). Default: 1,000 and 20,000.
  int max_per_team = 1'000;
  int max_total = 20'000;
  // A watched collection is read again this long after its last read even
  // without a change notification (a safety net for changes another
  // replica made without notifying, such as a lease). Default: 30 s.
  std::chrono::milliseconds reread{30'000};
};

// One change of a watched collection, made once and shared by every
// watcher of it.
struct WatchChange {
  // The collection after the change, with all its jobs.
  std::shared_ptr<const v1::Collection> collection;
  // Indices into collection->jobs of the jobs that changed (new or
  // different), in job id order.
  std::vector<int> changed;
};

// The event a watcher sends for a change: a full snapshot (all jobs;
// full_snapshot set) or the collection without jobs plus the changed jobs.
// Pure.
v1::WatchCollectionResponse WatchEvent(const WatchChange& change, bool full, int64_t sequence);

// Receives the changes of one watched collection: a WatchCollection stream
// (service/watch_reactor.h). Called on the hub's thread, never with a hub
// lock held; must not block. Thread-safe.
class WatchListener {
 public:
  virtual ~WatchListener() = default;
  // A change. The collection may be terminal: it is the last call.
  virtual void OnChange(std::shared_ptr<const WatchChange> change) = 0;
  // The hub stops (the server is shutting down): the last call.
  virtual void OnStop() = 0;
};

// The fan-out of WatchCollection: one store read per change per watched
// collection, shared by all its watchers. Changes are marked (Changed,
// JobChanged, ChangedAll; the Scheduler calls them) and read by the hub's
// thread, which coalesces what arrives while it reads; a watched
// collection is also reread WatchOptions::reread after its last read. Idle
// watchers cost no thread and no timer: the thread wakes on a mark, and
// once a second when rereads are due. Waits on the injected clock.
// Thread-safe; store, clock and metrics must outlive it.
class WatchHub {
 public:
  WatchHub(Store& store, Clock& clock, ServerMetrics& metrics, WatchOptions options);
  // Stop()s.
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  struct Subscription {
    uint64_t id = 0;  // 0: not subscribed (the collection is already terminal)
    // The collection as the watcher's first event shows it; later changes
    // are relative to it.
    std::shared_ptr<const v1::Collection> snapshot;
  };
  // Watches team's collection: NOT_FOUND when it is absent or another
  // team's; RESOURCE_EXHAUSTED when the team or the server holds every
  // stream it may; UNAVAILABLE once stopped. Changes go to listener until
  // it is unsubscribed, the collection is terminal or the hub stops.
  absl::StatusOr<Subscription> Subscribe(const std::string& team, const std::string& collection_id,
                                         std::shared_ptr<WatchListener> listener);
  // Ends a subscription (idempotent). The listener may still get a call
  // already under way.
  void Unsubscribe(uint64_t id);

  // Something changed in the collection / in the job's collection / in any
  // collection (another replica: unknown which).
  void Changed(const std::string& collection_id);
  void JobChanged(int64_t job_id);
  void ChangedAll();

  // Ends the thread, then calls OnStop of every listener. Idempotent.
  void Stop();
  // Subscriptions open.
  int watchers();

 private:
  // A watched collection.
  struct Channel {
    std::string team;
    std::shared_ptr<const v1::Collection> latest;
    std::set<uint64_t> watchers;
    Clock::MonotonicTime next_read;
  };
  struct Watcher {
    std::string team;
    std::string collection_id;
    std::shared_ptr<WatchListener> listener;
  };

  // RESOURCE_EXHAUSTED past the caps, UNAVAILABLE once stopped.
  absl::Status Admit(const std::string& team) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds a watcher of collection_id, creating its channel from fresh when
  // it has none.
  Subscription Register(const std::string& team, const std::string& collection_id,
                        std::shared_ptr<WatchListener> listener,
                        std::shared_ptr<const v1::Collection> fresh)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run();
  // The collection as GetCollection reads it, with its waiting_reason.
  absl::StatusOr<v1::Collection> Read(const std::string& team, const std::string& collection_id);
  // Reads one collection and delivers its change, if any.
  void Refresh(const std::string& collection_id);
  // The collections to read now: marked ones and those due for a reread.
  std::vector<std::string> TakeDue() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void IndexJobs(const std::string& collection_id, const v1::Collection& c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropChannel(const std::string& collection_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveWatcher(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  const WatchOptions options_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool all_dirty_ ABSL_GUARDED_BY(mu_) = false;
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Channel> channels_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::string> job_collection_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Watcher> watchers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> per_team_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace npuperf::server
