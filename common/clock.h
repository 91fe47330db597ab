#pragma once

#include <chrono>
#include <cstdint>

#include "absl/synchronization/mutex.h"

namespace npuperf {

// Time source and timed waits for every binary (style.md §4, seam 2). Only
// common/clock.cc reads the std::chrono and absl clocks; every deadline,
// timestamp and sleep elsewhere goes through an injected Clock, so tests drive
// lease expiry, long-poll timeouts and job timeouts with
// tests/fakes/fake_clock.h (whose Advance wakes the waits below).
// Thread-safe: implementations may be called from any thread.
class Clock {
 public:
  using SystemTime = std::chrono::system_clock::time_point;
  using MonotonicTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;

  // Wall-clock time, for timestamps that are stored or shown.
  virtual SystemTime SystemNow() = 0;
  // Monotonic time, for deadlines, leases and durations.
  virtual MonotonicTime MonotonicNow() = 0;

  // Waits until cond is true or this clock reaches deadline. cond is
  // evaluated with mu held, as absl::Mutex::Await does: whatever makes it true
  // must change under mu. Returns cond's value on return.
  // REQUIRES: mu held.
  virtual bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                                 MonotonicTime deadline) = 0;

  // Blocks until this clock reaches deadline (or for d).
  void SleepUntil(MonotonicTime deadline);
  void SleepFor(std::chrono::nanoseconds d) { SleepUntil(MonotonicNow() + d); }
};

// The process clock.
class RealClock final : public Clock {
 public:
  SystemTime SystemNow() override;
  MonotonicTime MonotonicNow() override;
  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                         MonotonicTime deadline) override;
};

// Milliseconds since the Unix epoch of a system time point.
inline int64_t ToUnixMillis(Clock::SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// Seconds from `from` to `to` (negative when to is earlier).
inline double SecondsBetween(Clock::MonotonicTime from, Clock::MonotonicTime to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace npuperf
