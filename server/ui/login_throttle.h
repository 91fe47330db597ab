// Failed logins of the web pages per peer address: after kMaxFailures
// within kWindow a peer is refused (429) until its oldest failure of the
// window ages out. Driven by the injected Clock. Memory is bounded: at most
// kMaxFailures times per peer and kMaxPeers peers; a new peer at the cap
// first drops peers whose failures all aged out, then the peer whose newest
// failure is oldest. (Behind a reverse proxy every browser shares the
// proxy's address: docs/security.md.) Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace npuperf::server::ui {

class LoginThrottle {
 public:
  static constexpr int kMaxFailures = 5;
  static constexpr std::chrono::minutes kWindow{15};
  static constexpr size_t kMaxPeers = 10'000;

  explicit LoginThrottle(Clock& clock) : clock_(clock) {}

  // Whether `peer` may try a token now.
  bool Allowed(const std::string& peer);
  void RecordFailure(const std::string& peer);
  // A good token forgets the peer's failures.
  void RecordSuccess(const std::string& peer);

  size_t TrackedPeersForTest();

 private:
  using Times = std::deque<Clock::MonotonicTime>;
  // Drops the times of `t` older than the window.
  static void Expire(Times& t, Clock::MonotonicTime now);
  // Makes room for one more peer. REQUIRES: mu_ held.
  void MakeRoom(Clock::MonotonicTime now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock& clock_;
  absl::Mutex mu_;
  std::map<std::string, Times> failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server::ui
