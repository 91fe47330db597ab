#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/store/store.h"

namespace npuperf::server {

// The NOTIFY channels on which replicas announce changes; the payload is the
// sender's id. Jobs: jobs became claimable (submitted, requeued, or a device
// freed). Updates: a collection changed and nothing became claimable
// (progress, cancellation).
inline constexpr char kPgJobsChannel[] = "npuperf_jobs";
inline constexpr char kPgUpdatesChannel[] = "npuperf_updates";

// Listens on both channels on a dedicated connection and thread, and calls
// the callback for every notification another replica sent (kClaimable for
// kPgJobsChannel, kUpdated for kPgUpdatesChannel; payloads equal to self_id
// are this replica's own and skipped: its scheduler already knows). The
// thread starts with the first callback and sleeps in poll() on the
// connection's socket. After a broken connection it reconnects with backoff
// (200 ms, doubling up to 5 s, waited on the injected Clock) and calls the
// callback once with kClaimable, since notifications may have been missed
// meanwhile. pqxx stays in listener.cc. Thread-safe.
class PgListener {
 public:
  // clock must outlive the listener.
  PgListener(std::string url, std::string self_id, Clock& clock);
  ~PgListener();  // stops and joins the thread
  PgListener(const PgListener&) = delete;
  PgListener& operator=(const PgListener&) = delete;

  // Replaces the callback (nullptr: none). After it returns, the previous
  // callback is never called again.
  void SetCallback(std::function<void(StoreChange)> fn);

 private:
  class Receiver;

  void Loop();
  // One connection's lifetime: LISTEN, then wait and dispatch until stop or
  // an exception. Returns false on stop; *connected once LISTEN succeeded.
  bool ListenOnce(bool reconnected, bool* connected);
  // Waits d on the clock, waking early on stop. Returns false on stop.
  bool Pause(std::chrono::milliseconds d);
  void Fire(StoreChange change);

  const std::string url_;
  const std::string self_id_;
  Clock& clock_;
  int wake_[2] = {-1, -1};  // pipe: a byte in wake_[1] interrupts poll()
  absl::Mutex mu_;
  std::function<void(StoreChange)> fn_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;  // set by the destructor
  // Started by the first SetCallback (under mu_), joined by the destructor
  // (without mu_: the thread takes it to fire).
  std::thread thread_;
};

}  // namespace npuperf::server
