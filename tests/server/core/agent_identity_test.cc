// Impersonation and forged evidence (docs/security.md, "Agent identity"):
// the scheduler over a real SQLite store and a FakeClock. Agent "victim" on
// host h1 holds a lease; the caller holding h2's agent token tries to
// report, renew, lease and register for it. Every try is refused with the
// right code, counted by reason, and changes nothing; the real holder's
// result is still accepted.
#include <set>

#include "common/status_util.h"
#include "gtest/gtest.h"
#include "server/core/job_rules.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

class AgentIdentityTest : public SchedulerFixture {
 protected:
  void SetUp() override {
    auto submitted = scheduler_.Submit("team", Request(2));
    ASSERT_TRUE(submitted.ok()) << submitted.status();
    collection_ = submitted->first.id();
    victim_ = Register("h1");
    intruder_ = Register("h2");
    auto a = Lease(victim_, 0);
    ASSERT_TRUE(a);
    lease_ = *a;
  }

  double Refused(const std::string& method, const std::string& reason) {
    return metrics_.agent_calls_refused.Add({{"method", method}, {"reason", reason}}).Value();
  }

  // The victim's job is exactly as leased: LEASED, attempt 1, no progress,
  // no round; its devices as registered.
  void ExpectUntouched() {
    auto c = store_->GetCollection("team", collection_);
    ASSERT_TRUE(c.ok()) << c.status();
    const v1::Job& job = c->jobs(0);
    EXPECT_EQ(job.id(), lease_.job_id());
    EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
    EXPECT_EQ(job.attempt(), 1);
    EXPECT_EQ(job.placement().agent_id(), victim_);
    EXPECT_EQ(c->counts().succeeded(), 0);
    RoundFilter f;
    f.team = "team";
    EXPECT_TRUE(store_->ListRounds(f)->rounds.empty());
    auto agents = store_->ListAgents();
    ASSERT_TRUE(agents.ok());
    for (const auto& a : *agents) {
      if (a.status.agent_id() != victim_) continue;
      ASSERT_EQ(a.status.devices_size(), 2);
      EXPECT_EQ(a.status.devices(0).state(), "busy");
      EXPECT_EQ(a.status.devices(1).state(), "idle");
    }
  }

  std::string collection_;
  std::string victim_;
  std::string intruder_;
  v1::JobAssignment lease_;
};

TEST_F(AgentIdentityTest, AnotherAgentsTokenCannotReportForTheLease) {
  const AgentIdentity h2 = AgentIdentity::ForHost("h2");
  // In the victim's name: the agent id is not the caller's.
  v1::ReportResultRequest forged = ResultOf(lease_, "forged", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  forged.mutable_evidence()->mutable_duration()->add_samples_us(0.001);
  forged.mutable_evidence()->mutable_duration()->set_aggregate_us(0.001);
  auto as_victim = scheduler_.ReportResult(h2, forged);
  EXPECT_TRUE(absl::IsPermissionDenied(as_victim.status())) << as_victim.status();
  EXPECT_EQ(ErrorReasonOf(as_victim.status()), "FOREIGN_AGENT");
  // In its own name, with the victim's token and even its secret: not its lease.
  forged.set_agent_id(intruder_);
  auto as_itself = scheduler_.ReportResult(h2, forged);
  EXPECT_TRUE(absl::IsPermissionDenied(as_itself.status())) << as_itself.status();
  v1::ReportProgressRequest progress = ProgressOf(lease_);
  EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.ReportProgress(h2, progress).status()));
  progress.set_agent_id(intruder_);
  EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.ReportProgress(h2, progress).status()));
  ExpectUntouched();
  EXPECT_EQ(Refused("ReportResult", "foreign_agent"), 2);
  EXPECT_EQ(Refused("ReportProgress", "foreign_agent"), 2);
  // The holder's own result goes through.
  auto real = Succeed(lease_, "real", 12.5);
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_GT(real->round_id(), 0);
}

