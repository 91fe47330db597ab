// Store conformance: the lease rule on agent identity and secrets (every
// write about a lease names its holder and presents its secret), devices as
// registered, and pruning long-unseen agents. Both backends.
#include <map>

#include "google/protobuf/util/time_util.h"
#include "server/core/job_rules.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

// ---- Reports about a lease ----

TEST_P(StoreConformanceTest, OnlyTheHolderWithTheSecretMayReport) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->lease_secret().empty());
  v1::JobProgress p;
  p.set_phase(v1::JOB_PHASE_TIMING_RUN);
  // Another agent, with the right token and secret.
  auto foreign = store_->RecordProgress("a2", Ref(*a), p, 2100, kTtl);
  EXPECT_TRUE(absl::IsPermissionDenied(foreign.status())) << foreign.status();
  EXPECT_EQ(AgentRefusalOf(foreign.status()), AgentRefusal::kForeignAgent);
  auto forged = store_->RecordResult(
      Result(*a, "forged", v1::ATTEMPT_OUTCOME_SUCCEEDED, 2200, 0.001, /*agent=*/"a2"));
  EXPECT_TRUE(absl::IsPermissionDenied(forged.status())) << forged.status();
  EXPECT_EQ(AgentRefusalOf(forged.status()), AgentRefusal::kForeignAgent);
  // The holder without the secret, or with a wrong one.
  for (const std::string& secret : {std::string(), std::string("not-it")}) {
    AttemptRef ref = Ref(*a);
    ref.lease_secret = secret;
    auto progress = store_->RecordProgress("a1", ref, p, 2300, kTtl);
    EXPECT_EQ(AgentRefusalOf(progress.status()), AgentRefusal::kBadSecret) << progress.status();
    EXPECT_TRUE(absl::IsPermissionDenied(progress.status()));
    AttemptResult r = Result(*a, "guess-" + secret, v1::ATTEMPT_OUTCOME_SUCCEEDED, 2300, 0.001);
    r.ref.lease_secret = secret;
    auto result = store_->RecordResult(r);
    EXPECT_EQ(AgentRefusalOf(result.status()), AgentRefusal::kBadSecret) << result.status();
  }
  // An unknown job is NOT_FOUND.
  AttemptRef unknown = Ref(*a);
  unknown.job_id += 1000;
  EXPECT_TRUE(absl::IsNotFound(store_->RecordProgress("a1", unknown, p, 2300, kTtl).status()));
  // Nothing was stored: still LEASED without progress, no round; the lease
  // expires at its first deadline (no refused call renewed it).
  const v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_LEASED);
  EXPECT_FALSE(job.has_progress());
  EXPECT_EQ(RoundCount("alpha"), 0u);
  // A renewal with a wrong secret does not extend it either.
  AttemptRef wrong = Ref(*a);
  wrong.lease_secret = "not-it";
  ASSERT_OK_AND_ASSIGN(renewal, store_->RenewLeases("a1", {wrong}, 2400, kTtl));
  ASSERT_EQ(renewal.dropped.size(), 1u);
  EXPECT_EQ(renewal.dropped[0].reason, AgentRefusal::kBadSecret);
  EXPECT_TRUE(renewal.renewed.empty());
  // The holder with its secret is accepted.
  EXPECT_GT(Finish(*a, "real", 2500, 12.5), 0);
  EXPECT_EQ(RoundCount("alpha"), 1u);
}

TEST_P(StoreConformanceTest, EveryLeaseHasItsOwnSecret) {
  Insert(MakeCollection("c1", "alpha", 2));
  ClaimRequest first = Req("a1", {0});
  first.lease_secret = "secret-one";
  ClaimRequest second = Req("a1", {1});
  second.lease_secret = "secret-two";
  auto a = Claim(first);
  auto b = Claim(second);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->lease_secret(), "secret-one");
  AttemptResult crossed = Result(*b, "crossed", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  crossed.ref.lease_secret = a->lease_secret();  // a's secret does not open b
  EXPECT_EQ(AgentRefusalOf(store_->RecordResult(crossed).status()), AgentRefusal::kBadSecret);
  ClaimRequest none = Req("a1", {2});
  none.lease_secret.clear();
  EXPECT_TRUE(absl::IsInvalidArgument(store_->ClaimJob(none, ChooseClaim).status()));
}

// ---- Devices ----

