#include "server/core/change_notifier.h"

#include <algorithm>

#include "server/core/constants.h"

namespace npuperf::server {

uint64_t ChangeNotifier::version() {
  absl::MutexLock lock(&mu_);
  return version_;
}

void ChangeNotifier::Notify() {
  absl::MutexLock lock(&mu_);
  ++version_;
}

void ChangeNotifier::WakeAll() { Notify(); }

uint64_t ChangeNotifier::WaitNewer(uint64_t seen, absl::Duration timeout,
                                   const std::function<bool()>& stop) {
  const Clock::MonotonicTime deadline = clock_.MonotonicNow() + absl::ToChronoNanoseconds(timeout);
  absl::MutexLock lock(&mu_);
  auto newer = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return version_ > seen; };
  while (!newer() && !stop()) {
    const Clock::MonotonicTime wake = std::min(deadline, clock_.MonotonicNow() + kStopCheckPeriod);
    clock_.AwaitWithDeadline(mu_, absl::Condition(&newer), wake);
    if (clock_.MonotonicNow() >= deadline) break;
  }
  return version_;
}

}  // namespace npuperf::server