TEST_F(AgentIdentityTest, TheHolderMustPresentTheLeaseSecret) {
  int n = 0;
  for (const std::string& secret : {std::string(), std::string(64, '0'), std::string("guess")}) {
    v1::ReportResultRequest r =
        ResultOf(lease_, "u-" + std::to_string(++n), v1::ATTEMPT_OUTCOME_SUCCEEDED);
    r.mutable_evidence()->mutable_duration()->add_samples_us(1);
    r.set_lease_secret(secret);
    auto got = scheduler_.ReportResult(Holder(lease_), r);
    EXPECT_TRUE(absl::IsPermissionDenied(got.status())) << "'" << secret << "' " << got.status();
    EXPECT_EQ(ErrorReasonOf(got.status()), "BAD_SECRET");
    v1::ReportProgressRequest p = ProgressOf(lease_);
    p.set_lease_secret(secret);
    EXPECT_TRUE(absl::IsPermissionDenied(scheduler_.ReportProgress(Holder(lease_), p).status()));
  }
  ExpectUntouched();
  EXPECT_EQ(Refused("ReportResult", "bad_secret"), 3);
  EXPECT_EQ(Refused("ReportProgress", "bad_secret"), 3);
  // A stale token is FAILED_PRECONDITION whatever the secret.
  v1::ReportResultRequest stale = ResultOf(lease_, "stale", v1::ATTEMPT_OUTCOME_FAILED);
  stale.set_fencing_token(lease_.fencing_token() + 1);
  EXPECT_TRUE(absl::IsFailedPrecondition(scheduler_.ReportResult(Holder(lease_), stale).status()));
  EXPECT_EQ(Refused("ReportResult", "stale_lease"), 1);
  ASSERT_TRUE(Succeed(lease_, "real", 12.5).ok());
}

TEST_F(AgentIdentityTest, LeaseSecretsAreLongRandomAndDistinct) {
  auto second = Lease(victim_, 1);
  ASSERT_TRUE(second);
  std::set<std::string> secrets = {lease_.lease_secret(), second->lease_secret()};
  EXPECT_EQ(secrets.size(), 2u);
  for (const auto& s : secrets) {
    EXPECT_EQ(s.size(), 64u) << s;  // 256 bits as hex
    EXPECT_EQ(s.find_first_not_of("0123456789abcdef"), std::string::npos) << s;
  }
}

TEST_F(AgentIdentityTest, HeartbeatsAndLeasesOnlyForTheCallersOwnAgent) {
  const AgentIdentity h2 = AgentIdentity::ForHost("h2");
  v1::Heartbeat hb;
  hb.set_agent_id(victim_);
  auto* d = hb.add_devices();
  d->set_device_id(1);
  d->set_soc("Ascend910B2");
  d->set_state(v1::DEVICE_STATE_UNHEALTHY);
  *hb.add_running_jobs() = RunningOf(lease_);
  auto beat = scheduler_.Heartbeat(h2, hb);
  EXPECT_TRUE(absl::IsPermissionDenied(beat.status())) << beat.status();
  // A LeaseJob in the victim's name takes nothing (so nothing can expire in its name).
  auto lease = scheduler_.LeaseJob(h2, LeaseRequest(victim_, 1), [] { return false; });
  EXPECT_TRUE(absl::IsPermissionDenied(lease.status())) << lease.status();
  // Its own heartbeat naming the victim's lease: the lease is not renewed but killed for it.
  hb.set_agent_id(intruder_);
  hb.clear_devices();
  auto own = scheduler_.Heartbeat(h2, hb);
  ASSERT_TRUE(own.ok()) << own.status();
  ASSERT_EQ(own->directives_size(), 1);
  EXPECT_EQ(own->directives(0).action(), v1::JobDirective::ACTION_KILL);
  ExpectUntouched();
  EXPECT_EQ(Refused("AgentSession", "foreign_agent"), 2);
  EXPECT_EQ(Refused("LeaseJob", "foreign_agent"), 1);
  // The victim's lease was not renewed by the intruder: it expires on its own TTL.
  clock_.Advance(seconds(31));
  ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  EXPECT_EQ(JobState(collection_), v1::JOB_STATE_QUEUED);
}

