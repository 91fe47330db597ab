#pragma once
// The deadline of the RPC the current thread serves, for the database to
// honour (style.md R9: deadlines carry into the DB). Serve() opens a scope
// around every handler; PgPool turns what is left into a statement timeout.
// Thread-local because a synchronous gRPC handler and every store call it
// makes run on one thread, and the Store seam has no per-call context to
// carry it (threading a deadline through its 30 methods would cost more than
// this one scope). Code outside any scope (the reaper, tools) has no deadline.
#include <algorithm>
#include <chrono>
#include <optional>

#include "absl/time/time.h"

namespace npuperf::server {

class DbDeadlineScope {
 public:
  // deadline: absl::InfiniteFuture() for none.
  explicit DbDeadlineScope(absl::Time deadline) : previous_(current_) { current_ = deadline; }
  // From a gRPC deadline (time_point::max() means none).
  explicit DbDeadlineScope(std::chrono::system_clock::time_point deadline)
      : DbDeadlineScope(deadline == std::chrono::system_clock::time_point::max()
                            ? absl::InfiniteFuture()
                            : absl::FromChrono(deadline)) {}
  ~DbDeadlineScope() { current_ = previous_; }
  DbDeadlineScope(const DbDeadlineScope&) = delete;
  DbDeadlineScope& operator=(const DbDeadlineScope&) = delete;

  // The innermost scope's deadline on this thread; InfiniteFuture when none.
  static absl::Time Current() { return current_; }
  // Current(), or `limit` after `now` when that is sooner: the deadline of one
  // step of a longer call (a heartbeat of an AgentSession stream, which often
  // has no deadline; a look of a LeaseJob long poll).
  static absl::Time Within(std::chrono::system_clock::time_point now,
                           std::chrono::milliseconds limit) {
    return std::min(current_, absl::FromChrono(now + limit));
  }

 private:
  const absl::Time previous_;
  static inline thread_local absl::Time current_ = absl::InfiniteFuture();
};

}  // namespace npuperf::server
