// The job life-cycle rules every Store backend applies (core/job_rules.h):
// what a finished attempt and an expired lease do to a job, the lease rule
// of every report, renewal, adoption and artifact, the artifact quota, and
// what a refusal looks like on the wire. The backends' conformance suite
// checks that both apply them; these pin the rules themselves.
#include "server/core/job_rules.h"

#include "common/sha256.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

JobFacts Job(int32_t attempt, int32_t max_attempts, int32_t lost_count = 0) {
  JobFacts j;
  j.attempt = attempt;
  j.max_attempts = max_attempts;
  j.lost_count = lost_count;
  return j;
}

AttemptResult Outcome(v1::AttemptOutcome outcome, bool retryable = false) {
  AttemptResult r;
  r.outcome = outcome;
  r.retryable = retryable;
  r.failure_reason = "msprof exited 1";
  r.max_lost = 3;
  return r;
}

TEST(DecideResultTest, ASucceededAttemptSucceedsUnlessItRanTheWrongProtocol) {
  EXPECT_EQ(DecideResult(Outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED), Job(1, 3)).next,
            v1::JOB_STATE_SUCCEEDED);
  JobFacts discovery = Job(1, 3);
  discovery.discovery = true;
  const JobDecision no_table = DecideResult(Outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED), discovery);
  EXPECT_EQ(no_table.next, v1::JOB_STATE_FAILED);
  EXPECT_NE(no_table.reason.find("must report a candidate table"), std::string::npos);
  AttemptResult with_table = Outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  with_table.discovery = v1::DiscoveryResult();
  EXPECT_EQ(DecideResult(with_table, discovery).next, v1::JOB_STATE_SUCCEEDED);
  const JobDecision stray = DecideResult(with_table, Job(1, 3));
  EXPECT_EQ(stray.next, v1::JOB_STATE_FAILED) << "a table from a job that is not discovery";
}

// What PostgreSQL's one-call path applies without reading the job: the
// decision DecideResult makes for that success whatever the job's counts and
// cancellation, as long as the job is not a discovery job (which the store
// checks); any other result is left to DecideResult.
TEST(DecideResultTest, ASuccessOfAPlainJobIsDecidedBeforeTheJobIsRead) {
  const AttemptResult success = Outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  const std::optional<JobDecision> plain = DecideSuccessOfPlainJob(success);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->next, v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(plain->reason, "");
  EXPECT_FALSE(plain->lost);
  for (JobFacts job : {Job(1, 1), Job(3, 3, 2), Job(2, 5, 1)}) {
    for (bool cancelled : {false, true}) {
      job.cancelled = cancelled;
      const JobDecision d = DecideResult(success, job);
      EXPECT_EQ(d.next, plain->next);
      EXPECT_EQ(d.reason, plain->reason);
      EXPECT_EQ(d.lost, plain->lost);
    }
  }
  AttemptResult with_table = success;
  with_table.discovery = v1::DiscoveryResult();
  EXPECT_FALSE(DecideSuccessOfPlainJob(with_table));
  for (auto outcome : {v1::ATTEMPT_OUTCOME_FAILED, v1::ATTEMPT_OUTCOME_CANCELLED,
                       v1::ATTEMPT_OUTCOME_INTERRUPTED, v1::ATTEMPT_OUTCOME_UNSPECIFIED}) {
    EXPECT_FALSE(DecideSuccessOfPlainJob(Outcome(outcome, true))) << outcome;
  }
}

TEST(DecideResultTest, ARetryableFailureRequeuesUntilTheBudgetIsSpent) {
  const AttemptResult failed = Outcome(v1::ATTEMPT_OUTCOME_FAILED, /*retryable=*/true);
  EXPECT_EQ(DecideResult(failed, Job(1, 2)).next, v1::JOB_STATE_QUEUED);
  const JobDecision last = DecideResult(failed, Job(2, 2));
  EXPECT_EQ(last.next, v1::JOB_STATE_FAILED);
  EXPECT_EQ(last.reason, "attempt 2 failed: msprof exited 1");
  // Lost attempts do not use the retry budget.
  EXPECT_EQ(DecideResult(failed, Job(3, 2, /*lost_count=*/2)).next, v1::JOB_STATE_QUEUED);
  EXPECT_EQ(DecideResult(Outcome(v1::ATTEMPT_OUTCOME_FAILED), Job(1, 3)).next, v1::JOB_STATE_FAILED)
      << "a failure that is not retryable ends the job at once";
}

