#include "agent/metrics.h"

#include <iterator>

#include "agent/msprof_modes.h"
#include "common/chip_health.h"

namespace npuperf::agent {

AgentMetrics::AgentMetrics(prometheus::Registry& r)
    : devices(prometheus::BuildGauge()
                  .Name("npuperf_agent_devices")
                  .Help("Devices of this agent by state")
                  .Register(r)),
      jobs(prometheus::BuildCounter()
               .Name("npuperf_agent_jobs_total")
               .Help("Job attempts finished by outcome")
               .Register(r)),
      msprof_runs(prometheus::BuildCounter()
                      .Name("npuperf_agent_msprof_runs_total")
                      .Help("msprof runs by metric group and outcome")
                      .Register(r)),
      lock_contention(
          prometheus::BuildCounter()
              .Name("npuperf_agent_lock_contention_total")
              .Help("Device lock attempts that found the device locked by another process")
              .Register(r)
              .Add({})),
      reconnects(prometheus::BuildCounter()
                     .Name("npuperf_agent_reconnects_total")
                     .Help("Re-registrations after the server connection was lost")
                     .Register(r)
                     .Add({})),
      results_refused(prometheus::BuildCounter()
                          .Name("npuperf_agent_results_refused_total")
                          .Help("Results the server refused for good (invalid, not this agent's "
                                "lease, stale); dropped from the spool")
                          .Register(r)
                          .Add({})),
      spool_depth(prometheus::BuildGauge()
                      .Name("npuperf_agent_spool_depth")
                      .Help("Results waiting in the local spool for acknowledgement")
                      .Register(r)
                      .Add({})),
      registered(prometheus::BuildGauge()
                     .Name("npuperf_agent_registered")
                     .Help("1 while this agent is registered with the server, else 0")
                     .Register(r)
                     .Add({})),
      job_duration_seconds(
          prometheus::BuildHistogram()
              .Name("npuperf_agent_job_duration_seconds")
              .Help("Wall time of one job attempt")
              .Register(r)
              .Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 5, 10, 30, 60, 120, 300, 600,
                                                               1800, 3600})),
      job_phase_seconds(
          prometheus::BuildHistogram()
              .Name("npuperf_agent_job_phase_seconds")
              .Help("Wall time of job attempts by phase (sum over attempts and devices)")
              .Register(r)),
      chip_health(prometheus::BuildGauge()
                      .Name("npu_chip_info_health_status")
                      .Help("npu-smi health of the chip: 1 OK or Warning, 0 Alarm or Critical")
                      .Register(r)),
      chip_aicore_freq(prometheus::BuildGauge()
                           .Name("npu_chip_info_aicore_current_freq")
                           .Help("AI Core current frequency read by npu-smi, MHz")
                           .Register(r)),
      chip_temperature(prometheus::BuildGauge()
                           .Name("npu_chip_info_temperature")
                           .Help("Chip temperature read by npu-smi, degrees Celsius")
                           .Register(r)),
      chip_power(prometheus::BuildGauge()
                     .Name("npu_chip_info_power")
                     .Help("Chip real-time power read by npu-smi, W")
                     .Register(r)) {
  for (const char* outcome : kJobOutcomes) jobs.Add({{"outcome", outcome}});
  static_assert(std::size(kMsprofGroups) == kMetricGroups.size() + 5);
  for (const char* group : kMsprofGroups) {
    for (const char* outcome : kMsprofOutcomes) {
      msprof_runs.Add({{"group", group}, {"outcome", outcome}});
    }
  }
  for (const char* phase : kJobPhases) {
    phases_[phase] = &job_phase_seconds.Add(
        {{"phase", phase}},
        prometheus::Histogram::BucketBoundaries{0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800});
  }
}

void AgentMetrics::ObservePhase(const std::string& phase, double seconds) {
  auto it = phases_.find(phase);
  if (it != phases_.end()) it->second->Observe(seconds);
}

void AgentMetrics::SetDevices(int idle, int busy, int externally_locked) {
  devices.Add({{"state", "idle"}}).Set(idle);
  devices.Add({{"state", "busy"}}).Set(busy);
  devices.Add({{"state", "externally_locked"}}).Set(externally_locked);
}

void AgentMetrics::SetChip(int device, const std::string& soc, const v1::DeviceReading& reading) {
  const prometheus::Labels labels = {{"id", std::to_string(device)}, {"model_name", soc}};
  const ChipHealth health = ClassifyHealth(reading.health());
  if (health != ChipHealth::kUnknown) {
    chip_health.Add(labels).Set(health == ChipHealth::kCritical ? 0 : 1);
  }
  if (reading.aicore_current_mhz() > 0) {
    chip_aicore_freq.Add(labels).Set(reading.aicore_current_mhz());
  }
  if (reading.has_temperature_c()) {
    chip_temperature.Add(labels).Set(reading.temperature_c());
  }
  if (reading.has_power_w()) {
    chip_power.Add(labels).Set(reading.power_w());
  }
}

}  // namespace npuperf::agent
