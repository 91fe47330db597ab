#pragma once

#include <chrono>
#include <mutex>

#include "common/clock.h"

namespace npuperf::testing {

// A Clock that moves only when told (mesos Clock::advance, Envoy
// SimulatedTimeSystem). Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(SystemTime start = SystemTime(std::chrono::seconds(1'800'000'000)))
      : system_(start) {}

  SystemTime SystemNow() override {
    std::lock_guard<std::mutex> lock(mu_);
    return system_;
  }
  MonotonicTime MonotonicNow() override {
    std::lock_guard<std::mutex> lock(mu_);
    return monotonic_;
  }
  void Advance(std::chrono::nanoseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    system_ += std::chrono::duration_cast<SystemTime::duration>(d);
    monotonic_ += d;
  }

 private:
  std::mutex mu_;
  SystemTime system_;
  MonotonicTime monotonic_{};
};

}  // namespace npuperf::testing