TEST_F(AgentIdentityTest, RegisteringAnotherHostOrAdoptingItsLeaseIsRefused) {
  v1::RegisterAgentRequest req;
  req.set_host("h1");
  req.set_boot_id("boot");
  req.set_instance_id("i-impostor");
  auto* dev = req.add_devices();
  dev->set_device_id(0);
  dev->set_soc("Ascend910B2");
  *req.add_running_jobs() = RunningOf(lease_);
  auto as_h1 = scheduler_.RegisterAgent(AgentIdentity::ForHost("h2"), req);
  EXPECT_TRUE(absl::IsPermissionDenied(as_h1.status())) << as_h1.status();
  EXPECT_EQ(ErrorReasonOf(as_h1.status()), "WRONG_HOST");
  EXPECT_EQ(Refused("RegisterAgent", "wrong_host"), 1);
  // As itself (h2), listing h1's lease: registered, but the lease is not adopted.
  req.set_host("h2");
  auto as_h2 = scheduler_.RegisterAgent(AgentIdentity::ForHost("h2"), req);
  ASSERT_TRUE(as_h2.ok()) << as_h2.status();
  ASSERT_EQ(as_h2->directives_size(), 1);
  EXPECT_EQ(as_h2->directives(0).action(), v1::JobDirective::ACTION_KILL);
  EXPECT_EQ(Refused("RegisterAgent", "foreign_agent"), 1);
  ExpectUntouched();
  ASSERT_TRUE(Succeed(lease_, "real", 12.5).ok());
}

TEST_F(AgentIdentityTest, LeaseJobOffersOnlyRegisteredDevices) {
  const AgentIdentity h1 = AgentIdentity::ForHost("h1");
  auto unregistered = scheduler_.LeaseJob(h1, LeaseRequest(victim_, 900), [] { return false; });
  ASSERT_TRUE(absl::IsInvalidArgument(unregistered.status())) << unregistered.status();
  EXPECT_EQ(FieldViolationsOf(unregistered.status()).at(0).field, "free_devices[0]");
  v1::LeaseJobRequest twice = LeaseRequest(victim_, 1);
  *twice.add_free_devices() = twice.free_devices(0);
  auto dup = scheduler_.LeaseJob(h1, twice, [] { return false; });
  ASSERT_TRUE(absl::IsInvalidArgument(dup.status())) << dup.status();
  EXPECT_EQ(FieldViolationsOf(dup.status()).at(0).field, "free_devices[1]");
  v1::LeaseJobRequest other_soc = LeaseRequest(victim_, 1);
  other_soc.mutable_free_devices(0)->set_soc("Ascend950PR_9589");
  EXPECT_TRUE(
      absl::IsInvalidArgument(scheduler_.LeaseJob(h1, other_soc, [] { return false; }).status()));
  EXPECT_EQ(Refused("LeaseJob", "unregistered_device"), 3);
  // Nothing was leased: the second job is still queued for device 1.
  auto c = store_->GetCollection("team", collection_);
  EXPECT_EQ(c->counts().queued(), 1);
  EXPECT_TRUE(Lease(victim_, 1));
}

TEST_F(AgentIdentityTest, HeartbeatsChangeOnlyRegisteredDevices) {
  v1::Heartbeat hb;
  hb.set_agent_id(victim_);
  auto* d = hb.add_devices();
  d->set_device_id(900);
  d->set_soc("Ascend910B2");
  d->set_state(v1::DEVICE_STATE_UNHEALTHY);
  auto beat = scheduler_.Heartbeat(AgentIdentity::ForHost("h1"), hb);
  ASSERT_TRUE(absl::IsInvalidArgument(beat.status())) << beat.status();
  EXPECT_EQ(FieldViolationsOf(beat.status()).at(0).field, "heartbeat.devices[0]");
  ExpectUntouched();
}

