#include "common/clock.h"

#include "absl/time/time.h"

namespace npuperf {

void Clock::SleepUntil(MonotonicTime deadline) {
  static constexpr bool kNever = false;
  absl::Mutex mu;
  absl::MutexLock lock(&mu);
  AwaitWithDeadline(mu, absl::Condition(&kNever), deadline);
}

Clock::SystemTime RealClock::SystemNow() { return std::chrono::system_clock::now(); }

Clock::MonotonicTime RealClock::MonotonicNow() { return std::chrono::steady_clock::now(); }

bool RealClock::AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                                  MonotonicTime deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return cond.Eval();
  return mu.AwaitWithTimeout(cond, absl::FromChrono(left));
}

}  // namespace npuperf