TEST_P(StoreConformanceTest, DevicesAreExactlyTheRegisteredOnes) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 3), 100).ok());
  // A heartbeat sets the states of registered devices and adds none.
  v1::DeviceInfo sick;
  sick.set_device_id(1);
  sick.set_soc("Ascend910B2");
  sick.set_state(v1::DEVICE_STATE_UNHEALTHY);
  v1::DeviceInfo stranger = sick;
  stranger.set_device_id(900);
  ASSERT_TRUE(store_->UpdateDevices("a1", {sick, stranger}, 200).ok());
  ASSERT_OK_AND_ASSIGN(agents, store_->ListAgents());
  ASSERT_EQ(agents.size(), 1u);
  ASSERT_EQ(agents[0].status.devices_size(), 3);
  EXPECT_EQ(agents[0].status.devices(1).state(), "unhealthy");
  // Registering again with fewer devices drops the others.
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 1), 300).ok());
  ASSERT_OK_AND_ASSIGN(again, store_->ListAgents());
  EXPECT_EQ(again[0].status.devices_size(), 1);
}

// ListAgents gives every agent its own devices, in device order, each with its own live job
// (PostgreSQL reads all of them in one statement and sorts them out).
TEST_P(StoreConformanceTest, ListAgentsGivesEachAgentItsOwnDevicesAndJobs) {
  ASSERT_TRUE(store_->UpsertAgent("z-agent", AgentInfo("h1", "boot1", 3), 100).ok());
  ASSERT_TRUE(store_->UpsertAgent("a-agent", AgentInfo("h2", "boot2", 1), 100).ok());
  ASSERT_TRUE(store_->UpsertAgent("m-agent", AgentInfo("h3", "boot3", 2), 100).ok());
  Insert(MakeCollection("c1", "alpha", 2));
  ClaimRequest req = ReqOnHost("h1", "z-agent", {2});
  auto a = Claim(req);
  ASSERT_TRUE(a);
  ClaimRequest other = ReqOnHost("h3", "m-agent", {0});
  auto b = Claim(other);
  ASSERT_TRUE(b);
  ASSERT_OK_AND_ASSIGN(agents, store_->ListAgents());
  ASSERT_EQ(agents.size(), 3u);
  std::map<std::string, const AgentRecord*> by_id;
  for (const AgentRecord& r : agents) by_id[r.status.agent_id()] = &r;
  ASSERT_EQ(by_id.size(), 3u);
  const v1::AgentStatus& z = by_id["z-agent"]->status;
  ASSERT_EQ(z.devices_size(), 3);
  for (int d = 0; d < 3; ++d) EXPECT_EQ(z.devices(d).device_id(), d);
  EXPECT_EQ(z.devices(2).job_id(), a->job_id());
  EXPECT_EQ(z.devices(0).job_id(), 0);
  EXPECT_EQ(by_id["z-agent"]->job_teams, (std::vector<std::string>{"", "", "alpha"}));
  ASSERT_EQ(by_id["a-agent"]->status.devices_size(), 1);
  EXPECT_EQ(by_id["a-agent"]->status.devices(0).state(), "idle");
  const v1::AgentStatus& m = by_id["m-agent"]->status;
  ASSERT_EQ(m.devices_size(), 2);
  EXPECT_EQ(m.devices(0).job_id(), b->job_id());
  EXPECT_EQ(m.devices(1).job_id(), 0);
}

// A heartbeat of a 4-device agent: the agent seen, only changed states
// written (PostgreSQL does it in one statement), an unknown agent NOT_FOUND.
TEST_P(StoreConformanceTest, AHeartbeatMarksTheAgentSeenAndSetsEveryDeviceState) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 4), 100).ok());
  std::vector<v1::DeviceInfo> states(4);
  for (int d = 0; d < 4; ++d) {
    states[d].set_device_id(d);
    states[d].set_soc("Ascend910B2");
    states[d].set_state(d % 2 == 0 ? v1::DEVICE_STATE_IDLE : v1::DEVICE_STATE_UNHEALTHY);
  }
  ASSERT_TRUE(store_->UpdateDevices("a1", states, 700).ok());
  states[1].set_state(v1::DEVICE_STATE_IDLE);  // one changes back, the others stay
  ASSERT_TRUE(store_->UpdateDevices("a1", states, 900).ok());
  ASSERT_OK_AND_ASSIGN(agents, store_->ListAgents());
  ASSERT_EQ(agents.size(), 1u);
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMilliseconds(agents[0].status.last_seen()),
            900);
  ASSERT_EQ(agents[0].status.devices_size(), 4);
  EXPECT_EQ(agents[0].status.devices(0).state(), "idle");
  EXPECT_EQ(agents[0].status.devices(1).state(), "idle");
  EXPECT_EQ(agents[0].status.devices(2).state(), "idle");
  EXPECT_EQ(agents[0].status.devices(3).state(), "unhealthy");
  EXPECT_TRUE(absl::IsNotFound(store_->UpdateDevices("nobody", states, 1000)));
  EXPECT_TRUE(store_->UpdateDevices("a1", {}, 1100).ok());  // no devices: only seen
}

