// Store conformance: progress, results, retries, rounds and replicas (the fixture:
// store_conformance.h).
#include <atomic>
#include <future>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "server/core/metrics.h"
#include "server/core/scheduler.h"
#include "tests/server/store/store_conformance.h"

#if NPUPERF_WITH_POSTGRES
#include <pqxx/pqxx>
#endif

namespace npuperf::server {
namespace {

// ---- Progress ----

TEST_P(StoreConformanceTest, RecordProgressChecksTheFencingToken) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  v1::JobProgress p;
  p.set_step(2);
  p.set_step_count(9);
  ASSERT_OK_AND_ASSIGN(cancel, store_->RecordProgress("a1", Ref(*a), p, 2100, kTtl));
  EXPECT_FALSE(cancel);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job.progress().step(), 2);
  AttemptRef stale = Ref(*a);
  stale.fencing_token -= 1;
  EXPECT_TRUE(
      absl::IsFailedPrecondition(store_->RecordProgress("a1", stale, p, 2200, kTtl).status()));
  ASSERT_TRUE(store_->CancelCollection("", "c1", "stop", 2300).ok());
  ASSERT_OK_AND_ASSIGN(cancelled, store_->RecordProgress("a1", Ref(*a), p, 2400, kTtl));
  EXPECT_TRUE(cancelled);
}

// A progress report of a running collection's job takes no lock on the collection (issue 36):
// it goes through while another transaction (a result, a cancel) holds the collection's row.
TEST_P(StoreConformanceTest, ProgressOfARunningCollectionDoesNotWaitForTheCollectionsLock) {
#if NPUPERF_WITH_POSTGRES
  if (GetParam() != Backend::kPostgres) GTEST_SKIP() << "SQLite has one writer";
  Insert(MakeCollection("c1", "alpha", 2));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  v1::JobProgress p;
  p.set_step(1);
  ASSERT_TRUE(store_->RecordProgress("a1", Ref(*a), p, 2100, kTtl).ok());  // RUNNING now
  ASSERT_EQ(StateOf("c1"), v1::COLLECTION_STATE_RUNNING);
  pqxx::connection conn(pg_->url());
  pqxx::work holder(conn);
  holder.exec("SELECT id FROM collections WHERE id = 'c1' FOR UPDATE");
  // Should the report wait for the lock after all, it is let go after 20 s.
  std::atomic<bool> reported{false};
  std::atomic<bool> let_go{false};
  std::thread release([&] {
    for (int i = 0; i < 200 && !reported.load(); ++i) {
      clock_.SleepFor(std::chrono::milliseconds(100));
    }
    let_go = !reported.load();
    holder.abort();
  });
  p.set_step(2);
  auto got = store_->RecordProgress("a1", Ref(*a), p, 2200, kTtl);
  reported = true;
  release.join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_FALSE(*got);
  EXPECT_FALSE(let_go.load()) << "the report waited until the lock was let go";
  EXPECT_EQ(JobOf("c1", a->job_id()).progress().step(), 2);
#else
  GTEST_SKIP() << "built without PostgreSQL";
#endif
}

