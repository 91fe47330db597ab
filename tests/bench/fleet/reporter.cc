#include "tests/bench/fleet/reporter.h"

#include <chrono>

namespace npuperf::fleet {

Reporter::Reporter(Clock& clock, int threads) : clock_(clock) {
  timer_ = std::thread([this] { TimerLoop(); });
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { WorkLoop(); });
}

Reporter::~Reporter() { Stop(); }

void Reporter::At(Clock::MonotonicTime at, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  queue_.push({at, seq_++, std::move(fn)});
}

int64_t Reporter::pending() {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(queue_.size() + ready_.size()) + running_;
}

void Reporter::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    ready_cv_.SignalAll();
  }
  if (timer_.joinable()) timer_.join();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void Reporter::TimerLoop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    while (!queue_.empty() && queue_.top().at <= now) {
      ready_.push_back(queue_.top().fn);
      queue_.pop();
      ready_cv_.Signal();
    }
    // Wakes for a stop, or for a callback queued ahead of the one waited for.
    const int64_t seen = seq_;
    auto woken = [this, seen]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || seq_ != seen; };
    const Clock::MonotonicTime until =
        queue_.empty() ? now + std::chrono::seconds(1) : queue_.top().at;
    clock_.AwaitWithDeadline(mu_, absl::Condition(&woken), until);
  }
}

void Reporter::WorkLoop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && ready_.empty()) ready_cv_.Wait(&mu_);
    if (stop_) return;
    std::function<void()> fn = std::move(ready_.front());
    ready_.pop_front();
    ++running_;
    mu_.Unlock();
    fn();
    mu_.Lock();
    --running_;
  }
}

}  // namespace npuperf::fleet
