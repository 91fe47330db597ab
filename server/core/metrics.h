#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/store/store.h"

namespace npuperf::server {

// One series of npuperf_server_queue_depth.
struct QueueKey {
  std::string team;
  std::string soc;  // QueueSocLabel
  int32_t priority = 0;
  auto operator<=>(const QueueKey&) const = default;
};

// What the state gauges show, computed from store reads (pure parts below).
struct FleetSnapshot {
  // (host, device id, soc) -> DeviceStatus.state.
  std::map<std::tuple<std::string, int32_t, std::string>, std::string> devices;
  std::map<QueueKey, int64_t> queue;
  double oldest_queued_age_seconds = 0;  // 0: nothing queued
};

// Every metric of npuperf-server, registered once (style.md R15). Names
// follow npuperf_<subsystem>_<noun>_<unit>; labels are bounded sets: gRPC
// method names and status codes, job states, agent states ("online",
// "lost"), device states (DeviceStatusName), agent refusal reasons
// (AgentRefusalName), verdicts and comparison kinds (kVerdictQueries); the
// fleet labels (host, device, soc) are bounded by the registered agents, the
// team label by the teams of the token table (one "default" without auth),
// priority by -10..10. Durations are seconds.
// Thread-safe (prometheus-cpp metrics are atomic; SetStates takes the
// families' locks).
struct ServerMetrics {
  explicit ServerMetrics(prometheus::Registry& registry);

  // Counts one finished RPC by method and status code name.
  void CountRequest(const std::string& method, const std::string& code);
  // Adds one RPC's handling time (Serve's start to its status).
  void ObserveHandling(const std::string& method, double seconds);
  // Counts the verdicts one comparison call returned; query is one of
  // kVerdictQueries.
  void CountVerdicts(const char* query, const v1::ComparisonCounts& counts);
  void CountVerdict(const char* query, v1::Verdict verdict);
  static constexpr const char* kVerdictQueries[] = {"compare_rounds", "compare_collections",
                                                    "regressions_pinned", "regressions_recent"};
  // Sets the per-device, queue-depth and queue-age gauges; series of devices
  // and queues no longer in the snapshot are removed.
  void SetFleet(const FleetSnapshot& fleet);
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
  // Gauges refreshed from the store every 5 s (StateGauges; they may lag
  // the store by that much, and their help text says so).
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
  // set): upload_busy, bundle_quota, bundle_download, watch_cap,
  // artifact_quota.
  prometheus::Family<prometheus::Counter>& refused;
  // Device quarantine (core/device_health.h): quarantines begun, by source
  // (npu_smi, canary), and ended, by how (automatic, person).
  prometheus::Family<prometheus::Counter>& device_quarantines;
  prometheus::Family<prometheus::Counter>& device_releases;
  // Bisections (compare/bisections.h) ended, by terminal state (done,
  // refused, failed, cancelled).
  prometheus::Family<prometheus::Counter>& bisections;
  // Canaries (compare/canaries.h) judged, by verdict (pass, slow,
  // inconclusive, failed).
  prometheus::Family<prometheus::Counter>& canaries;
  // The bundle collector: contents deleted and their bytes.
  prometheus::Counter& bundles_deleted;
  prometheus::Counter& bundle_bytes_freed;
  // Artifacts (core/artifacts.h): bytes of the artifacts stored (new to
  // their round), and the artifacts and bytes the retention sweep deleted.
  prometheus::Counter& artifact_bytes_stored;
  prometheus::Counter& artifacts_swept;
  prometheus::Counter& artifact_bytes_swept;
  // Uploads and watch streams in progress.
  prometheus::Gauge& uploads_in_flight;
  prometheus::Gauge& watch_streams;
  // 1 when the gRPC port serves plaintext on a non-loopback address
  // (--allow-plaintext), else 0.
  prometheus::Gauge& plaintext_listener;
  // Per-device state, 1 for the device's current state and 0 for the others
  // (labels host, device, soc, state).
  prometheus::Family<prometheus::Gauge>& device_state;
  // Queued jobs by team, soc (QueueSocLabel) and priority.
  prometheus::Family<prometheus::Gauge>& queue_depth;
  // Age of the oldest queued job (since its submission); 0 when none.
  prometheus::Gauge& queue_oldest_age;
  // gRPC handling time per method (the Serve wrapper, WatchCollection to
  // its end).
  prometheus::Family<prometheus::Histogram>& grpc_handling;
  // ReportResult's ingest: validation, the store transaction, the counters.
  prometheus::Histogram& ingest_seconds;
  // Verdicts returned by comparison calls, by query and verdict (a case
  // compared twice counts twice: a CI that asks once per run counts each
  // run's verdicts once).
  prometheus::Family<prometheus::Counter>& verdicts;
  // Regressions of every team by rule and state (lowercase), and per rule
  // the precision of the triaged ones: confirmed / (confirmed + false
  // positives), NaN while none is triaged (core/triage_rules.h); refreshed
  // with the state gauges.
  prometheus::Family<prometheus::Gauge>& regressions;
  prometheus::Family<prometheus::Gauge>& regression_precision;
  // Sets both from a store snapshot; (rule, state) pairs absent read 0.
  void SetRegressions(const std::vector<RegressionCount>& counts);

 private:
  using Labels = std::map<std::string, std::string>;
  // Sets `values` on `family`, removing the series `live` had that values
  // lacks.
  void SetSeries(prometheus::Family<prometheus::Gauge>& family,
                 std::map<Labels, prometheus::Gauge*>& live, const std::map<Labels, double>& values)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::map<Labels, prometheus::Gauge*> live_devices_ ABSL_GUARDED_BY(mu_);
  std::map<Labels, prometheus::Gauge*> live_queues_ ABSL_GUARDED_BY(mu_);
  absl::Mutex handling_mu_;
  std::map<std::string, prometheus::Histogram*> handling_ ABSL_GUARDED_BY(handling_mu_);
};

}  // namespace npuperf::server
