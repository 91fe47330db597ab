#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace npuperf::fleet {

// Runs callbacks when they fall due on the clock, on a fixed set of threads
// (the virtual agents' progress reports and results: a job "runs" by waiting
// here, not on a thread of its own). One timer thread waits on the clock for
// the earliest callback and hands what is due to the workers (one wake-up
// each). Thread-safe.
class Reporter {
 public:
  Reporter(Clock& clock, int threads);
  ~Reporter();
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  // Runs fn on a reporter thread once the clock reaches at.
  void At(Clock::MonotonicTime at, std::function<void()> fn);
  // Callbacks not yet finished (queued or running).
  int64_t pending();
  // Drops what is queued and joins the threads (also in the destructor).
  void Stop();

 private:
  struct Due {
    Clock::MonotonicTime at;
    int64_t seq = 0;
    std::function<void()> fn;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void TimerLoop();
  void WorkLoop();

  Clock& clock_;
  absl::Mutex mu_;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> queue_ ABSL_GUARDED_BY(mu_);
  int64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<std::function<void()>> ready_ ABSL_GUARDED_BY(mu_);
  absl::CondVar ready_cv_;
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;
  std::vector<std::thread> threads_;
};

}  // namespace npuperf::fleet
