// The Scheduler over a real SQLite store (":memory:") and a FakeClock, with
// the requests tests make of it: bundles, submissions, agents, leases and
// results. Team "team", agents with two Ascend910B2 devices. Agent calls
// are made as the agent's own host (AgentIdentity::ForHost), with the lease
// secret and holder of each lease the fixture granted.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "common/status_util.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/backends/sqlite/sqlite_store.h"
#include "server/core/scheduler.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {

class SchedulerFixture : public ::testing::Test {
 protected:
  SchedulerFixture() : SchedulerFixture(Options()) {}
  explicit SchedulerFixture(SchedulerOptions options)
      : store_(*SqliteStore::Open(":memory:")),
        metrics_(registry_),
        scheduler_(*store_, clock_, metrics_, std::move(options)) {}

  static SchedulerOptions Options() {
    SchedulerOptions o;
    o.lease_ttl = std::chrono::seconds(30);
    o.max_lost = 3;
    return o;
  }

  std::string Bundle() {
    const std::string sha = Sha256Hex("tar");
    EXPECT_TRUE(store_->PutBundle("team", "op", sha, "tar", 0).ok());
    return sha;
  }

  v1::SubmitCollectionRequest Request(int jobs, int retry = 0) {
    v1::SubmitCollectionRequest req;
    auto* spec = req.mutable_spec();
    spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
    spec->mutable_params()->set_retry(retry);
    spec->mutable_case_selector()->set_case_arg("--case-id");
    auto* op = spec->add_operators();
    op->set_name("op");
    op->set_bundle_sha256(Bundle());
    op->set_op_name("kernel");
    for (int i = 0; i < jobs; ++i) op->add_case_ids("c" + std::to_string(i));
    return req;
  }

  // Submits req as "team": the collection id, "" when refused (a failure).
  std::string Submit(const v1::SubmitCollectionRequest& req) {
    auto c = scheduler_.Submit("team", req);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->first.id() : "";
  }
  std::string Submit(int jobs = 1) { return Submit(Request(jobs)); }

  // The fields a refusal names, in order.
  static std::vector<std::string> Fields(const absl::Status& s) {
    std::vector<std::string> out;
    for (const auto& v : FieldViolationsOf(s)) out.push_back(v.field);
    return out;
  }

  static v1::RegisterAgentRequest RegisterRequest(const std::string& host) {
    v1::RegisterAgentRequest req;
    req.set_host(host);
    req.set_boot_id("boot");
    req.set_instance_id("i-" + host);
    for (int d = 0; d < 2; ++d) {
      auto* dev = req.add_devices();
      dev->set_device_id(d);
      dev->set_soc("Ascend910B2");
      dev->set_state(v1::DEVICE_STATE_IDLE);
    }
    return req;
  }

  // A heartbeat of agent listing its two devices (RegisterRequest's), IDLE.
  static v1::Heartbeat IdleHeartbeat(const std::string& agent) {
    v1::Heartbeat hb;
    hb.set_agent_id(agent);
    *hb.mutable_devices() = RegisterRequest("any").devices();
    return hb;
  }

  std::string Register(const std::string& host) {
    auto resp = scheduler_.RegisterAgent(AgentIdentity::ForHost(host), RegisterRequest(host));
    EXPECT_TRUE(resp.ok()) << resp.status();
    if (!resp.ok()) return "";
    hosts_[resp->agent_id()] = host;
    return resp->agent_id();
  }

  // The identity of the agent token of agent_id's host.
  AgentIdentity As(const std::string& agent_id) { return AgentIdentity::ForHost(hosts_[agent_id]); }
  // Of the holder of lease a.
  AgentIdentity Holder(const v1::JobAssignment& a) { return As(holders_[a.job_id()]); }

  static v1::LeaseJobRequest LeaseRequest(const std::string& agent, int device, int wait_ms = 0) {
    v1::LeaseJobRequest req;
    req.set_agent_id(agent);
    req.set_wait_ms(wait_ms);
    auto* d = req.add_free_devices();
    d->set_device_id(device);
    d->set_soc("Ascend910B2");
    return req;
  }

  std::optional<v1::JobAssignment> Lease(const std::string& agent, int device) {
    auto got = scheduler_.LeaseJob(As(agent), LeaseRequest(agent, device), [] { return false; });
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || !got->has_value()) return std::nullopt;
    holders_[(*got)->job_id()] = agent;
    return *got;
  }

  // A progress report of lease a by its holder, with its secret.
  v1::ReportProgressRequest ProgressOf(const v1::JobAssignment& a) {
    v1::ReportProgressRequest p;
    p.set_agent_id(holders_[a.job_id()]);
    p.set_job_id(a.job_id());
    p.set_attempt(a.attempt());
    p.set_fencing_token(a.fencing_token());
    p.set_lease_secret(a.lease_secret());
    return p;
  }

  // A result of lease a by its holder, with its secret.
  v1::ReportResultRequest ResultOf(const v1::JobAssignment& a, const std::string& uuid,
                                   v1::AttemptOutcome outcome) {
    v1::ReportResultRequest req;
    req.set_agent_id(holders_[a.job_id()]);
    req.set_job_id(a.job_id());
    req.set_attempt(a.attempt());
    req.set_fencing_token(a.fencing_token());
    req.set_lease_secret(a.lease_secret());
    req.set_update_uuid(uuid);
    req.set_outcome(outcome);
    return req;
  }

  // Lease a as a heartbeat or registration lists it.
  static v1::RunningJob RunningOf(const v1::JobAssignment& a) {
    v1::RunningJob r;
    r.set_job_id(a.job_id());
    r.set_attempt(a.attempt());
    r.set_fencing_token(a.fencing_token());
    r.set_lease_secret(a.lease_secret());
    r.set_device_id(a.device_id());
    return r;
  }

  v1::JobState JobState(const std::string& collection_id) {
    auto c = store_->GetCollection("team", collection_id);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? c->jobs(0).state() : v1::JOB_STATE_UNSPECIFIED;
  }

  absl::StatusOr<v1::ReportResultResponse> Succeed(const v1::JobAssignment& a,
                                                   const std::string& uuid, double us) {
    v1::ReportResultRequest req = ResultOf(a, uuid, v1::ATTEMPT_OUTCOME_SUCCEEDED);
    req.mutable_evidence()->mutable_duration()->add_samples_us(us);
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(us);
    return scheduler_.ReportResult(Holder(a), req);
  }

  testing::FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<SqliteStore> store_;
  ServerMetrics metrics_;
  Scheduler scheduler_;
  std::map<std::string, std::string> hosts_;  // agent id -> host (Register)
  std::map<int64_t, std::string> holders_;    // job id -> agent id of its last lease (Lease)
};

}  // namespace npuperf::server
