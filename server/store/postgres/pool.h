#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/store/db_deadline.h"
#include "server/store/store.h"

namespace npuperf::server {

// A fixed set of PostgreSQL connections for PostgresStore. Each connection is
// used by one thread at a time (libpqxx doc/thread-safety.md: a connection
// and everything made from it is one single-threaded world). Connections open
// lazily, get every prepared statement of postgres_statements.cc, and are
// reopened after a broken connection. Thread-safe.
class PgPool {
 public:
  // url: a libpq connection string or postgres:// URI. size >= 1.
  PgPool(std::string url, int size);
  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  // Runs body(pqxx::work&) in a read-committed transaction and commits when
  // it returns OK; any other status rolls back. body returns absl::Status or
  // absl::StatusOr<T>. Exceptions never leave (style.md R3):
  // serialization failure / deadlock -> rerun the whole body up to
  // kMaxAttempts times, then ABORTED; broken connection -> one rerun on a
  // fresh connection, then UNAVAILABLE; unique violation -> ALREADY_EXISTS
  // (rerun instead when retry_unique: a concurrent replica won a race the
  // body will see on the next run); in-doubt commit -> UNKNOWN (never
  // rerun); anything else -> INTERNAL. `what` prefixes the message.
  // Under a DbDeadlineScope the statements stop at its deadline (rounded up
  // to the next whole second): DEADLINE_EXCEEDED, never rerun, and nothing
  // is started once it has passed.
  template <typename F>
  auto Run(absl::string_view what, F&& body, bool retry_unique = false)
      -> decltype(body(std::declval<pqxx::work&>())) {
    return RunIn<pqxx::work>(what, std::forward<F>(body), retry_unique, /*rerun_broken=*/true);
  }

  // Like Run, but body(pqxx::nontransaction&) runs each statement in its own
  // transaction (autocommit): no BEGIN and COMMIT round trips. For bodies
  // that read, then write in a single statement or function call that is
  // safe to rerun after a serialization failure or unique violation. A
  // broken connection is never rerun (a statement in flight may have
  // committed): UNAVAILABLE.
  template <typename F>
  auto RunAutocommit(absl::string_view what, F&& body, bool retry_unique = false)
      -> decltype(body(std::declval<pqxx::nontransaction&>())) {
    return RunIn<pqxx::nontransaction>(what, std::forward<F>(body), retry_unique,
                                       /*rerun_broken=*/false);
  }

  static constexpr int kMaxAttempts = 8;

 private:
  struct Slot {
    std::unique_ptr<pqxx::connection> conn;
    bool busy = false;
    int64_t statement_timeout_s = 0;  // as set on conn; 0: none
  };
  // What to do after an attempt that ended in an exception.
  struct Failure {
    bool rerun = false;
    bool discard = false;  // the connection is unusable: drop it
  };

  template <typename Tx, typename F>
  auto RunIn(absl::string_view what, F&& body, bool retry_unique, bool rerun_broken)
      -> decltype(body(std::declval<Tx&>()));

  bool HasFreeSlot() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Borrows a free slot, opening its connection if needed.
  absl::StatusOr<Slot*> Acquire();
  // Sets the slot's statement_timeout for the current DbDeadlineScope (a
  // round trip only when the whole seconds left change). DEADLINE_EXCEEDED
  // when the deadline has passed.
  static absl::Status ApplyDeadline(Slot& slot, absl::string_view what);
  // Returns a slot; discard drops its connection (broken or unusable).
  void Release(Slot* slot, bool discard);
  // Maps the exception in flight to a status and says whether to rerun.
  static Failure Classify(absl::string_view what, bool retry_unique, int attempt,
                          absl::Status* status);
  static void Backoff(int attempt);

  const std::string url_;
  absl::Mutex mu_;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
};

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
// (up to 5 s) and calls the callback once with kClaimable, since
// notifications may have been missed meanwhile. Thread-safe.
class PgListener {
 public:
  PgListener(std::string url, std::string self_id);
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
  // Sleeps up to ms, waking early on stop. Returns false on stop.
  bool Pause(int ms);
  void Fire(StoreChange change);

  const std::string url_;
  const std::string self_id_;
  int wake_[2] = {-1, -1};  // pipe: a byte in wake_[1] interrupts poll()
  absl::Mutex mu_;
  std::function<void(StoreChange)> fn_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started by the first SetCallback (under mu_)
};

template <typename Tx, typename F>
auto PgPool::RunIn(absl::string_view what, F&& body, bool retry_unique, bool rerun_broken)
    -> decltype(body(std::declval<Tx&>())) {
  absl::Status last = absl::UnavailableError(std::string(what));
  bool fresh_used = false;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    auto slot = Acquire();
    if (!slot.ok()) return slot.status();
    try {
      if (absl::Status d = ApplyDeadline(**slot, what); !d.ok()) {
        Release(*slot, false);
        return d;
      }
      decltype(body(std::declval<Tx&>())) result;
      {  // the transaction ends (commit or abort) before the slot is shared again
        Tx tx(*(*slot)->conn);
        result = body(tx);
        if (result.ok()) tx.commit();
      }
      Release(*slot, false);
      return result;
    } catch (...) {
      const Failure f = Classify(what, retry_unique, attempt, &last);
      Release(*slot, f.discard);
      if (!f.rerun || attempt == kMaxAttempts) return last;
      if (f.discard && !rerun_broken) return last;
      if (f.discard) {  // broken connection: one rerun on a fresh one
        if (fresh_used) return last;
        fresh_used = true;
      }
    }
    Backoff(attempt);
  }
  return last;
}

}  // namespace npuperf::server
