#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"

namespace npuperf::fleet {

// What the fleet saw over a window of time.
struct WindowFigures {
  double seconds = 0;
  int64_t jobs_done = 0;   // results acknowledged inside the window
  double jobs_per_s = 0;   // jobs_done / seconds
  double utilisation = 0;  // device-seconds leased / (devices x seconds), 0..1
  double idle_p50_ms = 0;  // a device's gap from one result's ack to its next lease
  double idle_p99_ms = 0;
  double idle_max_ms = 0;
  int64_t idle_gaps = 0;  // gaps measured (next lease inside the window)
  // The LeaseJob calls that returned a lease inside the window: from the
  // call's start to its answer, as the agent sees it (a device waiting).
  double lease_p50_ms = 0;
  double lease_p99_ms = 0;
};

// The life of every job the fleet leased: which device, when its lease came
// back from LeaseJob and when its result was acknowledged (a device counts as
// busy in between, as a real agent holds its device lock). Thread-safe.
class JobLog {
 public:
  explicit JobLog(int devices) : devices_(devices) {}

  // A lease arrived for global device `device` at `at`, from a LeaseJob
  // call that took call_ms; returns the record's id.
  int64_t Leased(int device, Clock::MonotonicTime at, double call_ms);
  // The result of record `id` was acknowledged (or given up on) at `at`.
  void Freed(int64_t id, Clock::MonotonicTime at);
  // Jobs leased and not yet freed.
  int64_t running() const { return running_.load(); }

  // Figures over [from, to]: a job still running at `to` counts as busy
  // until `to`.
  WindowFigures Window(Clock::MonotonicTime from, Clock::MonotonicTime to) const;

 private:
  struct Record {
    int device = 0;
    Clock::MonotonicTime leased;
    Clock::MonotonicTime freed;
    double call_ms = 0;
    bool done = false;
  };
  const int devices_;
  std::atomic<int64_t> running_{0};
  mutable absl::Mutex mu_;
  std::vector<Record> records_ ABSL_GUARDED_BY(mu_);
};

// The p-th percentile (0..100) of values (nearest rank); 0 when empty.
double Percentile(std::vector<double> values, double p);

}  // namespace npuperf::fleet