TEST(DecideResultTest, AnInterruptionRequeuesUntilMaxLostWithoutUsingTheBudget) {
  const AttemptResult interrupted = Outcome(v1::ATTEMPT_OUTCOME_INTERRUPTED);
  const JobDecision first = DecideResult(interrupted, Job(5, 1, /*lost_count=*/0));
  EXPECT_EQ(first.next, v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(first.lost);
  const JobDecision third = DecideResult(interrupted, Job(5, 1, /*lost_count=*/2));
  EXPECT_EQ(third.next, v1::JOB_STATE_FAILED);
  EXPECT_NE(third.reason.find("interrupted too often"), std::string::npos);
}

TEST(DecideResultTest, ACancelledCollectionEndsItsJobsCancelledWhateverTheyReport) {
  JobFacts cancelled = Job(1, 3);
  cancelled.cancelled = true;
  for (v1::AttemptOutcome o : {v1::ATTEMPT_OUTCOME_FAILED, v1::ATTEMPT_OUTCOME_INTERRUPTED}) {
    const JobDecision d = DecideResult(Outcome(o, /*retryable=*/true), cancelled);
    EXPECT_EQ(d.next, v1::JOB_STATE_CANCELLED) << o;
    EXPECT_FALSE(d.lost) << o;
  }
  EXPECT_EQ(DecideResult(Outcome(v1::ATTEMPT_OUTCOME_CANCELLED), Job(1, 3)).next,
            v1::JOB_STATE_CANCELLED);
}

TEST(DecideExpiryTest, AnExpiredLeaseRequeuesUntilMaxLostAndNamesTheAgent) {
  const JobDecision first = DecideExpiry(Job(1, 3), "a7", 3);
  EXPECT_EQ(first.next, v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(first.lost);
  EXPECT_EQ(first.reason, "attempt 1 lost: lease expired on agent a7; retrying");
  const JobDecision last = DecideExpiry(Job(3, 3, /*lost_count=*/2), "a7", 3);
  EXPECT_EQ(last.next, v1::JOB_STATE_FAILED);
  EXPECT_NE(last.reason.find("lost its agent 3 times"), std::string::npos);
  JobFacts cancelled = Job(1, 3);
  cancelled.cancelled = true;
  EXPECT_EQ(DecideExpiry(cancelled, "a7", 3).next, v1::JOB_STATE_CANCELLED);
}

LeaseFacts Live() {
  LeaseFacts f;
  f.state = v1::JOB_STATE_RUNNING;
  f.attempt = 2;
  f.fencing_token = 5;
  f.agent_id = "a1";
  f.host = "h1";
  f.lease_expires_ms = 10'000;
  f.secret_sha256 = Sha256Hex("s3cret");
  return f;
}

TEST(CheckLeaseTest, EachRuleNamesItsRefusal) {
  const AttemptRef ok{1, 2, 5, "s3cret"};
  EXPECT_EQ(CheckLease(Live(), ok, "a1"), std::nullopt);
  EXPECT_EQ(CheckLease(Live(), {1, 2, 6, "s3cret"}, "a1"), AgentRefusal::kStaleLease);
  EXPECT_EQ(CheckLease(Live(), {1, 1, 5, "s3cret"}, "a1"), AgentRefusal::kStaleLease);
  EXPECT_EQ(CheckLease(Live(), ok, "a2"), AgentRefusal::kForeignAgent);
  EXPECT_EQ(CheckLease(Live(), ok, ""), AgentRefusal::kForeignAgent);
  EXPECT_EQ(CheckLease(Live(), {1, 2, 5, ""}, "a1"), AgentRefusal::kBadSecret);
  EXPECT_EQ(CheckLease(Live(), {1, 2, 5, Sha256Hex("s3cret")}, "a1"), AgentRefusal::kBadSecret);
  LeaseFacts done = Live();
  done.state = v1::JOB_STATE_SUCCEEDED;
  EXPECT_EQ(CheckLease(done, ok, "a1"), AgentRefusal::kStaleLease);
  // A lease granted before migration 0004 has no secret and needs none.
  LeaseFacts old = Live();
  old.secret_sha256.reset();
  EXPECT_EQ(CheckLease(old, {1, 2, 5, ""}, "a1"), std::nullopt);
}

TEST(CheckLeaseTest, AdoptionNeedsTheSameHostALiveLeaseAndTheSecret) {
  const AttemptRef ok{1, 2, 5, "s3cret"};
  EXPECT_EQ(CheckAdoption(Live(), ok, "h1", 10'000), std::nullopt);
  EXPECT_EQ(CheckAdoption(Live(), ok, "h1", 10'001), AgentRefusal::kStaleLease);
  EXPECT_EQ(CheckAdoption(Live(), ok, "h2", 9'000), AgentRefusal::kForeignAgent);
  EXPECT_EQ(CheckAdoption(Live(), {1, 2, 5, "x"}, "h1", 9'000), AgentRefusal::kBadSecret);
}

TEST(AgentRefusalTest, StatusCarriesCodeAndReason) {
  const absl::Status s = LeaseRefused(AgentRefusal::kBadSecret, {1, 2, 5, "wrong-secret-text"});
  EXPECT_TRUE(absl::IsPermissionDenied(s));
  EXPECT_EQ(AgentRefusalOf(s), AgentRefusal::kBadSecret);
  EXPECT_EQ(s.message().find("wrong-secret-text"), std::string::npos) << s;  // never echoed
  EXPECT_TRUE(absl::IsFailedPrecondition(LeaseRefused(AgentRefusal::kStaleLease, {})));
  EXPECT_TRUE(absl::IsNotFound(LeaseRefused(AgentRefusal::kUnknownJob, {})));
  EXPECT_EQ(AgentRefusalOf(absl::PermissionDeniedError("plain")), std::nullopt);
}

TEST(CheckLeaseTest, AnArtifactNeedsTheSucceededAttemptsOwnLeaseAndSecret) {
  LeaseFacts done = Live();
  done.state = v1::JOB_STATE_SUCCEEDED;
  const AttemptRef ok{1, 2, 5, "s3cret"};
  EXPECT_EQ(CheckArtifactLease(done, ok, "a1"), std::nullopt);
  EXPECT_EQ(CheckArtifactLease(Live(), ok, "a1"), AgentRefusal::kStaleLease)
      << "a running job has no round yet";
  EXPECT_EQ(CheckArtifactLease(done, {1, 2, 4, "s3cret"}, "a1"), AgentRefusal::kStaleLease);
  EXPECT_EQ(CheckArtifactLease(done, ok, "a2"), AgentRefusal::kForeignAgent);
  EXPECT_EQ(CheckArtifactLease(done, {1, 2, 5, "x"}, "a1"), AgentRefusal::kBadSecret);
}

TEST(CheckArtifactQuotaTest, ATeamsOwnQuotaReplacesTheDefaultAndTheErrorNamesTheFlag) {
  NewArtifact a;
  a.size_bytes = 100;
  a.quota_bytes = 1000;
  a.team_quota_bytes["beta"] = 150;
  EXPECT_TRUE(CheckArtifactQuota(a, "alpha", 900).ok()) << "exactly the quota fits";
  const absl::Status over = CheckArtifactQuota(a, "alpha", 901);
  EXPECT_TRUE(absl::IsResourceExhausted(over));
  EXPECT_NE(over.message().find("--artifact-quota-mib"), std::string::npos) << over;
  const absl::Status beta = CheckArtifactQuota(a, "beta", 51);
  EXPECT_TRUE(absl::IsResourceExhausted(beta));
  EXPECT_NE(beta.message().find("--artifact-retention-team"), std::string::npos) << beta;
  a.quota_bytes = 0;
  EXPECT_TRUE(CheckArtifactQuota(a, "alpha", int64_t{1} << 40).ok()) << "0: no quota";
}

TEST(AgentRefusalTest, EveryRefusalHasItsNameAndReason) {
  EXPECT_STREQ(AgentRefusalName(AgentRefusal::kForeignAgent), "foreign_agent");
  EXPECT_EQ(AgentRefusalReason(AgentRefusal::kForeignAgent), "FOREIGN_AGENT");
  EXPECT_TRUE(absl::IsUnauthenticated(AgentRefused(AgentRefusal::kNoClientCert, "no cert")));
  EXPECT_TRUE(absl::IsInvalidArgument(AgentRefused(AgentRefusal::kUnregisteredDevice, "dev 9")));
}

}  // namespace
// A lease is rewritten once less than half its TTL is left: with a 1 s
// heartbeat and a 30 s TTL, once every 15 heartbeats.
TEST(JobRulesTest, ALeaseIsDueForRenewalOnceLessThanHalfItsTtlIsLeft) {
  EXPECT_FALSE(LeaseRenewalDue(/*expires=*/31'000, /*now=*/1'000, /*ttl=*/30'000));
  EXPECT_FALSE(LeaseRenewalDue(16'000, 1'000, 30'000)) << "exactly half left";
  EXPECT_TRUE(LeaseRenewalDue(15'999, 1'000, 30'000));
  EXPECT_TRUE(LeaseRenewalDue(500, 1'000, 30'000)) << "already past";
  EXPECT_EQ(LeaseRenewalThreshold(1'000, 30'000), 16'000);
  int writes = 0;
  for (int64_t now = 0, expires = 30'000; now < 300'000; now += 1'000) {
    if (LeaseRenewalDue(expires, now, 30'000)) {
      expires = now + 30'000;
      ++writes;
    }
    ASSERT_GE(expires - now, 15'000) << "a held lease keeps at least half its TTL";
  }
  EXPECT_LE(writes, 300 / 15 + 1);
}

}  // namespace npuperf::server
