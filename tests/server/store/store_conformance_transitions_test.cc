// Store conformance: the job state machine as the backends enforce it (the fixture:
// store_conformance.h). QUEUED -> LEASED -> RUNNING -> a terminal state; back to QUEUED on a lost
// lease or a retry; a report for an attempt that no longer holds the job is refused; SUCCEEDED,
// FAILED and CANCELLED never change, whatever an agent, the reaper or a user asks.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/core/assignment.h"
#include "server/core/job_state.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

// Long after every lease of these tests expired.
constexpr int64_t kFarFuture = 1'000'000'000'000;

// A job that finished: its collection (of one job), the attempt that ended it, the state it
// ended in and its collection's.
struct FinishedJob {
  std::string collection;
  v1::JobAssignment attempt;
  v1::JobState state;
  v1::CollectionState collection_state;
};

// Agent a1, registered on host h1, asking for work on `devices` at now_ms.
ClaimRequest OnH1(std::vector<int> devices, int64_t now_ms) {
  return ReqOnHost("h1", "a1", std::move(devices), now_ms);
}

// Collections "ok", "bad" and "stop" of one job each, claimed by a1 (registered on h1 by the
// caller) and ended SUCCEEDED, FAILED (no retry) and CANCELLED (cancelled while leased, the
// agent reporting the stop). Empty on an error.
std::vector<FinishedJob> FinishOneOfEach(Store& store) {
  std::vector<FinishedJob> done = {
      {"ok", {}, v1::JOB_STATE_SUCCEEDED, v1::COLLECTION_STATE_SUCCEEDED},
      {"bad", {}, v1::JOB_STATE_FAILED, v1::COLLECTION_STATE_FAILED},
      {"stop", {}, v1::JOB_STATE_CANCELLED, v1::COLLECTION_STATE_CANCELLED}};
  const v1::AttemptOutcome outcomes[] = {v1::ATTEMPT_OUTCOME_SUCCEEDED, v1::ATTEMPT_OUTCOME_FAILED,
                                         v1::ATTEMPT_OUTCOME_CANCELLED};
  for (int i = 0; i < 3; ++i) {
    FinishedJob& job = done[i];
    EXPECT_TRUE(store.InsertCollection(MakeCollection(job.collection, "alpha", 1)).ok());
    auto got = store.ClaimJob(OnH1({i}, 2000 + i), ChooseClaim);
    const std::string claimed = got.ok() && got->has_value() ? (*got)->collection_id() : "none";
    if (claimed != job.collection) {
      ADD_FAILURE() << "claimed " << claimed << " instead of " << job.collection << ": "
                    << got.status();
      return {};
    }
    job.attempt = **got;
    if (i == 2) {
      EXPECT_TRUE(store.CancelCollection("alpha", job.collection, "user", 2500).ok());
    }
    auto ack = store.RecordResult(Result(job.attempt, job.collection, outcomes[i], 3000 + i));
    EXPECT_TRUE(ack.ok()) << job.collection << ": " << ack.status();
  }
  return done;
}

// What moved since the jobs finished ("" when every job and collection is as it ended).
std::string Moved(Store& store, const std::vector<FinishedJob>& jobs) {
  std::string out;
  for (const FinishedJob& j : jobs) {
    auto c = store.GetCollection("", j.collection);
    if (!c.ok() || c->jobs_size() != 1) {
      absl::StrAppend(&out, j.collection, ": ", c.status().ToString(), "; ");
      continue;
    }
    if (c->jobs(0).state() != j.state) {
      absl::StrAppend(&out, j.collection, " job ", JobStateName(j.state), " -> ",
                      JobStateName(c->jobs(0).state()), "; ");
    }
    if (c->state() != j.collection_state) {
      absl::StrAppend(&out, j.collection, " ", v1::CollectionState_Name(j.collection_state), " -> ",
                      v1::CollectionState_Name(c->state()), "; ");
    }
  }
  return out;
}

// Every report agent a1 can make for `attempt` is refused as stale: a result under a new update
// uuid (a success, then a retryable failure), then progress.
void ExpectReportsRefused(Store& store, const v1::JobAssignment& attempt, int64_t now_ms) {
  for (auto outcome : {v1::ATTEMPT_OUTCOME_SUCCEEDED, v1::ATTEMPT_OUTCOME_FAILED}) {
    const std::string uuid =
        absl::StrCat("late-", attempt.job_id(), "-", v1::AttemptOutcome_Name(outcome));
    auto late = store.RecordResult(Result(attempt, uuid, outcome, now_ms));
    EXPECT_TRUE(absl::IsFailedPrecondition(late.status())) << uuid << ": " << late.status();
  }
  auto progress = store.RecordProgress("a1", Ref(attempt), v1::JobProgress(), now_ms, kTtl);
  EXPECT_TRUE(absl::IsFailedPrecondition(progress.status()))
      << "progress for job " << attempt.job_id() << ": " << progress.status();
}

std::vector<int64_t> JobIds(const std::vector<AttemptRef>& refs) {
  std::vector<int64_t> ids;
  for (const AttemptRef& r : refs) ids.push_back(r.job_id);
  std::sort(ids.begin(), ids.end());
  return ids;
}
std::vector<int64_t> JobIds(const std::vector<RefusedAttempt>& refused) {
  std::vector<AttemptRef> refs;
  for (const RefusedAttempt& r : refused) refs.push_back(r.ref);
  return JobIds(refs);
}

