#include "server/core/scheduler.h"

#include <atomic>
#include <future>

#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "server/core/limits.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using SchedulerTest = SchedulerFixture;

TEST_F(SchedulerTest, InvalidSubmissionIsRejectedWholeWithFieldViolations) {
  auto req = Request(2);
  req.mutable_spec()->set_max_concurrent_jobs(20);
  req.mutable_spec()->mutable_operators(0)->set_bundle_sha256(Sha256Hex("missing"));
  auto got = scheduler_.Submit("team", req);
  // The spec's own fields first; an unknown bundle alone is NOT_FOUND
  // (BundlesTest.SubmitWithAnotherTeamsBundleIsNotFound).
  ASSERT_TRUE(absl::IsInvalidArgument(got.status()));
  EXPECT_EQ(FieldViolationsOf(got.status()).size(), 1u);
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
  v1::ReportProgressRequest progress = ProgressOf(*first);
  progress.set_agent_id(a1);
  EXPECT_TRUE(absl::IsFailedPrecondition(scheduler_.ReportProgress(As(a1), progress).status()));
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
    v1::ReportResultRequest req =
        ResultOf(*a, "f" + std::to_string(attempt), v1::ATTEMPT_OUTCOME_FAILED);
    req.set_failure_reason("msprof crashed");
    req.set_retryable(true);
    ASSERT_TRUE(scheduler_.ReportResult(As(agent), req).ok());
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
  *hb.add_running_jobs() = RunningOf(*running);
  auto resp = scheduler_.Heartbeat(As(agent), hb);
  ASSERT_TRUE(resp.ok());
  ASSERT_GE(resp->cancels_size(), 1);
  EXPECT_EQ(resp->cancels(0).job_id(), running->job_id());
  EXPECT_TRUE(
      absl::IsNotFound(scheduler_.Cancel("other-team", submitted->first.id(), "").status()));
}

// What ListAgents says of agent's last-seen time (ms) and device 1's state.
std::pair<int64_t, std::string> SeenOf(Store& store, const std::string& agent) {
  auto agents = store.ListAgents();
  EXPECT_TRUE(agents.ok()) << agents.status();
  for (const AgentRecord& a : *agents) {
    if (a.status.agent_id() != agent) continue;
    return {google::protobuf::util::TimeUtil::TimestampToMilliseconds(a.status.last_seen()),
            a.status.devices(1).state()};
  }
  ADD_FAILURE() << "no agent " << agent;
  return {};
}

TEST_F(SchedulerTest, AHeartbeatWritesTheAgentOnlyWhenADeviceChangesOrItsLastSeenIsOld) {
  const std::string agent = Register("h1");
  const int64_t registered = SeenOf(*store_, agent).first;
  v1::Heartbeat hb = IdleHeartbeat(agent);
  clock_.Advance(seconds(9));
  ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok());
  EXPECT_EQ(SeenOf(*store_, agent).first, registered) << "nothing changed within 10 s";
  hb.mutable_devices(1)->set_state(v1::DEVICE_STATE_UNHEALTHY);
  ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok());
  EXPECT_EQ(SeenOf(*store_, agent), std::make_pair(registered + 9'000, std::string("unhealthy")))
      << "a device changed: written at once";
  clock_.Advance(seconds(9));
  ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok());
  EXPECT_EQ(SeenOf(*store_, agent).first, registered + 9'000);
  // BUSY is stored as IDLE (agent_rules.h StoredDeviceState): no write, and
  // no device shown busy without a lease.
  hb.mutable_devices(0)->set_state(v1::DEVICE_STATE_BUSY);
  ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok());
  EXPECT_EQ(SeenOf(*store_, agent).first, registered + 9'000);
  clock_.Advance(seconds(1));
  ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok());
  EXPECT_EQ(SeenOf(*store_, agent).first, registered + 19'000) << "10 s since the last write";
  auto agents = store_->ListAgents();
  ASSERT_TRUE(agents.ok());
  EXPECT_EQ((*agents)[0].status.devices(0).state(), "idle") << "reported BUSY, but no lease";
}

// An agent that heartbeats is never pruned, however short the retention.
class ShortRetentionTest : public SchedulerFixture {
 protected:
  ShortRetentionTest() : SchedulerFixture(WithRetention()) {}
  static SchedulerOptions WithRetention() {
    SchedulerOptions o = Options();
    o.agent_retention = seconds(4);
    return o;
  }
};

TEST_F(ShortRetentionTest, AHeartbeatingAgentIsWrittenOftenEnoughNotToBePruned) {
  const std::string agent = Register("h1");
  v1::Heartbeat hb;
  hb.set_agent_id(agent);
  for (int beat = 0; beat < 12; ++beat) {
    clock_.Advance(seconds(1));
    ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok()) << "beat " << beat;
    ASSERT_TRUE(scheduler_.PruneAgents().ok());
    ASSERT_EQ(store_->ListAgents()->size(), 1u) << "pruned after beat " << beat;
  }
  clock_.Advance(seconds(5));
  ASSERT_TRUE(scheduler_.PruneAgents().ok());
  EXPECT_TRUE(store_->ListAgents()->empty()) << "silent for longer than the retention";
  EXPECT_TRUE(absl::IsNotFound(scheduler_.Heartbeat(As(agent), hb).status()));
}

