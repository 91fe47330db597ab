// Store conformance: artifacts (issue 19): the attempt rule of an attach,
// idempotent attaches, the team's quota, team-scoped listings and the
// retention sweep that keeps what pinned baselines need.
#include <map>
#include <string>

#include "server/core/job_rules.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

NewArtifact ArtifactOf(const v1::JobAssignment& a, const std::string& sha, int64_t size,
                       int64_t now_ms, int64_t quota = 0, const std::string& agent = "a1") {
  NewArtifact n;
  n.agent_id = agent;
  n.ref = Ref(a);
  n.name = "raw.tar.gz";
  n.sha256 = sha;
  n.size_bytes = size;
  n.quota_bytes = quota;
  n.now_ms = now_ms;
  return n;
}

TEST_P(StoreConformanceTest, ArtifactsAttachToTheRoundOfTheSucceededAttempt) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("host-a1", "b", 1), 1000).ok());
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}, 2000));
  ASSERT_TRUE(a.has_value());
  // While the job runs there is no round yet: stale.
  EXPECT_TRUE(
      absl::IsFailedPrecondition(store_->CheckArtifact(ArtifactOf(*a, "s1", 10, 2500)).status()));
  const int64_t round = Finish(*a, "u1", 3000, 12.5);
  ASSERT_GT(round, 0);
  ASSERT_OK_AND_ASSIGN(check, store_->CheckArtifact(ArtifactOf(*a, "s1", 10, 3100)));
  EXPECT_EQ(check.round_id, round);
  EXPECT_EQ(check.team, "alpha");
  EXPECT_FALSE(check.already_present);
  EXPECT_TRUE(store_->ListArtifacts("", round).value_or(std::vector<ArtifactRecord>{1}).empty());
  ASSERT_OK_AND_ASSIGN(first, store_->AttachArtifact(ArtifactOf(*a, "s1", 10, 3200)));
  EXPECT_FALSE(first.already_present);
  // A retried attach of the same bytes changes nothing.
  ASSERT_OK_AND_ASSIGN(again, store_->AttachArtifact(ArtifactOf(*a, "s1", 10, 3300)));
  EXPECT_TRUE(again.already_present);
  EXPECT_EQ(again.created_ms, 3200);
  ASSERT_OK_AND_ASSIGN(listed, store_->ListArtifacts("alpha", round));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].sha256, "s1");
  EXPECT_EQ(listed[0].size_bytes, 10);
  EXPECT_EQ(listed[0].created_ms, 3200);
  EXPECT_EQ(listed[0].name, "raw.tar.gz");
  // Another team sees nothing of it.
  EXPECT_TRUE(
      store_->ListArtifacts("beta", round).value_or(std::vector<ArtifactRecord>{1}).empty());
  EXPECT_TRUE(store_->ArtifactReferenced("s1").value_or(false));
  EXPECT_FALSE(store_->ArtifactReferenced("s2").value_or(true));
}

TEST_P(StoreConformanceTest, ArtifactAttachObeysTheLeaseThatProducedTheRound) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("host-a1", "b", 1), 1000).ok());
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}, 2000));
  ASSERT_TRUE(a.has_value());
  ASSERT_GT(Finish(*a, "u1", 3000, 12.5), 0);
  auto refusal = [&](const NewArtifact& n) {
    return AgentRefusalOf(store_->AttachArtifact(n).status());
  };
  NewArtifact stale = ArtifactOf(*a, "s1", 10, 3100);
  stale.ref.fencing_token += 1;
  EXPECT_EQ(refusal(stale), AgentRefusal::kStaleLease);
  NewArtifact other_attempt = ArtifactOf(*a, "s1", 10, 3100);
  other_attempt.ref.attempt += 1;
  EXPECT_EQ(refusal(other_attempt), AgentRefusal::kStaleLease);
  EXPECT_EQ(refusal(ArtifactOf(*a, "s1", 10, 3100, 0, "a2")), AgentRefusal::kForeignAgent);
  NewArtifact bad_secret = ArtifactOf(*a, "s1", 10, 3100);
  bad_secret.ref.lease_secret = "guess";
  EXPECT_EQ(refusal(bad_secret), AgentRefusal::kBadSecret);
  NewArtifact unknown = ArtifactOf(*a, "s1", 10, 3100);
  unknown.ref.job_id = 999;
  EXPECT_EQ(refusal(unknown), AgentRefusal::kUnknownJob);
  EXPECT_TRUE(store_->ListArtifacts("", 1).value_or(std::vector<ArtifactRecord>{1}).empty());
}

