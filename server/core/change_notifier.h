#pragma once

#include <cstdint>
#include <functional>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace npuperf::server {

// Event-driven wake-ups: a version counter bumped on every change of queue
// or job state; waiters sleep on it instead of polling the database. Waits
// go through the injected Clock, so a FakeClock drives their timeouts.
// Thread-safe; the clock must outlive the notifier.
class ChangeNotifier {
 public:
  explicit ChangeNotifier(Clock& clock) : clock_(clock) {}
  ChangeNotifier(const ChangeNotifier&) = delete;
  ChangeNotifier& operator=(const ChangeNotifier&) = delete;

  uint64_t version();
  void Notify();
  // Waits until the version exceeds `seen`, `timeout` (finite) passes on the
  // clock, or stop() is true. stop() changes without a notification, so it
  // is checked on every wake-up and at least every kStopCheckPeriod.
  // Returns the current version.
  uint64_t WaitNewer(uint64_t seen, absl::Duration timeout, const std::function<bool()>& stop);
  // Wakes every waiter (shutdown).
  void WakeAll();

 private:
  Clock& clock_;
  absl::Mutex mu_;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace npuperf::server