TEST_F(SchedulerTest, ShapeChecksOfAgentRequests) {
  v1::RegisterAgentRequest bare;
  auto registered = scheduler_.RegisterAgent(AgentIdentity::Unbound(), bare);
  ASSERT_TRUE(absl::IsInvalidArgument(registered.status())) << registered.status();
  EXPECT_EQ(FieldViolationsOf(registered.status()).size(), 4u);  // host, boot, instance, devices
  const std::string agent = Register("h1");
  for (int wait_ms : {-1, 30'001}) {
    auto got =
        scheduler_.LeaseJob(As(agent), LeaseRequest(agent, 0, wait_ms), [] { return false; });
    ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << wait_ms;
    EXPECT_EQ(FieldViolationsOf(got.status()).at(0).field, "wait_ms");
  }
  for (int max : {-1, 65}) {
    v1::LeaseJobRequest req = LeaseRequest(agent, 0);
    req.set_max_assignments(max);
    auto got = scheduler_.LeaseJobs(As(agent), req, [] { return false; });
    ASSERT_TRUE(absl::IsInvalidArgument(got.status())) << max;
    EXPECT_EQ(FieldViolationsOf(got.status()).at(0).field, "max_assignments");
  }
  EXPECT_EQ(clock_.waiters(), 0u);
}

// One LeaseJob call takes a job for each offered device up to
// max_assignments (issue 36), each with its own secret; without it (an
// agent that predates it), one.
TEST_F(SchedulerTest, OneCallLeasesAJobForEachFreeDeviceItAsksFor) {
  const std::string id = Submit(5);
  const std::string agent = Register("h1");
  v1::LeaseJobRequest req = LeaseRequest(agent, 0);
  auto* d1 = req.add_free_devices();
  d1->set_device_id(1);
  d1->set_soc("Ascend910B2");
  auto one = scheduler_.LeaseJobs(As(agent), req, [] { return false; });
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->size(), 1u);  // max_assignments unset
  const std::string other = Register("h2");
  v1::LeaseJobRequest both = LeaseRequest(other, 0);
  *both.add_free_devices() = *d1;
  both.set_max_assignments(8);  // more than the devices offered
  auto two = scheduler_.LeaseJobs(As(other), both, [] { return false; });
  ASSERT_TRUE(two.ok()) << two.status();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_NE((*two)[0].device_id(), (*two)[1].device_id());
  EXPECT_NE((*two)[0].lease_secret(), (*two)[1].lease_secret());
  EXPECT_EQ((*two)[0].lease_secret().size(), (*one)[0].lease_secret().size());
  // LeaseJob takes one whatever the request asks.
  const std::string third = Register("h3");
  v1::LeaseJobRequest asks = LeaseRequest(third, 0);
  *asks.add_free_devices() = *d1;
  asks.set_max_assignments(2);
  auto got = scheduler_.LeaseJob(As(third), asks, [] { return false; });
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  auto c = store_->GetCollection("team", id);
  ASSERT_TRUE(c.ok()) << c.status();
  int leased = 0;
  for (const v1::Job& j : c->jobs()) leased += j.state() == v1::JOB_STATE_LEASED ? 1 : 0;
  EXPECT_EQ(leased, 4);
}