TEST_P(StoreConformanceTest, ArtifactQuotaNamesTheTeamAndTheLimit) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("host-a1", "b", 1), 1000).ok());
  Insert(MakeCollection("c1", "alpha", 2));
  auto a = Claim(Req("a1", {0}, 2000));
  ASSERT_TRUE(a.has_value());
  ASSERT_GT(Finish(*a, "u1", 3000, 12.5), 0);
  ASSERT_TRUE(store_->AttachArtifact(ArtifactOf(*a, "s1", 60, 3100, 100)).ok());
  const absl::Status over = store_->CheckArtifact(ArtifactOf(*a, "s2", 50, 3200, 100)).status();
  EXPECT_TRUE(absl::IsResourceExhausted(over)) << over;
  EXPECT_NE(over.message().find("team alpha"), std::string::npos) << over;
  EXPECT_NE(over.message().find("quota of 100 bytes"), std::string::npos) << over;
  EXPECT_TRUE(absl::IsResourceExhausted(
      store_->AttachArtifact(ArtifactOf(*a, "s2", 50, 3200, 100)).status()));
  // Bytes the round already has pass (a retry), and what fits fits.
  EXPECT_TRUE(store_->AttachArtifact(ArtifactOf(*a, "s1", 60, 3300, 100)).ok());
  EXPECT_TRUE(store_->AttachArtifact(ArtifactOf(*a, "s3", 40, 3300, 100)).ok());
}

TEST_P(StoreConformanceTest, ArtifactSweepKeepsWhatPinnedBaselinesNeed) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("host-a1", "b", 3), 1000).ok());
  std::vector<int64_t> rounds;
  for (const char* id : {"c1", "c2", "c3"}) {
    Insert(MakeCollection(id, "alpha", 1));
    auto a = Claim(Req("a1", {0, 1, 2}, 2000));
    ASSERT_TRUE(a.has_value());
    rounds.push_back(Finish(*a, std::string("u-") + id, 3000, 12.5));
    // c1 and c3 share bytes (the same raw tree twice).
    const std::string sha = std::string(id) == "c2" ? "s2" : "s13";
    ASSERT_TRUE(store_->AttachArtifact(ArtifactOf(*a, sha, 10, 4000)).ok());
  }
  Baseline pin;
  pin.label = "branch=main";
  pin.round_id = rounds[1];
  pin.pinned_ms = 4100;
  ASSERT_TRUE(store_->PinBaseline("alpha", pin).ok());
  Baseline by_collection;
  by_collection.label = "release=v1";
  by_collection.collection_id = "c3";
  by_collection.pinned_ms = 4100;
  ASSERT_TRUE(store_->PinBaseline("alpha", by_collection).ok());

  ASSERT_OK_AND_ASSIGN(early, store_->SweepArtifacts(4000, 100, {}));  // nothing older than 4000
  EXPECT_TRUE(early.deleted.empty());
  ASSERT_OK_AND_ASSIGN(swept, store_->SweepArtifacts(5000, 100, {}));
  ASSERT_EQ(swept.deleted.size(), 1u);  // c1's; c2 (round pin) and c3 (collection pin) stay
  EXPECT_EQ(swept.deleted[0].round_id, rounds[0]);
  EXPECT_TRUE(swept.unreferenced.empty());  // c3 still references s13
  EXPECT_TRUE(
      store_->ListArtifacts("", rounds[0]).value_or(std::vector<ArtifactRecord>{1}).empty());
  EXPECT_EQ(store_->ListArtifacts("", rounds[1]).value_or(std::vector<ArtifactRecord>{}).size(),
            1u);
  // Unpinned, the rest goes, and its bytes are no longer referenced.
  by_collection.collection_id = "c1";
  ASSERT_TRUE(store_->PinBaseline("alpha", by_collection).ok());
  ASSERT_OK_AND_ASSIGN(rest, store_->SweepArtifacts(5000, 100, {}));
  ASSERT_EQ(rest.deleted.size(), 1u);
  EXPECT_EQ(rest.deleted[0].round_id, rounds[2]);
  ASSERT_EQ(rest.unreferenced.size(), 1u);
  EXPECT_EQ(rest.unreferenced[0], "s13");
}

