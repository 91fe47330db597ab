// Store conformance for the limits of issue 13 (the fixture: store_conformance.h): constraint
// errors map to the right codes on both backends (a non-finite figure is INVALID_ARGUMENT, never
// stored, never ALREADY_EXISTS), jobs are read a page at a time, and the queued-jobs quota of a
// team is checked with the insert.
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "tests/server/store/store_conformance.h"

namespace npuperf::server {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST_P(StoreConformanceTest, ANonFiniteDurationIsInvalidArgumentAndNotStored) {
  Insert(MakeCollection("c1", "alpha", 3));
  int device = 0;
  for (double bad : {kNaN, kInf, -kInf}) {
    auto a = Claim(Req("a1", {device++}));
    ASSERT_TRUE(a);
    auto got = store_->RecordResult(Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED, 3000, bad));
    EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << bad << ": " << got.status();
    EXPECT_EQ(RoundCount("alpha"), 0u);
    EXPECT_EQ(JobOf("c1", a->job_id()).state(), v1::JOB_STATE_LEASED);  // nothing changed
  }
}

TEST_P(StoreConformanceTest, ANonFiniteMetricIsInvalidArgumentAndNotStored) {
  Insert(MakeCollection("c1", "alpha", 1));
  auto a = Claim(Req("a1", {0}));
  ASSERT_TRUE(a);
  AttemptResult r = Result(*a, "u1", v1::ATTEMPT_OUTCOME_SUCCEEDED);
  r.metrics.emplace_back("PipeUtilization.aiv_vec_ratio", kInf);
  auto got = store_->RecordResult(r);
  EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << got.status();
  EXPECT_EQ(RoundCount("alpha"), 0u);
  // The honest report of the same attempt still goes through.
  EXPECT_GT(Finish(*a, "u2", 3000, 12.5), 0);
}

TEST_P(StoreConformanceTest, ADuplicateKeyIsStillAlreadyExists) {
  Insert(MakeCollection("c1", "alpha", 1));
  NewCollection again = MakeCollection("c1", "alpha", 1);
  again.idempotency_key = "";
  EXPECT_TRUE(absl::IsAlreadyExists(store_->InsertCollection(again).status()));
}

TEST_P(StoreConformanceTest, GetCollectionPageReturnsTheJobsAfterTheCursorWithAllCounts) {
  Insert(MakeCollection("c1", "alpha", 5));
  ASSERT_OK_AND_ASSIGN(first, store_->GetCollectionPage("alpha", "c1", 0, 2));
  ASSERT_EQ(first.jobs_size(), 2);
  EXPECT_EQ(first.counts().total(), 5);
  EXPECT_EQ(first.counts().queued(), 5);
  ASSERT_OK_AND_ASSIGN(rest, store_->GetCollectionPage("alpha", "c1", first.jobs(1).id(), 10));
  ASSERT_EQ(rest.jobs_size(), 3);
  EXPECT_GT(rest.jobs(0).id(), first.jobs(1).id());
  ASSERT_OK_AND_ASSIGN(none, store_->GetCollectionPage("alpha", "c1", 0, 0));
  EXPECT_EQ(none.jobs_size(), 0);
  EXPECT_EQ(none.counts().total(), 5);
  EXPECT_TRUE(absl::IsNotFound(store_->GetCollectionPage("beta", "c1", 0, 2).status()));
}

TEST_P(StoreConformanceTest, ALaterPageWithoutTheSpecIsTheSamePageWithAnEmptySpec) {
  NewCollection c = MakeCollection("c1", "alpha", 5);
  (*c.spec.mutable_labels())["branch"] = "main";
  Insert(c);
  ASSERT_OK_AND_ASSIGN(with, store_->GetCollectionPage("alpha", "c1", 0, 2));
  ASSERT_OK_AND_ASSIGN(without, store_->GetCollectionPageWithoutSpec("alpha", "c1", 0, 2));
  EXPECT_GT(with.spec().ByteSizeLong(), 0u);
  EXPECT_EQ(without.spec().ByteSizeLong(), 0u);
  with.clear_spec();
  without.clear_spec();  // present but empty: the rest must be the same
  EXPECT_EQ(without.SerializeAsString(), with.SerializeAsString());
  ASSERT_OK_AND_ASSIGN(rest,
                       store_->GetCollectionPageWithoutSpec("alpha", "c1", with.jobs(1).id(), 10));
  EXPECT_EQ(rest.jobs_size(), 3);
  EXPECT_EQ(rest.counts().total(), 5);
  EXPECT_TRUE(absl::IsNotFound(store_->GetCollectionPageWithoutSpec("beta", "c1", 0, 2).status()));
}

TEST_P(StoreConformanceTest, InsertCollectionAnswersWithAtMostTheJobsAsked) {
  NewCollection c = MakeCollection("c1", "alpha", 5);
  c.idempotency_key = "k";
  c.answer_jobs = 2;
  ASSERT_OK_AND_ASSIGN(inserted, store_->InsertCollection(c));
  EXPECT_TRUE(inserted.second);
  ASSERT_EQ(inserted.first.jobs_size(), 2);
  EXPECT_EQ(inserted.first.counts().total(), 5);
  EXPECT_LT(inserted.first.jobs(0).id(), inserted.first.jobs(1).id());
  ASSERT_OK_AND_ASSIGN(again, store_->InsertCollection(c));  // the idempotency key's answer
  EXPECT_FALSE(again.second);
  EXPECT_EQ(again.first.jobs_size(), 2);
  c.answer_jobs = -1;
  ASSERT_OK_AND_ASSIGN(all, store_->InsertCollection(c));
  EXPECT_EQ(all.first.jobs_size(), 5);
}

TEST_P(StoreConformanceTest, TheQueuedJobsQuotaOfATeamIsCheckedWithTheInsert) {
  NewCollection c1 = MakeCollection("c1", "alpha", 3);
  c1.max_team_queued = 4;
  Insert(c1);
  NewCollection c2 = MakeCollection("c2", "alpha", 2);
  c2.max_team_queued = 4;
  EXPECT_TRUE(absl::IsResourceExhausted(store_->InsertCollection(c2).status()));
  EXPECT_TRUE(absl::IsNotFound(store_->GetCollection("", "c2").status()));
  NewCollection other = MakeCollection("c3", "beta", 4);
  other.max_team_queued = 4;
  other.now_ms = 7000;
  Insert(other);
  ASSERT_OK_AND_ASSIGN(queued, store_->CountQueuedByCollection(10));
  ASSERT_EQ(queued.size(), 2u);
  EXPECT_EQ(queued[0].collection_id, "c1");
  EXPECT_EQ(queued[0].queued, 3);
  EXPECT_EQ(queued[1].queued, 4);
  // The oldest queued job's submission time (the gauge of the queue's age).
  EXPECT_EQ(queued[0].oldest_queued_ms, 1000);
  EXPECT_EQ(queued[1].oldest_queued_ms, 7000);
}

}  // namespace
}  // namespace npuperf::server
