#include "server/core/scheduler.h"

#include <future>

#include "common/sha256.h"
#include "common/status_util.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/store/sqlite/sqlite_store.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// ---- ChooseClaim: the pure matching policy ----

struct Candidates {
  std::vector<v1::CollectionSpec> specs;
  std::vector<ClaimCandidate> list;
  void Add(const std::string& team, int priority, int collection_active, int team_active,
           int cap = 8, const std::string& soc = "") {
    v1::CollectionSpec spec;
    spec.set_max_concurrent_jobs(cap);
    if (!soc.empty()) spec.mutable_constraints()->add_socs(soc);
    specs.push_back(spec);
    ClaimCandidate c;
    c.job_id = static_cast<int64_t>(list.size()) + 1;
    c.team = team;
    c.priority = priority;
    c.collection_active = collection_active;
    c.team_active = team_active;
    list.push_back(c);
  }
  const std::vector<ClaimCandidate>& Get() {
    for (size_t i = 0; i < list.size(); ++i) list[i].spec = &specs[i];
    return list;
  }
};

const std::vector<OfferedDevice> kDevices = {{0, "Ascend910B2"}, {1, "Ascend950PR_9589"}};

TEST(ChooseClaimTest, HigherPriorityTierFirst) {
  Candidates c;
  c.Add("a", 5, 0, 0);
  c.Add("b", 0, 0, 0);
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 0u);
}

TEST(ChooseClaimTest, FairShareInsideATier) {
  Candidates c;
  c.Add("big", 0, 3, 3);    // team with 3 running jobs, oldest job
  c.Add("small", 0, 0, 0);  // team with none
  EXPECT_EQ(ChooseClaim(c.Get(), kDevices, {})->first, 1u);
}

TEST(ChooseClaimTest, RespectsCapAndConstraints) {
  Candidates c;
  c.Add("a", 0, 2, 2, /*cap=*/2);
  c.Add("b", 0, 0, 0, 8, "Ascend950PR_9589");
  auto pick = ChooseClaim(c.Get(), kDevices, {});
  ASSERT_TRUE(pick);
  EXPECT_EQ(pick->first, 1u);
  EXPECT_EQ(pick->second, 1u);  // only device 1 has that SoC
  Candidates none;
  none.Add("a", 0, 0, 0, 8, "Ascend910_9392");
  EXPECT_FALSE(ChooseClaim(none.Get(), kDevices, {}));
}

// ---- Scheduler over a real SQLite store and a fake clock ----

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest()
      : store_(*SqliteStore::Open(":memory:")),
        metrics_(registry_),
        scheduler_(*store_, clock_, metrics_, Options()) {}

  static SchedulerOptions Options() {
    SchedulerOptions o;
    o.lease_ttl = seconds(30);
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

  std::string Register(const std::string& host) {
    v1::RegisterAgentRequest req;
    req.set_host(host);
    req.set_boot_id("boot");
    req.set_instance_id("i-" + host);
    for (int d = 0; d < 2; ++d) {
      auto* dev = req.add_devices();
      dev->set_device_id(d);
      dev->set_soc("Ascend910B2");
    }
    auto resp = scheduler_.RegisterAgent(req);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp->agent_id();
  }

  std::optional<v1::JobAssignment> Lease(const std::string& agent, int device) {
    v1::LeaseJobRequest req;
    req.set_agent_id(agent);
    auto* d = req.add_free_devices();
    d->set_device_id(device);
    d->set_soc("Ascend910B2");
    auto got = scheduler_.LeaseJob(req, [] { return false; });
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : std::nullopt;
  }

  absl::StatusOr<v1::ReportResultResponse> Succeed(const v1::JobAssignment& a,
                                                   const std::string& uuid, double us) {
    v1::ReportResultRequest req;
    req.set_job_id(a.job_id());
    req.set_attempt(a.attempt());
    req.set_fencing_token(a.fencing_token());
    req.set_update_uuid(uuid);
    req.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
    req.mutable_evidence()->mutable_duration()->add_samples_us(us);
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(us);
    return scheduler_.ReportResult(req);
  }

  testing::FakeClock clock_;
  prometheus::Registry registry_;
  std::unique_ptr<SqliteStore> store_;
  ServerMetrics metrics_;
  Scheduler scheduler_;
};

