#include "server/core/metrics.h"

#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

prometheus::Counter& NewCounter(prometheus::Registry& r, const std::string& name,
                                const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

prometheus::Family<prometheus::Gauge>& NewGauges(prometheus::Registry& r, const std::string& name,
                                                 const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

prometheus::Histogram& NewHistogram(prometheus::Registry& r, const std::string& name,
                                    const std::string& help,
                                    const prometheus::Histogram::BucketBoundaries& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add({}, buckets);
}

// The label values each state gauge always exports (0 when absent).
constexpr v1::JobState kJobStates[] = {v1::JOB_STATE_QUEUED,  v1::JOB_STATE_LEASED,
                                       v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED,
                                       v1::JOB_STATE_FAILED,  v1::JOB_STATE_CANCELLED};
constexpr const char* kAgentStates[] = {"online", "lost"};
constexpr const char* kUnplaceableReasons[] = {"no_agent", "soc", "host_labels", "device_range"};
constexpr const char* kDeviceStates[] = {"idle",      "busy",    "externally_locked",
                                         "unhealthy", "offline", "unknown"};

template <typename Key>
int64_t Get(const std::map<Key, int64_t>& m, const Key& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

}  // namespace

ServerMetrics::ServerMetrics(prometheus::Registry& r)
    : requests(prometheus::BuildCounter()
                   .Name("npuperf_server_grpc_requests_total")
                   .Help("gRPC requests by method and status code")
                   .Register(r)),
      collections_submitted(
          NewCounter(r, "npuperf_server_collections_submitted_total", "Collections created")),
      jobs_leased(NewCounter(r, "npuperf_server_jobs_leased_total", "Job attempts leased")),
      lease_expirations(NewCounter(r, "npuperf_server_lease_expirations_total",
                                   "Leases taken back after their TTL")),
      results_stored(
          NewCounter(r, "npuperf_server_ingest_rounds_stored_total", "Rounds of evidence stored")),
      results_duplicate(NewCounter(r, "npuperf_server_ingest_duplicates_total",
                                   "Result reports already applied (resends)")),
      results_stale(NewCounter(r, "npuperf_server_ingest_stale_total",
                               "Result or progress reports rejected for a stale fencing token")),
      results_failed(NewCounter(r, "npuperf_server_ingest_failed_attempts_total",
                                "Failed attempts reported by agents")),
      agent_calls_refused(prometheus::BuildCounter()
                              .Name("npuperf_server_agent_calls_refused_total")
                              .Help("Agent calls (or the attempts they name) refused, by method "
                                    "and reason: wrong_host, foreign_agent, unknown_agent, "
                                    "unregistered_device, unknown_job, stale_lease, bad_secret")
                              .Register(r)),
      results_rejected(NewCounter(r, "npuperf_server_ingest_rejected_total",
                                  "Succeeded results whose evidence was refused at ingest")),
      handler_exceptions(NewCounter(r, "npuperf_server_handler_exceptions_total",
                                    "Exceptions caught by the RPC wrapper (answered INTERNAL)")),
      jobs(NewGauges(r, "npuperf_server_jobs", "Jobs by state (all replicas, from the store)")),
      agents(NewGauges(r, "npuperf_server_agents", "Agent instances by state")),
      devices(NewGauges(r, "npuperf_server_devices",
                        "Devices by state (offline: their agent is not online)")),
      unplaceable(NewGauges(r, "npuperf_server_jobs_unplaceable",
                            "Queued jobs that no online agent can take, by the constraint that "
                            "rules every device out")),
      queue_wait(NewHistogram(r, "npuperf_server_job_queue_wait_seconds",
                              "Time from a job's submission to its first lease",
                              {0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14400})),
      submit_to_lease(NewHistogram(
          r, "npuperf_server_submit_to_lease_seconds",
          "Submit-to-lease latency with an agent waiting: from the later of submission and the "
          "LeaseJob call to the lease",
          {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5})),
      refused(prometheus::BuildCounter()
                  .Name("npuperf_server_refused_total")
                  .Help("Requests refused to protect shared resources, by reason")
                  .Register(r)),
      bundles_deleted(NewCounter(r, "npuperf_server_bundles_deleted_total",
                                 "Bundle contents deleted by the collector")),
      bundle_bytes_freed(NewCounter(r, "npuperf_server_bundle_bytes_freed_total",
                                    "Bytes of bundle contents deleted by the collector")),
      uploads_in_flight(
          NewGauges(r, "npuperf_server_uploads_in_flight", "Uploads in progress").Add({})),
      watch_streams(
          NewGauges(r, "npuperf_server_watch_streams", "WatchCollection streams open").Add({})),
      plaintext_listener(NewGauges(r, "npuperf_server_plaintext_listener",
                                   "1 when the gRPC port serves plaintext on a non-loopback "
                                   "address (--allow-plaintext)")
                             .Add({})) {}

void ServerMetrics::CountRequest(const std::string& method, const std::string& code) {
  requests.Add({{"method", method}, {"code", code}}).Increment();
}

void ServerMetrics::CountAgentRefusal(const std::string& method, const std::string& reason) {
  agent_calls_refused.Add({{"method", method}, {"reason", reason}}).Increment();
}

void ServerMetrics::SetStates(const StateCounts& counts) {
  for (v1::JobState s : kJobStates) {
    jobs.Add({{"state", JobStateName(s)}}).Set(static_cast<double>(Get(counts.jobs, s)));
  }
  for (const char* s : kAgentStates) {
    agents.Add({{"state", s}}).Set(static_cast<double>(Get(counts.agents, std::string(s))));
  }
  for (const char* s : kDeviceStates) {
    devices.Add({{"state", s}}).Set(static_cast<double>(Get(counts.devices, std::string(s))));
  }
}

void ServerMetrics::SetUnplaceable(const std::map<std::string, int64_t>& by_reason) {
  for (const char* reason : kUnplaceableReasons) {
    unplaceable.Add({{"reason", reason}})
        .Set(static_cast<double>(Get(by_reason, std::string(reason))));
  }
}

}  // namespace npuperf::server