// Lease TTLs run on the injected clock: a lease survives until its TTL has
// passed on the clock and is taken back at the first ExpireLeases after.
TEST_F(SchedulerTest, LeaseExpiresWhenTheClockPassesTheTtl) {
  auto submitted = scheduler_.Submit("team", Request(1));
  ASSERT_TRUE(submitted.ok());
  const std::string agent = Register("h1");
  auto a = Lease(agent, 0);
  ASSERT_TRUE(a);
  clock_.Advance(seconds(30) - milliseconds(1));
  ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  EXPECT_EQ(JobState(submitted->first.id()), v1::JOB_STATE_LEASED);
  EXPECT_EQ(metrics_.lease_expirations.Value(), 0);
  clock_.Advance(milliseconds(2));
  ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  EXPECT_EQ(JobState(submitted->first.id()), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(metrics_.lease_expirations.Value(), 1);
}

// A long-poll returns empty once the clock passes wait_ms, and not before;
// nothing waits in real time.
TEST_F(SchedulerTest, LongPollTimesOutOnTheClock) {
  const std::string agent = Register("h1");
  auto waiting = std::async(std::launch::async, [&] {
    return scheduler_.LeaseJob(As(agent), LeaseRequest(agent, 1, 5'000), [] { return false; });
  });
  clock_.AwaitWaiters(1);
  clock_.Advance(milliseconds(4'999));
  clock_.AwaitWaiters(1);  // woke for its stop check, and waits again
  EXPECT_EQ(waiting.wait_for(seconds(0)), std::future_status::timeout);
  clock_.Advance(milliseconds(1));
  auto got = waiting.get();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(got->has_value());
}

TEST_F(SchedulerTest, LongPollWakesOnSubmit) {
  const std::string agent = Register("h1");
  auto waiting = std::async(std::launch::async, [&] {
    return scheduler_.LeaseJob(As(agent), LeaseRequest(agent, 1, 20'000), [] { return false; });
  });
  clock_.AwaitWaiters(1);  // LeaseJob found nothing and waits
  ASSERT_TRUE(scheduler_.Submit("team", Request(1)).ok());
  auto got = waiting.get();  // woken by the submit: the clock never moved
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->device_id(), 1);
}

// stop() (client gone, shutdown) changes without a notification: the wait
// notices it on its next stop check, kStopCheckPeriod later on the clock.
TEST_F(SchedulerTest, LongPollNoticesStopOnItsNextCheck) {
  const std::string agent = Register("h1");
  std::atomic<bool> stop{false};
  auto waiting = std::async(std::launch::async, [&] {
    return scheduler_.LeaseJob(As(agent), LeaseRequest(agent, 1, 20'000),
                               [&] { return stop.load(); });
  });
  clock_.AwaitWaiters(1);
  stop = true;
  clock_.Advance(milliseconds(199));
  EXPECT_EQ(waiting.wait_for(seconds(0)), std::future_status::timeout);
  clock_.Advance(milliseconds(1));
  auto got = waiting.get();
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
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
  v1::ReportProgressRequest p = ProgressOf(*a);
  p.mutable_progress()->set_phase(v1::JOB_PHASE_PREPARING);
  ASSERT_TRUE(scheduler_.ReportProgress(As(agent), p).ok());
  EXPECT_EQ(scheduler_.changes().version(), claimable);
  EXPECT_GT(scheduler_.updates().version(), updated);
  ASSERT_TRUE(Succeed(*a, "u1", 12.5).ok());
  EXPECT_GT(scheduler_.changes().version(), claimable);
  EXPECT_GT(scheduler_.updates().version(), updated + 1);
}

// Progress carried by a heartbeat (issue 36) counts as a ReportProgress of it: the job runs, its
// progress shows, watchers wake; a stale lease's report is refused with a KILL directive and
// stores nothing; a cancelled collection's job gets its CancelJob; an unknown phase is stored as
// unspecified. The server says so at registration and in every answer.
TEST_F(SchedulerTest, ProgressInAHeartbeatIsStoredAsAReportOfIt) {
  auto registered_or =
      scheduler_.RegisterAgent(AgentIdentity::ForHost("h1"), RegisterRequest("h1"));
  ASSERT_TRUE(registered_or.ok()) << registered_or.status();
  const auto& registered = *registered_or;
  EXPECT_TRUE(registered.progress_in_heartbeats());
  const std::string id = Submit(2);
  const std::string agent = Register("h1");
  auto a = Lease(agent, 0);
  auto b = Lease(agent, 1);
  ASSERT_TRUE(a && b);
  const uint64_t updated = scheduler_.updates().version();
  v1::Heartbeat hb;
  hb.set_agent_id(agent);
  v1::RunningJob ra = RunningOf(*a);
  ra.mutable_progress()->set_phase(v1::JOB_PHASE_METRIC_RUN);
  ra.mutable_progress()->set_step(3);
  ra.mutable_progress()->set_detail("Memory\x01");
  ra.mutable_progress()
      ->GetReflection()
      ->MutableUnknownFields(ra.mutable_progress())
      ->AddLengthDelimited(999, std::string(1000, 'x'));  // not ours
  v1::RunningJob rb = RunningOf(*b);
  rb.set_fencing_token(b->fencing_token() + 1);  // not its lease
  rb.mutable_progress()->set_step(5);
  *hb.add_running_jobs() = ra;
  *hb.add_running_jobs() = rb;
  auto resp_or = scheduler_.Heartbeat(As(agent), hb);
  ASSERT_TRUE(resp_or.ok()) << resp_or.status();
  const auto& resp = *resp_or;
  ASSERT_EQ(resp.directives_size(), 1);
  EXPECT_EQ(resp.directives(0).job_id(), b->job_id());
  EXPECT_EQ(resp.directives(0).action(), v1::JobDirective::ACTION_KILL);
  EXPECT_EQ(resp.cancels_size(), 0);
  EXPECT_GT(scheduler_.updates().version(), updated);
  auto c_or = store_->GetCollection("team", id);
  ASSERT_TRUE(c_or.ok()) << c_or.status();
  const auto& c = *c_or;
  for (const v1::Job& j : c.jobs()) {
    if (j.id() == a->job_id()) {
      EXPECT_EQ(j.state(), v1::JOB_STATE_RUNNING);
      EXPECT_EQ(j.progress().step(), 3);
      EXPECT_EQ(j.progress().detail(), "Memory?") << "cleaned as a ReportProgress detail is";
      EXPECT_EQ(j.progress().GetReflection()->GetUnknownFields(j.progress()).field_count(), 0)
          << "fields the server does not know are dropped";
    } else {
      EXPECT_EQ(j.state(), v1::JOB_STATE_LEASED);
      EXPECT_EQ(j.progress().step(), 0);
    }
  }
  ASSERT_TRUE(scheduler_.Cancel("team", id, "user asked").ok());
  hb.clear_running_jobs();
  *hb.add_running_jobs() = ra;
  auto cancelled_or = scheduler_.Heartbeat(As(agent), hb);
  ASSERT_TRUE(cancelled_or.ok()) << cancelled_or.status();
  const auto& cancelled = *cancelled_or;
  ASSERT_GE(cancelled.cancels_size(), 1);
  EXPECT_EQ(cancelled.cancels(0).job_id(), a->job_id());
  EXPECT_TRUE(cancelled.progress_in_heartbeats());
  // A detail over the limit is cut to it, as a ReportProgress detail is.
  hb.mutable_running_jobs(0)->mutable_progress()->set_detail(
      std::string(kMaxProgressDetailBytes + 100, 'd'));
  ASSERT_TRUE(scheduler_.Heartbeat(As(agent), hb).ok());
  auto cut = store_->GetCollection("team", id);
  ASSERT_TRUE(cut.ok()) << cut.status();
  for (const v1::Job& j : cut->jobs()) {
    if (j.id() == a->job_id()) {
      EXPECT_EQ(j.progress().detail().size(), kMaxProgressDetailBytes);
    }
  }
  // A phase this server does not know (a newer agent's) fails no heartbeat: it is stored as
  // unspecified, with the rest of the report.
  hb.mutable_running_jobs(0)->mutable_progress()->set_phase(static_cast<v1::JobPhase>(99));
  hb.mutable_running_jobs(0)->mutable_progress()->set_step(4);
  auto unknown = scheduler_.Heartbeat(As(agent), hb);
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  auto after = store_->GetCollection("team", id);
  ASSERT_TRUE(after.ok()) << after.status();
  for (const v1::Job& j : after->jobs()) {
    if (j.id() != a->job_id()) continue;
    EXPECT_EQ(j.progress().phase(), v1::JOB_PHASE_UNSPECIFIED);
    EXPECT_EQ(j.progress().step(), 4);
  }
}

}  // namespace
}  // namespace npuperf::server
