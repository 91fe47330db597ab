#pragma once

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace npuperf::agent {

// Every metric of npuperf-agent, registered once (style.md R15).
// Thread-safe.
struct AgentMetrics {
  explicit AgentMetrics(prometheus::Registry& registry);

  // Sets the device-state gauges (idle, busy, externally_locked).
  void SetDevices(int idle, int busy, int externally_locked);

  prometheus::Family<prometheus::Gauge>& devices;
  prometheus::Family<prometheus::Counter>& jobs;  // label outcome
  // msprof runs by group (seven metric groups, Sample, TaskTime) and outcome
  // (ok, failed, timeout, cancelled).
  prometheus::Family<prometheus::Counter>& msprof_runs;
  prometheus::Counter& lock_contention;
  prometheus::Counter& reconnects;
  prometheus::Gauge& spool_depth;
  prometheus::Histogram& job_duration_seconds;
};

}  // namespace npuperf::agent