// The reports one heartbeat carries, in one call (issue 36): each held one is stored as
// RecordProgress would store it (RUNNING, the progress, a renewed lease); a refused one stores
// nothing and is left out, for RenewLeases to explain; of a job named twice the last counts.
TEST_P(StoreConformanceTest, ProgressOfOneHeartbeatIsStoredForEveryHeldLeaseItNames) {
  Insert(MakeCollection("c1", "alpha", 1));
  Insert(MakeCollection("c2", "alpha", 2));
  auto a = Claim(Req("a1", {0}));
  auto b = Claim(Req("a1", {1}));
  auto c = Claim(Req("a2", {2}));
  ASSERT_TRUE(a && b && c);
  ASSERT_TRUE(store_->CancelCollection("alpha", b->collection_id(), "user", 2050).ok());
  auto report = [](const AttemptRef& ref, int step) {
    ProgressReport r{ref, {}};
    r.progress.set_phase(v1::JOB_PHASE_METRIC_RUN);
    r.progress.set_step(step);
    return r;
  };
  AttemptRef wrong = Ref(*a);
  wrong.lease_secret = "not-it";
  AttemptRef stale = Ref(*b);
  stale.fencing_token -= 1;
  AttemptRef unknown = Ref(*a);
  unknown.job_id = 999'999;
  const int64_t now = 2000 + kTtl - 1;
  ASSERT_OK_AND_ASSIGN(
      r, store_->RecordProgressMany(
             "a1",
             {report(wrong, 9), report(Ref(*a), 3), report(unknown, 4), report(Ref(*c), 5),
              report(Ref(*b), 1), report(stale, 8), report(Ref(*b), 6)},
             now, kTtl));
  ASSERT_EQ(r.renewed.size(), 2u);
  EXPECT_EQ(r.renewed[0].job_id, a->job_id());
  EXPECT_EQ(r.renewed[1].job_id, b->job_id());
  ASSERT_EQ(r.cancelled.size(), 1u);
  EXPECT_EQ(r.cancelled[0].job_id, b->job_id());
  EXPECT_TRUE(r.dropped.empty());
  const v1::Job ja = JobOf(a->collection_id(), a->job_id());
  EXPECT_EQ(ja.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(ja.progress().step(), 3);
  EXPECT_EQ(ja.progress().phase(), v1::JOB_PHASE_METRIC_RUN);
  EXPECT_EQ(JobOf(b->collection_id(), b->job_id()).progress().step(), 6);
  // Another agent's lease: nothing of it was written.
  const v1::Job jc = JobOf(c->collection_id(), c->job_id());
  EXPECT_EQ(jc.state(), v1::JOB_STATE_LEASED);
  EXPECT_EQ(jc.progress().step(), 0);
  // a's and b's leases were renewed from `now`; c's was not.
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].job_id, c->job_id());
  ASSERT_OK_AND_ASSIGN(later, store_->ExpireLeases(now + kTtl + 1, 3));
  EXPECT_EQ(later.size(), 2u);
  ASSERT_OK_AND_ASSIGN(none, store_->RecordProgressMany("a1", {}, 5000, kTtl));
  EXPECT_TRUE(none.renewed.empty() && none.cancelled.empty());
}

// ---- Results ----

TEST_P(StoreConformanceTest, SuccessStoresExactlyOneRound) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  EXPECT_FALSE(ack.duplicate);
  EXPECT_GT(ack.round_id, 0);
  EXPECT_EQ(ack.collection_id, "c1");
  auto again = store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->round_id, ack.round_id);
  EXPECT_EQ(RoundCount("alpha"), 1u);
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.round_id(), ack.round_id);
  EXPECT_DOUBLE_EQ(job.kernel_time_us(), 12.5);
  EXPECT_EQ(job.bound_label(), "compute");
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_SUCCEEDED);
  // A new uuid for the finished attempt is stale: nothing more is stored.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      store_->RecordResult(Result(*a, "u2", v1::ATTEMPT_OUTCOME_SUCCEEDED)).status()));
  EXPECT_EQ(RoundCount("alpha"), 1u);
}

