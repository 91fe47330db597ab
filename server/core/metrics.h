#pragma once

#include <map>
#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/store/store.h"

namespace npuperf::server {

// Every metric of npuperf-server, registered once (style.md R15). Names
// follow npuperf_<subsystem>_<noun>_<unit>; labels are bounded sets: gRPC
// method names and status codes, job states, agent states ("online",
// "lost"), device states (DeviceStatusName) and agent refusal reasons
// (AgentRefusalName). Durations are seconds.
// Thread-safe (prometheus-cpp metrics are atomic; SetStates takes the
// families' locks).
struct ServerMetrics {
  explicit ServerMetrics(prometheus::Registry& registry);

  // Counts one finished RPC by method and status code name.
  void CountRequest(const std::string& method, const std::string& code);
  // Counts one refused AgentService call (or one refused attempt of a
  // heartbeat or registration) by method and AgentRefusalName.
  void CountAgentRefusal(const std::string& method, const std::string& reason);
  // Sets the state gauges from a store snapshot; states absent from it read 0.
  void SetStates(const StateCounts& counts);

  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Counter& collections_submitted;
  prometheus::Counter& jobs_leased;
  prometheus::Counter& lease_expirations;
  prometheus::Counter& results_stored;
  prometheus::Counter& results_duplicate;
  prometheus::Counter& results_stale;
  prometheus::Counter& results_failed;
  // npuperf_server_agent_calls_refused_total{method,reason}: agent calls (or
  // attempts named in them) refused for identity, lease or device reasons.
  prometheus::Family<prometheus::Counter>& agent_calls_refused;
  // Succeeded results whose evidence the validator refused (the job failed,
  // nothing stored).
  prometheus::Counter& results_rejected;
  // Exceptions that reached the Serve wrapper (answered INTERNAL).
  prometheus::Counter& handler_exceptions;
  // Gauges refreshed from the store (Scheduler::RefreshStateMetrics).
  prometheus::Family<prometheus::Gauge>& jobs;
  prometheus::Family<prometheus::Gauge>& agents;
  prometheus::Family<prometheus::Gauge>& devices;
  // Queued jobs no online agent could take, by the first constraint that
  // rules every device out (UnplaceableReasons(): "no_agent", "soc",
  // "host_labels", "device_range"); refreshed with the state gauges.
  prometheus::Family<prometheus::Gauge>& unplaceable;
  // Sets the unplaceable gauges; reasons absent from by_reason read 0.
  void SetUnplaceable(const std::map<std::string, int64_t>& by_reason);
  // Submission -> first lease of a job (how long jobs wait for a device).
  prometheus::Histogram& queue_wait;
  // Submit-to-lease latency with an agent waiting: from the later of the
  // job's submission and the start of the LeaseJob call to the lease (how
  // fast the scheduler hands out work; the p99 <= 50 ms goal).
  prometheus::Histogram& submit_to_lease;
  // Requests refused to protect shared resources, by reason (a bounded
  // set): upload_busy, bundle_quota, bundle_download, watch_cap.
  prometheus::Family<prometheus::Counter>& refused;
  // The bundle collector: contents deleted and their bytes.
  prometheus::Counter& bundles_deleted;
  prometheus::Counter& bundle_bytes_freed;
  // Uploads and watch streams in progress.
  prometheus::Gauge& uploads_in_flight;
  prometheus::Gauge& watch_streams;
  // 1 when the gRPC port serves plaintext on a non-loopback address
  // (--allow-plaintext), else 0.
  prometheus::Gauge& plaintext_listener;
};

}  // namespace npuperf::server