// Every lease one heartbeat names, in one call: renewed, cancelled and
// refused ones told apart per reference, in the order named.
TEST_P(StoreConformanceTest, OneHeartbeatRenewsEveryLeaseItNames) {
  Insert(MakeCollection("c1", "alpha", 1));
  Insert(MakeCollection("c2", "alpha", 2));
  auto a = Claim(Req("a1", {0}));
  auto b = Claim(Req("a1", {1}));
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->collection_id(), b->collection_id());
  ASSERT_TRUE(store_->CancelCollection("alpha", b->collection_id(), "user", 2500).ok());
  AttemptRef wrong = Ref(*a);
  wrong.lease_secret = "not-it";
  AttemptRef unknown = Ref(*a);
  unknown.job_id = 999'999;
  ASSERT_OK_AND_ASSIGN(
      r, store_->RenewLeases("a1", {wrong, Ref(*a), unknown, Ref(*b)}, 2000 + kTtl - 1, kTtl));
  ASSERT_EQ(r.renewed.size(), 2u);
  EXPECT_EQ(r.renewed[0].job_id, a->job_id());
  EXPECT_EQ(r.renewed[1].job_id, b->job_id());
  ASSERT_EQ(r.cancelled.size(), 1u);
  EXPECT_EQ(r.cancelled[0].job_id, b->job_id());
  ASSERT_EQ(r.dropped.size(), 2u);
  EXPECT_EQ(r.dropped[0].reason, AgentRefusal::kBadSecret);
  EXPECT_EQ(r.dropped[1].reason, AgentRefusal::kUnknownJob);
  // Both renewed: neither expires at the original deadline.
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  EXPECT_TRUE(expired.empty());
  ASSERT_OK_AND_ASSIGN(none, store_->RenewLeases("a1", {}, 5000, kTtl));
  EXPECT_TRUE(none.renewed.empty() && none.dropped.empty());
}

// A heartbeat may name a lease more than once (a confused or hostile agent): each mention is
// answered, and the statement joins each distinct lease once, however many times it is named.
TEST_P(StoreConformanceTest, AHeartbeatNamingALeaseManyTimesIsAnsweredForEachMention) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  AttemptRef wrong = Ref(*a);
  wrong.lease_secret = "not-it";
  std::vector<AttemptRef> named;
  for (int i = 0; i < 1024; ++i) named.push_back(i % 2 == 0 ? Ref(*a) : wrong);
  ASSERT_OK_AND_ASSIGN(r, store_->RenewLeases("a1", named, 2000 + kTtl - 1, kTtl));
  EXPECT_EQ(r.renewed.size(), 512u);
  ASSERT_EQ(r.dropped.size(), 512u);
  for (const RefusedAttempt& d : r.dropped) EXPECT_EQ(d.reason, AgentRefusal::kBadSecret);
  // A finished job's lease is refused as stale, from the same statement.
  ASSERT_TRUE(store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED)).ok());
  ASSERT_OK_AND_ASSIGN(after, store_->RenewLeases("a1", {Ref(*a)}, 2000 + kTtl, kTtl));
  ASSERT_EQ(after.dropped.size(), 1u);
  EXPECT_EQ(after.dropped[0].reason, AgentRefusal::kStaleLease);
}

// ---- Pruning ----

TEST_P(StoreConformanceTest, PruneAgentsKeepsRecentAndLeaseHolders) {
  ASSERT_TRUE(store_->UpsertAgent("old", AgentInfo("h1", "boot1", 2), 100).ok());
  ASSERT_TRUE(store_->UpsertAgent("busy", AgentInfo("h2", "boot2", 1), 100).ok());
  ASSERT_TRUE(store_->UpsertAgent("fresh", AgentInfo("h3", "boot3", 1), 5000).ok());
  ASSERT_TRUE(store_->UpsertAgent("old2", AgentInfo("h4", "boot4", 1), 200).ok());
  Insert(MakeCollection("c1", "alpha", 1));
  ASSERT_TRUE(Claim(Req("busy", {0})));
  ASSERT_OK_AND_ASSIGN(first, store_->PruneAgents(1000, 1));  // at most one: the oldest
  EXPECT_EQ(first, std::vector<std::string>{"old"});
  ASSERT_OK_AND_ASSIGN(second, store_->PruneAgents(1000, 10));
  EXPECT_EQ(second, std::vector<std::string>{"old2"});
  EXPECT_TRUE(absl::IsNotFound(store_->GetAgent("old").status()));
  ASSERT_OK_AND_ASSIGN(agents, store_->ListAgents());
  std::vector<std::string> left;
  for (const auto& a : agents) left.push_back(a.status.agent_id());
  EXPECT_EQ(left, (std::vector<std::string>{"busy", "fresh"}));
  ASSERT_OK_AND_ASSIGN(counts, store_->CountByState());
  EXPECT_EQ(counts.devices["idle"] + counts.devices["busy"] + counts.devices["offline"], 2);
}

}  // namespace
}  // namespace npuperf::server
