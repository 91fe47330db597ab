#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/store/db_deadline.h"

namespace npuperf::server {

// A fixed set of PostgreSQL connections for PostgresStore. Each connection is
// used by one thread at a time (libpqxx doc/thread-safety.md: a connection
// and everything made from it is one single-threaded world); a caller finding
// every connection busy waits for one, without a deadline. Connections open
// lazily, get every prepared statement of statements.cc, and are reopened
// after a broken connection. Time comes from the injected Clock: the time
// left to a call's deadline, and the backoff between reruns. Thread-safe.
class PgPool {
 public:
  // url: a libpq connection string or postgres:// URI. size >= 1. clock
  // must outlive the pool.
  PgPool(std::string url, int size, Clock& clock);
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
  // rerun); anything else -> INTERNAL. `what` prefixes the message. A rerun
  // first waits a random backoff of up to 2, 4, 8, 16, then 32 ms
  // (clock.SleepFor), so colliding transactions spread apart.
  // Under a DbDeadlineScope the statements stop at its deadline (rounded up
  // to the next whole second, and beyond 10 s to the next multiple of 5 s:
  // WantedTimeout): DEADLINE_EXCEEDED, never rerun, and nothing is started
  // once it has passed.
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
  // The statement_timeout, in whole seconds (0: none), for the current
  // DbDeadlineScope: what is left by clock_, rounded up to whole seconds,
  // and beyond kExactTimeoutS, less kTimeoutToleranceMs, up to a multiple of
  // kTimeoutStepS (a statement may end up to a second before a long deadline,
  // or up to 5 s after it), so that
  // calls of similar deadlines (an agent's 15 s reports, its 20 s long polls
  // at any point of their wait) want the same few values and find a
  // connection already set (fleet_bench: 2.3 SETs a job with whole seconds
  // alone). DEADLINE_EXCEEDED when the deadline has passed.
  absl::StatusOr<int64_t> WantedTimeout(absl::string_view what) const;
  static constexpr int64_t kExactTimeoutS = 10;
  static constexpr int64_t kTimeoutStepS = 5;
  static constexpr int64_t kTimeoutToleranceMs = 1'000;
  // Borrows a free slot, opening its connection if needed. Prefers an open
  // one whose statement_timeout is timeout_s already: calls of different
  // deadlines (agents' reports, long polls, streams without one) otherwise
  // kept resetting it, a round trip each (fleet_bench: 2.4 per job).
  absl::StatusOr<Slot*> Acquire(int64_t timeout_s);
  // Sets the slot's statement_timeout to timeout_s when it differs.
  void ApplyTimeout(Slot& slot, int64_t timeout_s);
  // Returns a slot; discard drops its connection (broken or unusable).
  void Release(Slot* slot, bool discard);
  // Maps the exception in flight to a status and says whether to rerun.
  static Failure Classify(absl::string_view what, bool retry_unique, int attempt,
                          absl::Status* status);
  // Sleeps (on clock_) before rerun number `attempt`.
  void Backoff(int attempt);

  const std::string url_;
  Clock& clock_;
  absl::Mutex mu_;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
};

template <typename Tx, typename F>
auto PgPool::RunIn(absl::string_view what, F&& body, bool retry_unique, bool rerun_broken)
    -> decltype(body(std::declval<Tx&>())) {
  absl::Status last = absl::UnavailableError(std::string(what));
  bool fresh_used = false;
  for (int attempt = 1; attempt <= kMaxAttempts; ++attempt) {
    // Read before every attempt (a rerun after a backoff has less time), and
    // again once a connection is free: waiting for one counts too.
    absl::StatusOr<int64_t> wanted = WantedTimeout(what);
    if (!wanted.ok()) return wanted.status();
    auto slot = Acquire(*wanted);
    if (!slot.ok()) return slot.status();
    const absl::StatusOr<int64_t> timeout = WantedTimeout(what);
    if (!timeout.ok()) {
      Release(*slot, false);
      return timeout.status();
    }
    try {
      ApplyTimeout(**slot, *timeout);
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
