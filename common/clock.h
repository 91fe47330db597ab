#pragma once

#include <chrono>
#include <functional>

namespace npuperf {

// Time source for every binary (style.md §4, seam 2). Only RealClock reads the
// std::chrono clocks; tests use tests/fakes/fake_clock.h.
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
};

// The process clock.
class RealClock final : public Clock {
 public:
  SystemTime SystemNow() override { return std::chrono::system_clock::now(); }
  MonotonicTime MonotonicNow() override { return std::chrono::steady_clock::now(); }
};

// Milliseconds since the Unix epoch of a system time point.
inline int64_t ToUnixMillis(Clock::SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

inline Clock::SystemTime FromUnixMillis(int64_t ms) {
  return Clock::SystemTime(std::chrono::milliseconds(ms));
}

}  // namespace npuperf
