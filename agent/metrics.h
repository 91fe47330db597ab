#pragma once

#include <map>
#include <string>

#include "npuperf/v1/evidence.pb.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace npuperf::agent {

// Every metric of npuperf-agent, registered once (style.md R15). The
// labelled counters start at zero for every label value they can take
// (kJobOutcomes, kMsprofGroups x kMsprofOutcomes), so that rate() and
// absent() work before the first job. Thread-safe.
struct AgentMetrics {
  explicit AgentMetrics(prometheus::Registry& registry);

  // Sets the device-state gauges (idle, busy, externally_locked).
  void SetDevices(int idle, int busy, int externally_locked);
  // The chip gauges of one device from an npu-smi reading, named as the
  // Ascend npu-exporter names them (labels id, model_name): health status (1
  // OK or Warning, 0 Alarm or Critical), AI Core current clock (MHz),
  // temperature (C), power (W). Parts the reading lacks are left as they were.
  void SetChip(int device, const std::string& soc, const v1::DeviceReading& reading);
  // Adds one attempt's time in `phase` (one of kJobPhases) to
  // npuperf_agent_job_phase_seconds.
  void ObservePhase(const std::string& phase, double seconds);

  // Where a job attempt's wall time goes: bundle (download, verify, unpack),
  // preflight and warm_up (runner runs without msprof), msprof (profiled
  // runs), parse (evidence), spool (durable result), other (the rest of the
  // attempt: progress reports, cleanup); report is the ReportResult call that
  // follows, outside the attempt.
  static constexpr const char* kJobPhases[] = {"bundle", "preflight", "warm_up", "msprof",
                                               "parse",  "spool",     "other",   "report"};

  // The outcome label of npuperf_agent_jobs_total: the spooled result's
  // outcome, or lease_lost (dropped, not spooled).
  static constexpr const char* kJobOutcomes[] = {"succeeded", "failed", "interrupted", "cancelled",
                                                 "lease_lost"};
  // The group label of npuperf_agent_msprof_runs_total: the seven metric
  // groups (kMetricGroups), then MemoryAccess, the sample and task-time runs,
  // and a timeline job's instruction profile and its export.
  static constexpr const char* kMsprofGroups[] = {
      "PipeUtilization", "ArithmeticUtilization", "Memory",       "MemoryL0", "MemoryUB",
      "L2Cache",         "ResourceConflictRatio", "MemoryAccess", "Sample",   "TaskTime",
      "Timeline",        "TimelineExport"};
  static constexpr const char* kMsprofOutcomes[] = {"ok", "failed", "timeout", "cancelled"};

  prometheus::Family<prometheus::Gauge>& devices;
  prometheus::Family<prometheus::Counter>& jobs;  // label outcome (kJobOutcomes)
  // msprof runs by group (seven metric groups, MemoryAccess, Sample, TaskTime, Timeline,
  // TimelineExport) and outcome
  // (ok, failed, timeout, cancelled).
  prometheus::Family<prometheus::Counter>& msprof_runs;
  prometheus::Counter& lock_contention;
  prometheus::Counter& reconnects;
  // Spooled results the server refused for good (dropped from the spool).
  prometheus::Counter& results_refused;
  prometheus::Gauge& spool_depth;
  // 1 while the agent holds a registration with the server, else 0 (the
  // process may be up, Prometheus `up` 1, and still not registered).
  prometheus::Gauge& registered;
  prometheus::Histogram& job_duration_seconds;
  prometheus::Family<prometheus::Histogram>& job_phase_seconds;  // label phase
  // npu-exporter's names (docs/operations.md "Device health").
  prometheus::Family<prometheus::Gauge>& chip_health;
  prometheus::Family<prometheus::Gauge>& chip_aicore_freq;
  prometheus::Family<prometheus::Gauge>& chip_temperature;
  prometheus::Family<prometheus::Gauge>& chip_power;

 private:
  std::map<std::string, prometheus::Histogram*> phases_;  // fixed at construction
};

}  // namespace npuperf::agent