TEST_F(SchedulerTest, InvalidSubmissionIsRejectedWholeWithFieldViolations) {
  auto req = Request(2);
  req.mutable_spec()->set_max_concurrent_jobs(20);
  req.mutable_spec()->mutable_operators(0)->set_bundle_sha256(Sha256Hex("missing"));
  auto got = scheduler_.Submit("team", req);
  ASSERT_TRUE(absl::IsInvalidArgument(got.status()));
  EXPECT_EQ(FieldViolationsOf(got.status()).size(), 2u);
  CollectionFilter f;
  f.team = "team";
  EXPECT_TRUE(store_->ListCollections(f)->empty());  // nothing queued
}

TEST_F(SchedulerTest, IdempotencyKeyReturnsTheSameCollection) {
  auto req = Request(1);
  req.set_idempotency_key("ci-run-7");
  auto first = scheduler_.Submit("team", req);
  auto again = scheduler_.Submit("team", req);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(first->second);
  EXPECT_FALSE(again->second);
  EXPECT_EQ(first->first.id(), again->first.id());
  EXPECT_EQ(again->first.counts().total(), 1);
}

TEST_F(SchedulerTest, ResultIsStoredOnceAndResendsAreDuplicates) {
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());
  const std::string agent = Register("h1");
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->attempt(), 1);
  EXPECT_FALSE(Lease(agent, 0));  // device 0 holds a live lease
  auto first = Succeed(*a, "u1", 12.5);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(first->round_id(), 0);
  auto resend = Succeed(*a, "u1", 12.5);
  ASSERT_TRUE(resend.ok());
  EXPECT_TRUE(resend->duplicate());
  EXPECT_EQ(resend->round_id(), first->round_id());
  RoundFilter f;
  f.team = "team";
  f.operator_name = "op";
  EXPECT_EQ(store_->ListRounds(f)->rounds.size(), 1u);
}

TEST_F(SchedulerTest, ExpiredLeaseIsRetriedAndTheStaleAttemptIsFenced) {
  auto submitted = scheduler_.Submit("team", Request(1));
  ASSERT_TRUE(submitted.ok());
  const std::string a1 = Register("h1");
  const std::string a2 = Register("h2");
  auto first = Lease(a1, 0);
  ASSERT_TRUE(first);
  clock_.Advance(seconds(31));
  ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  auto second = Lease(a2, 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), first->job_id());
  EXPECT_GT(second->fencing_token(), first->fencing_token());
  auto stale = Succeed(*first, "old", 1.0);
  EXPECT_TRUE(absl::IsFailedPrecondition(stale.status())) << stale.status();
  v1::ReportProgressRequest progress;
  progress.set_job_id(first->job_id());
  progress.set_attempt(first->attempt());
  progress.set_fencing_token(first->fencing_token());
  EXPECT_TRUE(absl::IsFailedPrecondition(scheduler_.ReportProgress(progress).status()));
  ASSERT_TRUE(Succeed(*second, "new", 2.0).ok());
  auto c = store_->GetCollection("team", submitted->first.id());
  EXPECT_EQ(c->state(), v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_DOUBLE_EQ(c->jobs(0).kernel_time_us(), 2.0);
  EXPECT_EQ(c->jobs(0).attempt(), 2);
}

TEST_F(SchedulerTest, AJobThatKeepsLosingItsAgentFails) {
  auto submitted = scheduler_.Submit("team", Request(1, /*retry=*/5));
  const std::string agent = Register("h1");
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Lease(agent, 0)) << i;
    clock_.Advance(seconds(31));
    ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  }
  auto c = store_->GetCollection("team", submitted->first.id());
  EXPECT_EQ(c->jobs(0).state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(c->jobs(0).reason().find("3 times"), std::string::npos) << c->jobs(0).reason();
}