TEST_P(StoreConformanceTest, StaleTokenResultIsRejectedAndNotStored) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/2));
  auto first = Claim(Req("a1", {0}));
  ASSERT_TRUE(first);
  ASSERT_OK_AND_ASSIGN(expired, store_->ExpireLeases(2000 + kTtl + 1, 3));
  ASSERT_EQ(expired.size(), 1u);
  auto second = Claim(Req("a2", {0}, 20'000));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), first->job_id());
  EXPECT_EQ(second->fencing_token(), first->fencing_token() + 1);
  auto late = store_->RecordResult(Result(*first, "late", v1::ATTEMPT_OUTCOME_SUCCEEDED, 21'000));
  EXPECT_TRUE(absl::IsFailedPrecondition(late.status())) << late.status();
  EXPECT_EQ(RoundCount("alpha"), 0u);
  EXPECT_EQ(JobOf("c1", first->job_id()).state(), v1::JOB_STATE_LEASED);
  auto ok = store_->RecordResult(
      Result(*second, "fresh", v1::ATTEMPT_OUTCOME_SUCCEEDED, 22'000, 12.5, "a2"));
  ASSERT_TRUE(ok.ok()) << ok.status();
  ASSERT_OK_AND_ASSIGN(round, store_->GetRound("alpha", ok->round_id));
  EXPECT_EQ(round.attempt(), second->attempt());
}

// PostgreSQL stores a success's round before it takes the locks that decide
// whether the result applies (issue 36); a refusal must leave no trace of it.
TEST_P(StoreConformanceTest, AResultNamingTheLiveAttemptButRefusedStoresNoRound) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  AttemptResult wrong_secret = Result(*a, "impostor", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  wrong_secret.ref.lease_secret = "guessed";
  EXPECT_TRUE(absl::IsPermissionDenied(store_->RecordResult(wrong_secret).status()));
  AttemptResult wrong_agent = Result(*a, "other", v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000, 9.0, "a2");
  EXPECT_FALSE(store_->RecordResult(wrong_agent).ok());
  EXPECT_EQ(RoundCount("alpha"), 0u);
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_LEASED);
  // The holder's own result is stored as if nothing had been tried before.
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  ASSERT_OK_AND_ASSIGN(round, store_->GetRound("alpha", ack.round_id));
  EXPECT_EQ(round.job_id(), a->job_id());
  EXPECT_EQ(RoundCount("alpha"), 1u);
}

// The same checks while the collection has other unfinished jobs: PostgreSQL
// applies such a success in one call (npuperf_result, issue 36), which must
// refuse, answer a resend and keep the collection's state exactly as the
// general path does for a collection's last job.
TEST_P(StoreConformanceTest, ASuccessAmongUnfinishedJobsIsCheckedLikeAnyResult) {
  Insert(MakeCollection("c1", "alpha", 3));
  auto a = Claim(Req("a1", {0}));
  auto b = Claim(Req("a1", {1}));
  ASSERT_TRUE(a && b);
  AttemptResult wrong_secret = Result(*a, "impostor", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  wrong_secret.ref.lease_secret = "guessed";
  EXPECT_TRUE(absl::IsPermissionDenied(store_->RecordResult(wrong_secret).status()));
  AttemptResult wrong_agent = Result(*a, "other", v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000, 9.0, "a2");
  EXPECT_TRUE(absl::IsPermissionDenied(store_->RecordResult(wrong_agent).status()));
  AttemptResult no_agent = Result(*a, "nobody", v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000, 9.0, "");
  EXPECT_TRUE(absl::IsPermissionDenied(store_->RecordResult(no_agent).status()));
  AttemptResult stale = Result(*a, "stale", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  stale.ref.fencing_token -= 1;
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->RecordResult(stale).status()));
  AttemptResult later = Result(*a, "later", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  later.ref.attempt += 1;
  EXPECT_TRUE(absl::IsFailedPrecondition(store_->RecordResult(later).status()));
  EXPECT_EQ(RoundCount("alpha"), 0u);
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_LEASED);

  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  EXPECT_FALSE(ack.duplicate);
  EXPECT_GT(ack.round_id, 0);
  EXPECT_EQ(ack.collection_id, "c1");
  ASSERT_OK_AND_ASSIGN(again,
                       store_->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  EXPECT_TRUE(again.duplicate);
  EXPECT_EQ(again.round_id, ack.round_id);
  // The update's uuid again, for another job: refused, and b is untouched.
  EXPECT_TRUE(absl::IsInvalidArgument(
      store_->RecordResult(Result(*b, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED)).status()));
  EXPECT_EQ(JobOf("c1", b->job_id()).state(), v1::JOB_STATE_LEASED);
  const v1::Job ja = JobOf("c1", a->job_id());
  EXPECT_EQ(ja.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(ja.reason(), "");
  EXPECT_EQ(ja.round_id(), ack.round_id);
  EXPECT_DOUBLE_EQ(ja.kernel_time_us(), 12.5);
  EXPECT_EQ(ja.bound_label(), "compute");
  ASSERT_OK_AND_ASSIGN(round, store_->GetRound("alpha", ack.round_id));
  EXPECT_EQ(round.job_id(), a->job_id());
  EXPECT_EQ(round.attempt(), a->attempt());
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_RUNNING);
  // The device is free again.
  auto c = Claim(Req("a1", {0}, 4000));
  ASSERT_TRUE(c);
  ASSERT_TRUE(store_->RecordResult(Result(*b, "u-b", v1::ATTEMPT_OUTCOME_SUCCEEDED, 5000)).ok());
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_RUNNING);
  // The last one ends the collection.
  ASSERT_TRUE(store_->RecordResult(Result(*c, "u-c", v1::ATTEMPT_OUTCOME_SUCCEEDED, 6000)).ok());
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_SUCCEEDED);
  EXPECT_EQ(RoundCount("alpha"), 3u);
}

// A success after its collection was cancelled still counts (DecideResult),
// and the collection ends CANCELLED with its last live job, whichever path
// each result takes.
TEST_P(StoreConformanceTest, SuccessesAfterACancelAreKeptAndTheLastEndsTheCollectionCancelled) {
  Insert(MakeCollection("c1", "alpha", 4));
  auto a = Claim(Req("a1", {0}));
  auto b = Claim(Req("a1", {1}));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(store_->CancelCollection("alpha", "c1", "user", 2500).ok());
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(Result(*a, "u-a", v1::ATTEMPT_OUTCOME_SUCCEEDED)));
  EXPECT_GT(ack.round_id, 0);
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_RUNNING);
  ASSERT_TRUE(store_->RecordResult(Result(*b, "u-b", v1::ATTEMPT_OUTCOME_SUCCEEDED, 3100)).ok());
  EXPECT_EQ(JobOf("c1", b->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_CANCELLED);
  EXPECT_EQ(RoundCount("alpha"), 2u);
}

// Many replicas' resends of one success, all at once: one round, every ack
// names it (the round each stored ahead is kept once and discarded or
// never written by the rest). Of the collection's only job (the general
// path) and of one of two (PostgreSQL's one-call path, npuperf_result).
TEST_P(StoreConformanceTest, ConcurrentResendsOfOneSuccessStoreOneRound) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(second, OpenStore());
  for (int jobs : {1, 2}) {
    SCOPED_TRACE(absl::StrCat(jobs, " jobs"));
    const std::string id = absl::StrCat("c", jobs);
    Insert(MakeCollection(id, "alpha", jobs));
    auto a = Claim(Req("a1", {0}, 2000 * jobs));
    ASSERT_TRUE(a);
    std::vector<std::future<absl::StatusOr<ResultAck>>> acks;
    for (int i = 0; i < 8; ++i) {
      Store* store = i % 2 == 0 ? store_.get() : second.get();
      acks.push_back(std::async(std::launch::async, [store, &a, jobs] {
        return store->RecordResult(
            Result(*a, absl::StrCat("u", jobs), v1::ATTEMPT_OUTCOME_SUCCEEDED, 2000 * jobs + 1));
      }));
    }
    std::set<int64_t> rounds;
    int originals = 0;
    for (auto& f : acks) {
      absl::StatusOr<ResultAck> ack = f.get();
      ASSERT_TRUE(ack.ok()) << ack.status();
      rounds.insert(ack->round_id);
      if (!ack->duplicate) ++originals;
    }
    EXPECT_EQ(originals, 1);
    ASSERT_EQ(rounds.size(), 1u);
    EXPECT_GT(*rounds.begin(), 0);
    EXPECT_EQ(JobOf(id, a->job_id()).round_id(), *rounds.begin());
  }
  EXPECT_EQ(RoundCount("alpha"), 2u);
}

TEST_P(StoreConformanceTest, FailureRequeuesWhileAttemptsRemain) {
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->max_attempts(), 2);
  ASSERT_TRUE(store_->RecordResult(Result(*a, "f1", v1::ATTEMPT_OUTCOME_FAILED)).ok());
  v1::Job job = JobOf("c1", a->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(absl::StrContains(job.reason(), "retrying")) << job.reason();
  auto b = Claim(Req("a1", {0}, 4000));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->attempt(), 2);
  ASSERT_TRUE(store_->RecordResult(Result(*b, "f2", v1::ATTEMPT_OUTCOME_FAILED, 5000)).ok());
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(StateOf("c1"), v1::COLLECTION_STATE_FAILED);
  // A non-retryable failure fails at once.
  Insert(MakeCollection("c2", "alpha", 1, 0, 8, /*retry=*/3));
  auto c = Claim(Req("a1", {0}, 6000));
  ASSERT_TRUE(c);
  AttemptResult fatal = Result(*c, "f3", v1::ATTEMPT_OUTCOME_FAILED, 7000);
  fatal.retryable = false;
  ASSERT_TRUE(store_->RecordResult(fatal).ok());
  EXPECT_EQ(JobOf("c2", c->job_id()).state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(RoundCount("alpha"), 0u);
}

TEST_P(StoreConformanceTest, InterruptedDoesNotUseTheRetryBudget) {
  // Two attempts allowed: interrupted, failed (one real failure: retry), succeeded.
  Insert(MakeCollection("c1", "alpha", 1, 0, 8, /*retry=*/1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  AttemptResult cut = Result(*a, "i1", v1::ATTEMPT_OUTCOME_INTERRUPTED);
  cut.max_lost = 2;
  ASSERT_TRUE(store_->RecordResult(cut).ok());
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  auto b = Claim(Req("a1", {0}, 4000));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->attempt(), 2);
  ASSERT_TRUE(store_->RecordResult(Result(*b, "f2", v1::ATTEMPT_OUTCOME_FAILED, 5000)).ok());
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_QUEUED);
  auto c = Claim(Req("a1", {0}, 6000));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->attempt(), 3);
  auto done = store_->RecordResult(Result(*c, "s3", v1::ATTEMPT_OUTCOME_SUCCEEDED, 7000));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_SUCCEEDED);
  // Interrupted max_lost times: failed for good.
  Insert(MakeCollection("c2", "alpha", 1, 0, 8, /*retry=*/5));
  for (int i = 0; i < 2; ++i) {
    auto d = Claim(Req("a1", {0}, 8000 + i));
    ASSERT_TRUE(d);
    AttemptResult r = Result(*d, absl::StrCat("c2-", i), v1::ATTEMPT_OUTCOME_INTERRUPTED, 9000 + i);
    r.max_lost = 2;
    ASSERT_TRUE(store_->RecordResult(r).ok());
  }
  EXPECT_EQ(StateOf("c2"), v1::COLLECTION_STATE_FAILED);
}