TEST_P(StoreConformanceTest, ArtifactSweepScopeCoversOneTeamOrEveryTeamButSome) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("host-a1", "b", 3), 1000).ok());
  std::map<std::string, int64_t> round_of;
  for (const char* team : {"alpha", "beta", "gam\"ma"}) {
    const std::string id = std::string("c-") + (team[0] == 'g' ? "gamma" : team);
    Insert(MakeCollection(id, team, 1));
    auto a = Claim(Req("a1", {0, 1, 2}, 2000));
    ASSERT_TRUE(a.has_value());
    round_of[team] = Finish(*a, "u-" + id, 3000, 12.5);
    ASSERT_TRUE(store_->AttachArtifact(ArtifactOf(*a, "s-" + id, 10, 4000)).ok());
  }
  ArtifactSweepScope only_beta;
  only_beta.team = "beta";
  ASSERT_OK_AND_ASSIGN(beta, store_->SweepArtifacts(5000, 100, only_beta));
  ASSERT_EQ(beta.deleted.size(), 1u);
  EXPECT_EQ(beta.deleted[0].team, "beta");
  ArtifactSweepScope others;
  others.except = {"gam\"ma"};  // a name that needs JSON escaping
  ASSERT_OK_AND_ASSIGN(rest, store_->SweepArtifacts(5000, 100, others));
  ASSERT_EQ(rest.deleted.size(), 1u);
  EXPECT_EQ(rest.deleted[0].team, "alpha");
  EXPECT_EQ(
      store_->ListArtifacts("", round_of["gam\"ma"]).value_or(std::vector<ArtifactRecord>{}).size(),
      1u);
}

TEST_P(StoreConformanceTest, ArtifactQuotaOfATeamReplacesTheGlobalOne) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("host-a1", "b", 1), 1000).ok());
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}, 2000));
  ASSERT_TRUE(a.has_value());
  ASSERT_GT(Finish(*a, "u1", 3000, 12.5), 0);
  NewArtifact big = ArtifactOf(*a, "s1", 500, 3100, /*quota=*/100);
  EXPECT_TRUE(absl::IsResourceExhausted(store_->CheckArtifact(big).status()));
  big.team_quota_bytes["alpha"] = 1000;
  EXPECT_TRUE(store_->AttachArtifact(big).ok());
  NewArtifact more = ArtifactOf(*a, "s2", 600, 3200, /*quota=*/0);
  more.team_quota_bytes["alpha"] = 1000;
  auto refused = store_->CheckArtifact(more);
  ASSERT_TRUE(absl::IsResourceExhausted(refused.status()));
  EXPECT_NE(refused.status().message().find("--artifact-retention-team"), std::string::npos)
      << refused.status();
  more.team_quota_bytes["alpha"] = 0;  // 0: no quota for the team
  EXPECT_TRUE(store_->AttachArtifact(more).ok());
}

}  // namespace
}  // namespace npuperf::server
