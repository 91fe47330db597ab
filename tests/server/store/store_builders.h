#pragma once
// Building blocks for Store tests: collections, claims and results made the
// way the scheduler and agents make them.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/store/store.h"

namespace npuperf::server {

// Lease TTL of the claims made by Req().
inline constexpr int64_t kTtl = 10'000;

inline NewCollection MakeCollection(const std::string& id, const std::string& team, int jobs,
                                    int priority = 0, int cap = 8, int retry = 0) {
  NewCollection c;
  c.id = id;
  c.team = team;
  c.spec.set_priority(priority);
  c.spec.set_max_concurrent_jobs(cap);
  c.spec.mutable_params()->set_retry(retry);
  auto* op = c.spec.add_operators();
  op->set_name("op_a");
  op->set_bundle_sha256("sha-a");
  op->set_runner("run_a.py");
  for (int i = 0; i < jobs; ++i) c.jobs.push_back({"op_a", absl::StrCat("case", i), "OpA"});
  c.now_ms = 1000;
  return c;
}

// An agent of `host` with `devices` idle Ascend910B2 devices, label rack=r1.
inline v1::RegisterAgentRequest AgentInfo(const std::string& host, const std::string& boot,
                                          int devices) {
  v1::RegisterAgentRequest info;
  info.set_host(host);
  info.set_boot_id(boot);
  info.set_instance_id("i-" + host);
  (*info.mutable_labels())["rack"] = "r1";
  for (int d = 0; d < devices; ++d) {
    auto* dev = info.add_devices();
    dev->set_device_id(d);
    dev->set_soc("Ascend910B2");
    dev->set_state(v1::DEVICE_STATE_IDLE);
  }
  return info;
}

inline ClaimRequest Req(const std::string& agent, std::vector<int> devices, int64_t now_ms = 2000,
                        const std::string& soc = "Ascend910B2") {
  ClaimRequest r;
  r.agent_id = agent;
  r.host = "host-" + agent;
  for (int d : devices) r.devices.push_back({d, soc});
  r.now_ms = now_ms;
  r.lease_ttl_ms = kTtl;
  r.lease_secret = absl::StrCat("secret-", agent, "-", now_ms);  // any non-empty text
  return r;
}

// Req for an agent registered on `host` (UpsertAgent's), where Req makes up
// "host-<agent>": the claims that must see the host's other leases.
inline ClaimRequest ReqOnHost(const std::string& host, const std::string& agent,
                              std::vector<int> devices, int64_t now_ms = 2000) {
  ClaimRequest r = Req(agent, std::move(devices), now_ms);
  r.host = host;
  return r;
}

inline AttemptRef Ref(const v1::JobAssignment& a) {
  return {a.job_id(), a.attempt(), a.fencing_token(), a.lease_secret()};
}

// The result of attempt a as reported by its holder `agent` (Req's agent id).
inline AttemptResult Result(const v1::JobAssignment& a, const std::string& uuid,
                            v1::AttemptOutcome outcome, int64_t now_ms = 3000, double us = 12.5,
                            const std::string& agent = "a1") {
  AttemptResult r;
  r.agent_id = agent;
  r.ref = Ref(a);
  r.update_uuid = uuid;
  r.outcome = outcome;
  r.failure_reason = outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED ? "" : "boom";
  r.retryable = true;
  if (outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED) {
    r.evidence.set_operator_name(a.operator_name());
    r.evidence.mutable_duration()->set_aggregate_us(us);
    r.evidence.mutable_duration()->add_samples_us(us);
    r.evidence.mutable_bound()->set_label("compute");
    r.evidence.set_evidence_json("{\"big\": true}");
    r.metrics = {{"duration", us}, {"PipeUtilization.aic_mte2_ratio", 0.25}};
  }
  r.now_ms = now_ms;
  return r;
}

}  // namespace npuperf::server
