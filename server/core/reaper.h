#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/core/scheduler.h"

namespace npuperf::server {

// How often the reaper runs the bundle collector and the artifact sweep.
inline constexpr std::chrono::minutes kBundleCollectPeriod{10};

// The server's periodic upkeep, on a thread of its own from construction to
// Stop(): takes back expired leases (Scheduler::ExpireLeases) every `period`;
// prunes long-unseen agents (PruneAgents) and refreshes the state gauges
// (RefreshStateMetrics) on the first round and then once `gauges_period` has
// passed; collects unused bundles (CollectBundles) and sweeps artifacts past
// their retention (SweepArtifacts) on the first round and then every
// kBundleCollectPeriod; and runs `upkeep` (when set: the confirmations'
// AdvancePending and the calibrations' Advance, main.cc) every round, so a
// confirmation's next rerun starts within `period` of the last one's end.
// Errors are logged and the next round tries again. Waits on the injected clock, so a FakeClock
// drives it. Thread-safe; the scheduler and clock must outlive it.
class Reaper {
 public:
  // upkeep returns what to log; it runs on the reaper's thread.
  Reaper(Scheduler& scheduler, Clock& clock, std::chrono::milliseconds period,
         std::chrono::milliseconds gauges_period, std::function<absl::Status()> upkeep = nullptr);
  // Stop()s.
  ~Reaper();
  Reaper(const Reaper&) = delete;
  Reaper& operator=(const Reaper&) = delete;

  // Ends the wait at once, lets a round in progress finish and joins the
  // thread. Idempotent; call it from one thread (the owner's).
  void Stop();

 private:
  void Run();
  // One round; next_gauges is when the gauges are due.
  void Sweep(Clock::MonotonicTime& next_gauges);
  bool stopping();

  Scheduler& scheduler_;
  Clock& clock_;
  const std::chrono::milliseconds period_;
  const std::chrono::milliseconds gauges_period_;
  const std::function<absl::Status()> upkeep_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace npuperf::server