// Registrations are bounded: 10^4 devices, negative, out-of-range and
// duplicate ids are refused with a field violation each, and nothing stored.
TEST_F(AgentIdentityTest, RegistrationsAreBounded) {
  auto registration = [](const std::vector<int>& ids) {
    v1::RegisterAgentRequest req;
    req.set_host("h3");
    req.set_boot_id("boot");
    req.set_instance_id("i-h3");
    for (int id : ids) {
      auto* dev = req.add_devices();
      dev->set_device_id(id);
      dev->set_soc("Ascend910B2");
    }
    return req;
  };
  const AgentIdentity h3 = AgentIdentity::ForHost("h3");
  std::vector<int> many(10'000);
  for (int i = 0; i < 10'000; ++i) many[static_cast<size_t>(i)] = i;
  auto huge = scheduler_.RegisterAgent(h3, registration(many));
  ASSERT_TRUE(absl::IsInvalidArgument(huge.status()));
  ASSERT_EQ(FieldViolationsOf(huge.status()).size(), 1u);
  EXPECT_EQ(FieldViolationsOf(huge.status())[0].field, "devices");
  auto bad = scheduler_.RegisterAgent(h3, registration({-1, 3, 3, 5000}));
  ASSERT_TRUE(absl::IsInvalidArgument(bad.status()));
  std::vector<std::string> fields;
  for (const auto& v : FieldViolationsOf(bad.status())) fields.push_back(v.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"devices[0].device_id", "devices[2].device_id",
                                              "devices[3].device_id"}));
  v1::RegisterAgentRequest labels = registration({0});
  for (int i = 0; i < 100; ++i) (*labels.mutable_labels())["k" + std::to_string(i)] = "v";
  labels.set_version(std::string(10'000, 'v'));
  auto long_fields = scheduler_.RegisterAgent(h3, labels);
  ASSERT_TRUE(absl::IsInvalidArgument(long_fields.status()));
  EXPECT_EQ(FieldViolationsOf(long_fields.status()).size(), 2u);  // version, labels
  auto agents = store_->ListAgents();
  ASSERT_TRUE(agents.ok());
  EXPECT_EQ(agents->size(), 2u);  // h1 and h2 only
}

// Agents unseen for agent_retention (and holding no lease) are pruned; the
// clock is a FakeClock.
TEST_F(AgentIdentityTest, AgentsUnseenForTheRetentionArePruned) {
  ASSERT_TRUE(Succeed(lease_, "done", 12.5).ok());  // the victim holds no lease now
  auto leased = Lease(intruder_, 1);                // the intruder does
  ASSERT_TRUE(leased);
  clock_.Advance(Options().agent_retention - seconds(1));
  ASSERT_TRUE(scheduler_.PruneAgents().ok());
  EXPECT_EQ(store_->ListAgents()->size(), 2u);
  clock_.Advance(seconds(2));
  ASSERT_TRUE(scheduler_.PruneAgents().ok());
  auto agents = store_->ListAgents();
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].status.agent_id(), intruder_);  // it holds a lease
  // The pruned agent's id is refused from then on, cached or not.
  v1::Heartbeat hb;
  hb.set_agent_id(victim_);
  auto beat = scheduler_.Heartbeat(AgentIdentity::ForHost("h1"), hb);
  EXPECT_TRUE(absl::IsNotFound(beat.status())) << beat.status();
  EXPECT_EQ(ErrorReasonOf(beat.status()), "UNKNOWN_AGENT");
  // Once its lease ends, the intruder goes too.
  clock_.Advance(hours(1));
  ASSERT_TRUE(scheduler_.ExpireLeases().ok());
  ASSERT_TRUE(scheduler_.PruneAgents().ok());
  EXPECT_TRUE(store_->ListAgents()->empty());
}

}  // namespace
}  // namespace npuperf::server
