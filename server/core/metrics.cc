#include "server/core/metrics.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "server/core/job_state.h"
#include "server/core/triage_rules.h"

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
constexpr const char* kRefusedReasons[] = {"upload_busy", "bundle_quota", "bundle_download",
                                           "watch_cap", "artifact_quota"};
constexpr const char* kUnplaceableReasons[] = {"no_agent", "host", "soc", "host_labels",
                                               "device_range"};
constexpr const char* kDeviceStates[] = {"idle",    "busy",    "externally_locked", "unhealthy",
                                         "offline", "unknown", "quarantined"};

// The verdict label values (v1::Verdict without UNSPECIFIED).
constexpr std::pair<v1::Verdict, const char*> kVerdicts[] = {
    {v1::VERDICT_IMPROVED, "improved"},
    {v1::VERDICT_REGRESSED, "regressed"},
    {v1::VERDICT_STABLE, "stable"},
    {v1::VERDICT_INSUFFICIENT, "insufficient"},
    {v1::VERDICT_NOT_COMPARABLE, "not_comparable"},
    {v1::VERDICT_ERRORED, "errored"}};

constexpr const char* kStaleness = " (refreshed from the store every 5 s; may lag it by that much)";

const prometheus::Histogram::BucketBoundaries& HandlingBuckets() {
  static const auto* b = new prometheus::Histogram::BucketBoundaries{
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return *b;
}

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
      jobs(NewGauges(r, "npuperf_server_jobs",
                     absl::StrCat("Jobs by state (all replicas)", kStaleness))),
      agents(NewGauges(r, "npuperf_server_agents",
                       absl::StrCat("Agent instances by state", kStaleness))),
      devices(NewGauges(
          r, "npuperf_server_devices",
          absl::StrCat("Devices by state (offline: their agent is not online)", kStaleness))),
      unplaceable(NewGauges(r, "npuperf_server_jobs_unplaceable",
                            absl::StrCat("Queued jobs that no online agent can take, by the "
                                         "constraint that rules every device out",
                                         kStaleness))),
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
      device_quarantines(prometheus::BuildCounter()
                             .Name("npuperf_server_device_quarantines_total")
                             .Help("Devices quarantined, by source (npu_smi, canary)")
                             .Register(r)),
      device_releases(prometheus::BuildCounter()
                          .Name("npuperf_server_device_releases_total")
                          .Help("Quarantines ended, by how (automatic, person)")
                          .Register(r)),
      bisections(prometheus::BuildCounter()
                     .Name("npuperf_server_bisections_total")
                     .Help("Bisections ended, by state (done, refused, failed, cancelled)")
                     .Register(r)),
      canaries(prometheus::BuildCounter()
                   .Name("npuperf_server_canaries_total")
                   .Help("Canaries judged, by verdict (pass, slow, inconclusive, failed)")
                   .Register(r)),
      bundles_deleted(NewCounter(r, "npuperf_server_bundles_deleted_total",
                                 "Bundle contents deleted by the collector")),
      bundle_bytes_freed(NewCounter(r, "npuperf_server_bundle_bytes_freed_total",
                                    "Bytes of bundle contents deleted by the collector")),
      artifact_bytes_stored(NewCounter(r, "npuperf_server_artifact_bytes_stored_total",
                                       "Bytes of artifacts (raw output) stored for rounds")),
      artifacts_swept(NewCounter(r, "npuperf_server_artifacts_swept_total",
                                 "Artifacts deleted by the retention sweep")),
      artifact_bytes_swept(NewCounter(r, "npuperf_server_artifact_bytes_swept_total",
                                      "Bytes of artifacts deleted by the retention sweep")),
      uploads_in_flight(
          NewGauges(r, "npuperf_server_uploads_in_flight", "Uploads in progress").Add({})),
      watch_streams(
          NewGauges(r, "npuperf_server_watch_streams", "WatchCollection streams open").Add({})),
      plaintext_listener(NewGauges(r, "npuperf_server_plaintext_listener",
                                   "1 when the gRPC port serves plaintext on a non-loopback "
                                   "address (--allow-plaintext)")
                             .Add({})),
      device_state(NewGauges(
          r, "npuperf_server_device_state",
          absl::StrCat("1 for each device's current state, 0 for the others", kStaleness))),
      queue_depth(NewGauges(r, "npuperf_server_queue_depth",
                            absl::StrCat("Queued jobs by team, soc and priority", kStaleness))),
      queue_oldest_age(NewGauges(r, "npuperf_server_queue_oldest_age_seconds",
                                 absl::StrCat("Age of the oldest queued job since its "
                                              "submission, 0 when none is queued",
                                              kStaleness))
                           .Add({})),
      grpc_handling(prometheus::BuildHistogram()
                        .Name("npuperf_server_grpc_handling_seconds")
                        .Help("gRPC handling time by method (streams: to their end)")
                        .Register(r)),
      ingest_seconds(NewHistogram(
          r, "npuperf_server_ingest_seconds",
          "ReportResult ingest time: evidence validation, the store transaction, the counters",
          {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10})),
      verdicts(prometheus::BuildCounter()
                   .Name("npuperf_server_verdicts_total")
                   .Help("Verdicts returned by comparison calls, by query and verdict")
                   .Register(r)),
      regressions(
          NewGauges(r, "npuperf_server_regressions",
                    absl::StrCat("Tracked regressions by rule and triage state", kStaleness))),
      regression_precision(NewGauges(
          r, "npuperf_server_regression_precision",
          absl::StrCat("Per rule, confirmed / (confirmed + false positive) triaged regressions; "
                       "NaN while none is triaged",
                       kStaleness))) {
  SetRegressions({});
  for (const char* reason : kRefusedReasons) refused.Add({{"reason", reason}});
  for (const char* source : {"npu_smi", "canary"}) device_quarantines.Add({{"source", source}});
  for (const char* how : {"automatic", "person"}) device_releases.Add({{"by", how}});
  for (const char* state : {"done", "refused", "failed", "cancelled"}) {
    bisections.Add({{"state", state}});
  }
  for (const char* verdict : {"pass", "slow", "inconclusive", "failed"}) {
    canaries.Add({{"verdict", verdict}});
  }
  for (const char* query : kVerdictQueries) {
    for (const auto& [v, name] : kVerdicts) verdicts.Add({{"query", query}, {"verdict", name}});
  }
}

void ServerMetrics::ObserveHandling(const std::string& method, double seconds) {
  prometheus::Histogram* h = nullptr;
  {
    absl::MutexLock lock(&handling_mu_);
    auto& slot = handling_[method];
    if (slot == nullptr) slot = &grpc_handling.Add({{"method", method}}, HandlingBuckets());
    h = slot;
  }
  h->Observe(seconds);
}

void ServerMetrics::CountVerdict(const char* query, v1::Verdict verdict) {
  for (const auto& [v, name] : kVerdicts) {
    if (v == verdict) verdicts.Add({{"query", query}, {"verdict", name}}).Increment();
  }
}

void ServerMetrics::CountVerdicts(const char* query, const v1::ComparisonCounts& c) {
  const int32_t n[] = {c.improved(),     c.regressed(),      c.stable(),
                       c.insufficient(), c.not_comparable(), c.errored()};
  for (size_t i = 0; i < std::size(kVerdicts); ++i) {
    if (n[i] > 0) {
      verdicts.Add({{"query", query}, {"verdict", kVerdicts[i].second}}).Increment(n[i]);
    }
  }
}

void ServerMetrics::SetSeries(prometheus::Family<prometheus::Gauge>& family,
                              std::map<Labels, prometheus::Gauge*>& live,
                              const std::map<Labels, double>& values) {
  for (auto it = live.begin(); it != live.end();) {
    if (values.count(it->first) == 0) {
      family.Remove(it->second);
      it = live.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [labels, value] : values) {
    prometheus::Gauge*& g = live[labels];
    if (g == nullptr) g = &family.Add(labels);
    g->Set(value);
  }
}

void ServerMetrics::SetFleet(const FleetSnapshot& fleet) {
  std::map<Labels, double> devices_now;
  for (const auto& [key, state] : fleet.devices) {
    const auto& [host, device, soc] = key;
    for (const char* s : kDeviceStates) {
      devices_now[{{"host", host}, {"device", absl::StrCat(device)}, {"soc", soc}, {"state", s}}] =
          state == s ? 1 : 0;
    }
  }
  std::map<Labels, double> queues_now;
  for (const auto& [key, n] : fleet.queue) {
    queues_now[{{"team", key.team}, {"soc", key.soc}, {"priority", absl::StrCat(key.priority)}}] =
        static_cast<double>(n);
  }
  absl::MutexLock lock(&mu_);
  SetSeries(device_state, live_devices_, devices_now);
  SetSeries(queue_depth, live_queues_, queues_now);
  queue_oldest_age.Set(fleet.oldest_queued_age_seconds);
}

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

void ServerMetrics::SetRegressions(const std::vector<RegressionCount>& counts) {
  std::map<std::pair<std::string, v1::RegressionState>, int64_t> n;
  for (const RegressionCount& c : counts) n[{c.rule, c.state}] += c.count;
  for (const auto& [rule, triaged] : TriagedByRule(counts)) {
    for (int s = v1::REGRESSION_STATE_DETECTED; s <= v1::REGRESSION_STATE_FALSE_POSITIVE; ++s) {
      const auto state = static_cast<v1::RegressionState>(s);
      regressions
          .Add({{"rule", rule}, {"state", absl::AsciiStrToLower(RegressionStateName(state))}})
          .Set(static_cast<double>(Get(n, std::pair{rule, state})));
    }
    regression_precision.Add({{"rule", rule}})
        .Set(RulePrecision(triaged.confirmed, triaged.false_positives));
  }
}

}  // namespace npuperf::server
