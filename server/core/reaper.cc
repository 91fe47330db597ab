#include "server/core/reaper.h"

#include <string>
#include <utility>

#include "common/log.h"

namespace npuperf::server {

Reaper::Reaper(Scheduler& scheduler, Clock& clock, std::chrono::milliseconds period,
               std::chrono::milliseconds gauges_period, std::function<absl::Status()> upkeep)
    : scheduler_(scheduler),
      clock_(clock),
      period_(period),
      gauges_period_(gauges_period),
      upkeep_(std::move(upkeep)),
      thread_([this] { Run(); }) {}

Reaper::~Reaper() { Stop(); }

void Reaper::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool Reaper::stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

void Reaper::Run() {
  Clock::MonotonicTime next_gauges = clock_.MonotonicNow();
  Clock::MonotonicTime next_collect = clock_.MonotonicNow();
  while (!stopping()) {
    Sweep(next_gauges);
    if (upkeep_) {
      if (auto s = upkeep_(); !s.ok()) LogError("upkeep", std::string(s.message()));
    }
    if (clock_.MonotonicNow() >= next_collect) {
      next_collect = clock_.MonotonicNow() + kBundleCollectPeriod;
      if (auto s = scheduler_.CollectBundles(); !s.ok()) {
        LogError("bundles", std::string(s.message()));
      }
      if (auto s = scheduler_.SweepArtifacts(); !s.ok()) {
        LogError("artifacts", std::string(s.message()));
      }
    }
    absl::MutexLock lock(&mu_);
    clock_.AwaitWithDeadline(mu_, absl::Condition(&stopping_), clock_.MonotonicNow() + period_);
  }
}

void Reaper::Sweep(Clock::MonotonicTime& next_gauges) {
  if (auto s = scheduler_.ExpireLeases(); !s.ok()) LogError("reaper", std::string(s.message()));
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  if (now < next_gauges) return;
  next_gauges = now + gauges_period_;
  if (auto s = scheduler_.PruneAgents(); !s.ok()) LogError("reaper", std::string(s.message()));
  if (auto s = scheduler_.RefreshStateMetrics(); !s.ok()) {
    LogError("metrics", std::string(s.message()));
  }
}

}  // namespace npuperf::server