// ---- Rounds ----

TEST_P(StoreConformanceTest, GetRoundAndListRounds) {
  NewCollection c = MakeCollection("c1", "alpha", 4);
  (*c.spec.mutable_labels())["branch"] = "main";
  Insert(c);
  std::vector<int64_t> rounds;
  for (int i = 0; i < 4; ++i) {
    auto a = Claim(Req("a1", {0}, 2000 + i * 100));
    ASSERT_TRUE(a);
    rounds.push_back(Finish(*a, absl::StrCat("u", i), 3000 + i * 100, 10.0 + i));
  }
  Insert(MakeCollection("b1", "beta", 1));
  ASSERT_OK_AND_ASSIGN(round, store_->GetRound("alpha", rounds[1]));
  EXPECT_EQ(round.collection_id(), "c1");
  EXPECT_EQ(round.case_id(), "case1");
  EXPECT_EQ(round.labels().at("branch"), "main");
  EXPECT_EQ(round.evidence().evidence_json(), "{\"big\": true}");
  EXPECT_DOUBLE_EQ(round.evidence().duration().aggregate_us(), 11.0);
  EXPECT_TRUE(absl::IsNotFound(store_->GetRound("beta", rounds[1]).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetRound("alpha", 999'999).status()));
  auto f = ForTeam<RoundFilter>("alpha");
  f.metric = "duration";
  ASSERT_OK_AND_ASSIGN(page, store_->ListRounds(f));
  ASSERT_EQ(page.rounds.size(), 4u);
  EXPECT_TRUE(page.rounds[0].evidence().evidence_json().empty());  // list view
  EXPECT_EQ(page.rounds[3].labels().at("branch"), "main");  // the collection's, as in GetRound
  ASSERT_EQ(page.series.size(), 4u);
  EXPECT_DOUBLE_EQ(page.series[3].value(), 13.0);
  EXPECT_EQ(page.series[3].round_id(), rounds[3]);
  EXPECT_EQ(page.last_id, 0);
  f.case_id = "case2";
  EXPECT_EQ(store_->ListRounds(f)->rounds.size(), 1u);
  f.case_id.clear();
  f.since_ms = 3100;
  f.until_ms = 3300;
  EXPECT_EQ(store_->ListRounds(f)->rounds.size(), 2u);
  f = ForTeam<RoundFilter>("alpha");
  f.labels = {{"branch", "dev"}};
  EXPECT_TRUE(store_->ListRounds(f)->rounds.empty());
  f.labels = {{"branch", "main"}};
  f.operator_name = "op_a";
  f.collection_id = "c1";
  f.limit = 3;
  auto first = store_->ListRounds(f);
  ASSERT_EQ(first->rounds.size(), 3u);
  EXPECT_EQ(first->last_id, rounds[2]);
  f.after_id = first->last_id;
  auto rest = store_->ListRounds(f);
  ASSERT_EQ(rest->rounds.size(), 1u);
  EXPECT_EQ(rest->rounds[0].id(), rounds[3]);
  f = ForTeam<RoundFilter>("beta");
  EXPECT_TRUE(store_->ListRounds(f)->rounds.empty());
}

// A figure's series gives back the value stored, bit for bit, at the edges of
// double: not the 15 digits a decimal print keeps, not zero for a subnormal.
TEST_P(StoreConformanceTest, AMetricSeriesReadsBackEveryFigureBitForBit) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  const std::vector<std::pair<std::string, double>> figures = {
      {"sum", 0.1 + 0.2},
      {"third", 1.0 / 3.0},
      {"tiny", std::numeric_limits<double>::denorm_min()},
      {"low", -std::numeric_limits<double>::max()},
      {"big", 123456789012345678.0}};
  AttemptResult r = Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  r.metrics.insert(r.metrics.end(), figures.begin(), figures.end());
  ASSERT_OK_AND_ASSIGN(ack, store_->RecordResult(r));
  for (const auto& [name, value] : figures) {
    auto f = ForTeam<RoundFilter>("alpha");
    f.metric = name;
    ASSERT_OK_AND_ASSIGN(page, store_->ListRounds(f));
    ASSERT_EQ(page.series.size(), 1u) << name;
    EXPECT_EQ(page.series[0].round_id(), ack.round_id);
    EXPECT_EQ(page.series[0].value(), value) << name;
  }
}

// ---- Replicas: two stores on one database ----

// What the replica test saw: claimed jobs, devices held between claim and result, broken rules.
struct ClaimLedger {
  void Take(int64_t job_id, std::pair<int, int> device) {
    absl::MutexLock lock(&mu);
    if (!claimed.insert(job_id).second) violations.push_back("a job was claimed twice");
    if (!held.insert(device).second) violations.push_back("a device was double-booked");
  }
  void Release(std::pair<int, int> device) {
    absl::MutexLock lock(&mu);
    held.erase(device);
  }
  void Note(const absl::Status& s) {
    absl::MutexLock lock(&mu);
    if (!s.ok()) violations.push_back(s.ToString());
  }
  absl::Mutex mu;
  std::set<int64_t> claimed ABSL_GUARDED_BY(mu);
  std::set<std::pair<int, int>> held ABSL_GUARDED_BY(mu);
  std::vector<std::string> violations ABSL_GUARDED_BY(mu);
};

// Several threads on two Store instances claim for 4 agents x 4 devices over
// 200 queued jobs and finish each job: no job is handed out twice and no
// device holds two leases at once; first one job per claim, then up to four
// (Store::ClaimJobs: one statement for all of them on PostgreSQL).
TEST_P(StoreConformanceTest, TwoReplicasNeverDoubleBook) {
  UseSqliteFile();
  ASSERT_OK_AND_ASSIGN(second, OpenStore());
  Store* replicas[2] = {store_.get(), second.get()};
  constexpr int kCollections = 10, kJobsEach = 20, kAgents = 4;
  for (const int batch : {1, 4}) {
    SCOPED_TRACE(absl::StrCat("up to ", batch, " jobs per claim"));
    const std::string run = absl::StrCat("b", batch);
    for (int i = 0; i < kCollections; ++i) {
      Insert(MakeCollection(absl::StrCat(run, "c", i), absl::StrCat(run, "team", i % 3), kJobsEach,
                            i % 2));
    }
    ClaimLedger ledger;
    std::atomic<int> done{0};
    auto worker = [&](int t) {
      Store* store = replicas[t % 2];
      const std::string agent = absl::StrCat("a", t / 2);  // two threads per agent
      ClaimRequest req = Req(agent, {0, 1, 2, 3});
      for (int k = 1; k < batch; ++k) req.more_lease_secrets.push_back(absl::StrCat("more", k));
      for (int idle = 0; done.load() < kCollections * kJobsEach && idle < 20'000;) {
        auto got = store->ClaimJobs(req, ChooseClaim);
        if (!got.ok() && !absl::IsAborted(got.status())) return ledger.Note(got.status());
        if (!got.ok() || got->empty()) {
          idle += got.ok() ? 1 : 0;  // ABORTED (a lost race): just claim again
          std::this_thread::yield();
          continue;
        }
        if (got->size() > static_cast<size_t>(batch)) ledger.Note(absl::InternalError("too many"));
        const int device_of_agent = (t / 2) * 100;
        for (const v1::JobAssignment& a : *got) {
          ledger.Take(a.job_id(), {device_of_agent, a.device_id()});
        }
        std::this_thread::yield();
        for (const v1::JobAssignment& a : *got) {
          ledger.Release({device_of_agent, a.device_id()});  // live until the result
          ledger.Note(store
                          ->RecordResult(Result(a, absl::StrCat(run, "u", a.job_id()),
                                                v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000, 12.5, agent))
                          .status());
          ++done;
        }
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kAgents * 2; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    {
      absl::MutexLock lock(&ledger.mu);
      EXPECT_TRUE(ledger.violations.empty()) << ledger.violations.front();
      EXPECT_EQ(ledger.claimed.size(), static_cast<size_t>(kCollections * kJobsEach));
    }
    size_t rounds = 0;
    for (int team = 0; team < 3; ++team) rounds += RoundCount(absl::StrCat(run, "team", team));
    EXPECT_EQ(rounds, static_cast<size_t>(kCollections * kJobsEach));
    for (int i = 0; i < kCollections; ++i) {
      EXPECT_EQ(StateOf(absl::StrCat(run, "c", i)), v1::COLLECTION_STATE_SUCCEEDED);
    }
  }
}

// Replicas opening together serialize their migrations (advisory lock; BEGIN IMMEDIATE).
TEST_P(StoreConformanceTest, ReplicasOpenTogether) {
  UseSqliteFile();
  std::vector<absl::StatusOr<std::unique_ptr<Store>>> opened;
  for (int i = 0; i < 3; ++i) opened.emplace_back(absl::UnknownError("unset"));
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back([&, i] { opened[i] = OpenStore(); });
  for (auto& t : threads) t.join();
  for (const auto& s : opened) ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE((*opened[0])->InsertToken("h", "team", "x", 1).ok());
  EXPECT_TRUE(store_->LookupToken("h").ok());
}

// ---- Cross-replica wake-ups ----

// A LeaseJob long-poll on replica B wakes within moments when replica A
// queues work (PostgreSQL LISTEN/NOTIFY), not after B's own 30 s wait.
TEST_P(StoreConformanceTest, SubmitOnOneReplicaWakesALongPollOnAnother) {
  if (GetParam() == Backend::kSqlite) GTEST_SKIP() << "one process owns a SQLite database";
  ASSERT_OK_AND_ASSIGN(second, OpenStore());
  RealClock clock;
  prometheus::Registry registry;
  ServerMetrics metrics(registry);
  Scheduler replica_a(*store_, clock, metrics, SchedulerOptions());
  Scheduler replica_b(*second, clock, metrics, SchedulerOptions());
  v1::RegisterAgentRequest info = AgentInfo("h1", "boot", 1);
  ASSERT_OK_AND_ASSIGN(registered, replica_b.RegisterAgent(AgentIdentity::ForHost("h1"), info));
  // Give B's listener time to LISTEN (it connects on its own thread).
  clock.SleepFor(std::chrono::milliseconds(300));
  v1::LeaseJobRequest req;
  req.set_agent_id(registered.agent_id());
  req.set_wait_ms(30'000);
  auto* device = req.add_free_devices();
  device->set_device_id(0);
  device->set_soc("Ascend910B2");
  std::atomic<bool> stop{false};
  auto waiter = std::async(std::launch::async, [&] {
    return replica_b.LeaseJob(AgentIdentity::ForHost("h1"), req, [&] { return stop.load(); });
  });
  clock.SleepFor(std::chrono::milliseconds(300));  // B is waiting now
  const auto submitted = clock.MonotonicNow();
  Insert(MakeCollection("c1", "team", 1));  // on replica A's store
  const bool woken = waiter.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  const absl::Duration took = absl::FromChrono(clock.MonotonicNow() - submitted);
  stop = true;  // ends B's wait at once if it was not woken
  ASSERT_TRUE(woken) << "replica B was not woken";
  auto got = waiter.get();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->collection_id(), "c1");
  EXPECT_LT(took, absl::Seconds(2)) << took;
}

}  // namespace
}  // namespace npuperf::server

namespace npuperf::server {
namespace {

// Rounds of the server's own collections (a label key starting "npuperf.": confirmation reruns)
// stay out of listings unless asked for: by their collection, or include_server_rounds.
TEST_P(StoreConformanceTest, ServerRoundsAreListedOnlyWhenAskedFor) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}, 2000));
  ASSERT_TRUE(a);
  const int64_t mine = Finish(*a, "u1", 3000, 10.0);
  NewCollection rerun = MakeCollection("c2", "alpha", 1);
  (*rerun.spec.mutable_labels())["npuperf.confirmation"] = "7";
  Insert(rerun);
  auto b = Claim(Req("a1", {0}, 4000));
  ASSERT_TRUE(b);
  const int64_t theirs = Finish(*b, "u2", 5000, 11.0);
  auto f = ForTeam<RoundFilter>("alpha");
  f.metric = "duration";
  ASSERT_OK_AND_ASSIGN(plain, store_->ListRounds(f));
  ASSERT_EQ(plain.rounds.size(), 1u);
  EXPECT_EQ(plain.rounds[0].id(), mine);
  EXPECT_EQ(plain.series.size(), 1u);
  f.newest_first = true;
  ASSERT_OK_AND_ASSIGN(newest, store_->ListRounds(f));
  ASSERT_EQ(newest.rounds.size(), 1u);
  EXPECT_EQ(newest.rounds[0].id(), mine);
  f.newest_first = false;
  f.include_server_rounds = true;
  ASSERT_OK_AND_ASSIGN(all, store_->ListRounds(f));
  EXPECT_EQ(all.rounds.size(), 2u);
  f = ForTeam<RoundFilter>("alpha");
  f.collection_id = "c2";
  ASSERT_OK_AND_ASSIGN(by_collection, store_->ListRounds(f));
  ASSERT_EQ(by_collection.rounds.size(), 1u);
  EXPECT_EQ(by_collection.rounds[0].id(), theirs);
}

}  // namespace
}  // namespace npuperf::server