TEST_F(SchedulerTest, FailedAttemptsUseTheRetryBudget) {
  auto submitted = scheduler_.Submit("team", Request(1, /*retry=*/1));
  const std::string agent = Register("h1");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    auto a = Lease(agent, 0);
    ASSERT_TRUE(a) << attempt;
    v1::ReportResultRequest req;
    req.set_job_id(a->job_id());
    req.set_attempt(a->attempt());
    req.set_fencing_token(a->fencing_token());
    req.set_update_uuid("f" + std::to_string(attempt));
    req.set_outcome(v1::ATTEMPT_OUTCOME_FAILED);
    req.set_failure_reason("msprof crashed");
    req.set_retryable(true);
    ASSERT_TRUE(scheduler_.ReportResult(req).ok());
  }
  EXPECT_FALSE(Lease(agent, 0));
  auto c = store_->GetCollection("team", submitted->first.id());
  EXPECT_EQ(c->state(), v1::COLLECTION_STATE_FAILED);
  EXPECT_NE(c->jobs(0).reason().find("msprof crashed"), std::string::npos);
}

TEST_F(SchedulerTest, CancelStopsQueuedJobsAndPushesRunningOnes) {
  auto submitted = scheduler_.Submit("team", Request(2));
  const std::string agent = Register("h1");
  auto running = Lease(agent, 0);
  ASSERT_TRUE(running);
  auto cancelled = scheduler_.Cancel("team", submitted->first.id(), "user asked");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->counts().cancelled(), 1);
  v1::Heartbeat hb;
  hb.set_agent_id(agent);
  auto* r = hb.add_running_jobs();
  r->set_job_id(running->job_id());
  r->set_attempt(running->attempt());
  r->set_fencing_token(running->fencing_token());
  auto resp = scheduler_.Heartbeat(hb);
  ASSERT_TRUE(resp.ok());
  ASSERT_GE(resp->cancels_size(), 1);
  EXPECT_EQ(resp->cancels(0).job_id(), running->job_id());
  EXPECT_TRUE(absl::IsNotFound(scheduler_.Cancel("other-team", submitted->first.id(), "").status()));
}

TEST_F(SchedulerTest, LongPollWakesOnSubmit) {
  const std::string agent = Register("h1");
  auto waiting = std::async(std::launch::async, [&] {
    v1::LeaseJobRequest req;
    req.set_agent_id(agent);
    req.set_wait_ms(20'000);
    auto* d = req.add_free_devices();
    d->set_device_id(1);
    d->set_soc("Ascend910B2");
    return scheduler_.LeaseJob(req, [] { return false; });
  });
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());
  auto got = waiting.get();
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->device_id(), 1);
}

// Progress changes a collection (watchers wake) but frees nothing, so
// agents long-polling for work are not woken to claim in vain; a result
// frees a device and wakes both.
TEST_F(SchedulerTest, ProgressWakesWatchersButNotLeaseWaiters) {
  ASSERT_TRUE(scheduler_.Submit("team", Request(2)).ok());
  const std::string agent = Register("h1");
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  const uint64_t claimable = scheduler_.changes().version();
  const uint64_t updated = scheduler_.updates().version();
  v1::ReportProgressRequest p;
  p.set_agent_id(agent);
  p.set_job_id(a->job_id());
  p.set_attempt(a->attempt());
  p.set_fencing_token(a->fencing_token());
  p.mutable_progress()->set_phase(v1::JOB_PHASE_PREPARING);
  ASSERT_TRUE(scheduler_.ReportProgress(p).ok());
  EXPECT_EQ(scheduler_.changes().version(), claimable);
  EXPECT_GT(scheduler_.updates().version(), updated);
  ASSERT_TRUE(Succeed(*a, "u1", 12.5).ok());
  EXPECT_GT(scheduler_.changes().version(), claimable);
  EXPECT_GT(scheduler_.updates().version(), updated + 1);
}

}  // namespace
}  // namespace npuperf::server