// ---- Terminal states ----

TEST_P(StoreConformanceTest, TerminalJobsNeverChange) {
  ASSERT_TRUE(store_->UpsertAgent("a1", AgentInfo("h1", "boot1", 5), 100).ok());
  const std::vector<FinishedJob> done = FinishOneOfEach(*store_);
  ASSERT_EQ(done.size(), 3u);
  ASSERT_EQ(Moved(*store_, done), "") << "the jobs did not end as set up";
  std::vector<AttemptRef> refs;  // the finished attempts
  for (const FinishedJob& j : done) refs.push_back(Ref(j.attempt));
  for (const FinishedJob& j : done) ExpectReportsRefused(*store_, j.attempt, 4000);
  EXPECT_EQ(RoundCount("alpha"), 1u);  // ok's own round only
  EXPECT_EQ(Moved(*store_, done), "") << "after RecordResult and RecordProgress";
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(kFarFuture, 3));
  EXPECT_TRUE(expired.empty()) << expired.size() << " leases expired";
  EXPECT_EQ(Moved(*store_, done), "") << "after ExpireLeases";
  for (const FinishedJob& j : done) {
    auto orders = store_->CancelCollection("alpha", j.collection, "too late", kFarFuture + 100);
    ASSERT_TRUE(orders.ok()) << j.collection << ": " << orders.status();
    EXPECT_TRUE(orders->empty()) << j.collection << ": a finished job was ordered to stop";
  }
  EXPECT_EQ(Moved(*store_, done), "") << "after CancelCollection";
  // A job that can still change, next to them: the one claimed, renewed and adopted.
  Insert(MakeCollection("live", "alpha", 1));
  auto live = Claim(OnH1({0, 1, 2, 3, 4}, kFarFuture + 1000));
  ASSERT_TRUE(live);
  EXPECT_EQ(live->collection_id(), "live");
  EXPECT_FALSE(Claim(OnH1({0, 1, 2, 3, 4}, kFarFuture + 1001)));
  EXPECT_EQ(Moved(*store_, done), "") << "after ClaimJob";
  refs.push_back(Ref(*live));
  ASSERT_OK_AND_ASSIGN(renewal, store_->RenewLeases("a1", refs, kFarFuture + 2000, kTtl));
  refs.pop_back();
  EXPECT_EQ(JobIds(renewal.dropped), JobIds(refs));
  EXPECT_TRUE(renewal.cancelled.empty());
  EXPECT_EQ(Moved(*store_, done), "") << "after RenewLeases";
  // a1 restarts as a1b on the same host and boot, still running all four.
  ASSERT_TRUE(store_->UpsertAgent("a1b", AgentInfo("h1", "boot1", 5), kFarFuture + 3000).ok());
  refs.push_back(Ref(*live));
  ASSERT_OK_AND_ASSIGN(adopted, store_->AdoptAttempts("a1b", refs, kFarFuture + 3000, kTtl));
  EXPECT_EQ(JobIds(adopted.renewed), std::vector<int64_t>{live->job_id()});
  EXPECT_EQ(Moved(*store_, done), "") << "after AdoptAttempts";
}

// ---- Back to the queue ----

TEST_P(StoreConformanceTest, ResultForAQueuedJobIsRejected) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/2));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_TRUE(expired[0].requeued);
  ASSERT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  const v1::CollectionState queued = StateOf("c1");
  // The lost attempt reports as if it still held the job: nothing is stored, nothing moves.
  ExpectReportsRefused(*store_, *a, 2000 + kTtl + 100);
  EXPECT_EQ(RoundCount("alpha"), 0u);
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(StateOf("c1"), queued);
  // The job is claimed again as attempt 2, under a new token.
  auto b = Claim(Req("a2", {0}, 20'000));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->job_id(), a->job_id());
  EXPECT_EQ(b->attempt(), 2);
  EXPECT_GT(b->fencing_token(), a->fencing_token());
}

TEST_P(StoreConformanceTest, ARunningJobIsRequeuedOnExpiryAndOnRetry) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/2));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_TRUE(store_->RecordProgress("a1", Ref(*a), v1::JobProgress(), 2100, kTtl).ok());
  ASSERT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_RUNNING);
  // The progress renewed the lease: live at the claim's deadline, expired after its own.
  ASSERT_OK_AND_ASSIGN(live, store_->ExpireLeases(2000 + kTtl + 1, 3));
  EXPECT_TRUE(live.empty());
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2100 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].job_id, a->job_id());
  EXPECT_TRUE(expired[0].requeued);
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  // Attempt 2 runs, then fails retryably with a retry left: queued again.
  auto b = Claim(Req("a2", {0}, 20'000));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->attempt(), 2);
  ASSERT_TRUE(store_->RecordProgress("a2", Ref(*b), v1::JobProgress(), 20'100, kTtl).ok());
  ASSERT_EQ(JobOf("c1", b->job_id()).state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(
      store_->RecordResult(Result(*b, "f2", v1::ATTEMPT_OUTCOME_FAILED, 20'200, 12.5, "a2")).ok());
  v1::Job job = JobOf("c1", b->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(absl::StrContains(job.reason(), "retrying")) << job.reason();
  auto c = Claim(Req("a1", {0}, 21'000));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->job_id(), a->job_id());
  EXPECT_EQ(c->attempt(), 3);
}

}  // namespace
}  // namespace npuperf::server
