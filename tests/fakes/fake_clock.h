#pragma once

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace npuperf::testing {

// A Clock that moves only when told (mesos Clock::advance, Envoy
// SimulatedTimeSystem). Advance wakes every AwaitWithDeadline whose deadline
// it reaches, before it returns; nothing waits in real time. Tests that need
// another thread to be blocked on the clock first call AwaitWaiters.
// Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(SystemTime start = SystemTime(std::chrono::seconds(1'800'000'000)))
      : system_(start) {}

  SystemTime SystemNow() override {
    absl::MutexLock lock(&mu_);
    return system_;
  }
  MonotonicTime MonotonicNow() override {
    absl::MutexLock lock(&mu_);
    return monotonic_;
  }

  bool AwaitWithDeadline(absl::Mutex& mu, const absl::Condition& cond,
                         MonotonicTime deadline) override {
    Waiter w{&mu, deadline};
    {
      absl::MutexLock lock(&mu_);
      if (monotonic_ >= deadline) return cond.Eval();
      waiters_.insert(&w);
    }
    auto done = [&cond, &w] { return w.fired.load() || cond.Eval(); };
    mu.Await(absl::Condition(&done));
    absl::MutexLock lock(&mu_);
    waiters_.erase(&w);
    return cond.Eval();
  }

  // Moves both clocks forward by d and wakes the waits whose deadline is now
  // reached.
  void Advance(std::chrono::nanoseconds d) {
    absl::MutexLock lock(&mu_);
    system_ += std::chrono::duration_cast<SystemTime::duration>(d);
    monotonic_ += d;
    std::set<Waiter*> pending;
    for (Waiter* w : waiters_) {
      if (w->deadline > monotonic_) continue;
      w->fired = true;
      pending.insert(w);
    }
    // A waiter's condition is re-evaluated whenever its mutex is released.
    // TryLock never blocks (the waiter may hold its mutex while it waits for
    // mu_); while it fails, let the holder run and try again until the waiter
    // has been poked once or has left.
    while (!pending.empty()) {
      for (auto it = pending.begin(); it != pending.end();) {
        if (!waiters_.count(*it)) {
          it = pending.erase(it);
        } else if ((*it)->mu->TryLock()) {
          (*it)->mu->Unlock();
          it = pending.erase(it);
        } else {
          ++it;
        }
      }
      if (pending.empty()) break;
      mu_.Unlock();
      std::this_thread::yield();
      mu_.Lock();
    }
  }

  // Threads blocked in AwaitWithDeadline (or SleepUntil) right now.
  size_t waiters() {
    absl::MutexLock lock(&mu_);
    return waiters_.size();
  }
  // Blocks (in real time, without a timeout) until at least n threads wait on
  // this clock.
  void AwaitWaiters(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return waiters_.size() >= n; };
    mu_.Await(absl::Condition(&enough));
  }

 private:
  struct Waiter {
    absl::Mutex* mu;
    MonotonicTime deadline;
    std::atomic<bool> fired{false};
  };

  absl::Mutex mu_;
  SystemTime system_ ABSL_GUARDED_BY(mu_);
  MonotonicTime monotonic_ ABSL_GUARDED_BY(mu_){};
  std::set<Waiter*> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::testing
