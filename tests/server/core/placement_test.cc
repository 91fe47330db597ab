// History-aware placement (server/core/placement.h): the duration key, the
// estimate from recent runs, the longest-first order, and the scheduler
// queueing a collection in that order from what its jobs took last time.
#include "server/core/placement.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

v1::CollectionSpec Spec() {
  v1::CollectionSpec spec;
  spec.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  auto* op = spec.add_operators();
  op->set_name("rmsnorm");
  op->set_bundle_sha256(std::string(64, 'a'));
  op->set_op_name("kernel");
  op->add_case_ids("small");
  op->add_case_ids("big");
  return spec;
}

std::string KeyOf(const v1::CollectionSpec& spec, const std::string& case_id,
                  const std::string& team = "team") {
  return DurationKey(team, spec, spec.operators(0), {"rmsnorm", case_id, "kernel"});
}

TEST(PlacementTest, TheDurationKeyKeepsItsHistoryAcrossANewBundleOfTheSameOperator) {
  v1::CollectionSpec next = Spec();
  next.mutable_operators(0)->set_bundle_sha256(std::string(64, 'b'));
  EXPECT_EQ(KeyOf(Spec(), "big"), KeyOf(next, "big"));
  EXPECT_EQ(KeyOf(Spec(), "big").size(), 32u);
}

// Stored history is found by these keys: computing them once per operator
// (issue 36) must give the bytes the per-job computation gave (the values
// below are the previous implementation's), for DurationKey and
// SetDurationKeys alike.
TEST(PlacementTest, TheDurationKeysAreTheOnesStoredHistoryWasKeyedBy) {
  v1::CollectionSpec spec = Spec();
  spec.mutable_operators(0)->set_launch("#0");
  (*spec.mutable_operators(0)->mutable_launch_map())["big"] = "#2";
  std::vector<NewJob> jobs = {{"rmsnorm", "small", "kernel"}, {"rmsnorm", "big", "kernel"}};
  SetDurationKeys("team", spec, &jobs);
  EXPECT_EQ(jobs[0].duration_key, "1345ae7fabe37003ebe5120c2ead7278");
  EXPECT_EQ(jobs[1].duration_key, "a8a842b8744af02c1044d47dadbb09a0");
  EXPECT_EQ(DurationKey("team", spec, spec.operators(0), jobs[0]), jobs[0].duration_key);
  EXPECT_EQ(DurationKey("team", spec, spec.operators(0), jobs[1]), jobs[1].duration_key);
}

TEST(PlacementTest, TheDurationKeyChangesWithTheCaseModeRepeatsSocLaunchAndTeam) {
  const std::string base = KeyOf(Spec(), "big");
  EXPECT_NE(KeyOf(Spec(), "small"), base);
  EXPECT_NE(KeyOf(Spec(), "big", "other-team"), base);
  v1::CollectionSpec quick = Spec();
  quick.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  EXPECT_NE(KeyOf(quick, "big"), base);
  v1::CollectionSpec repeats = Spec();
  repeats.mutable_params()->set_repeats(9);
  EXPECT_NE(KeyOf(repeats, "big"), base);
  v1::CollectionSpec soc = Spec();
  soc.mutable_constraints()->add_socs("Ascend950PR_9589");
  EXPECT_NE(KeyOf(soc, "big"), base);
  v1::CollectionSpec launch = Spec();
  (*launch.mutable_operators(0)->mutable_launch_map())["big"] = "all";
  EXPECT_NE(KeyOf(launch, "big"), base);
  EXPECT_EQ(KeyOf(launch, "small"), KeyOf(Spec(), "small"));  // only its own case's selector
}

TEST(PlacementTest, TheEstimateIsTheMedianOfTheRecentRunsSoOneOutlierDoesNotCount) {
  EXPECT_EQ(ExpectedRunMs({}), std::nullopt);
  EXPECT_EQ(ExpectedRunMs({700}), 700);
  EXPECT_EQ(ExpectedRunMs({1000, 90'000, 1100}), 1100);
  EXPECT_EQ(ExpectedRunMs({1000, 2000, 3000, 90'000}), 2500);
}

TEST(PlacementTest, JobsWithoutHistoryComeFirstInManifestOrderThenTheLongestExpected) {
  std::vector<NewJob> jobs;
  for (const char* c : {"a", "b", "c", "d", "e", "f"}) jobs.push_back({"op", c, "k", c});
  const std::map<std::string, int64_t> expected = {{"a", 10}, {"c", 60}, {"e", 10}, {"f", 30}};
  std::string order;
  for (const NewJob& j : LongestFirst(jobs, expected)) order += j.case_id;
  EXPECT_EQ(order, "bdcfae");  // b, d unknown; then 60, 30, and the two 10s as given
}

class PlacementSchedulerTest : public SchedulerFixture {};

// The first collection runs in manifest order; the second, with the same
// cases, is queued longest first from the device time each case took.
TEST_F(PlacementSchedulerTest, ASecondCollectionOfTheSameCasesIsQueuedLongestFirst) {
  const std::string agent = Register("h1");
  const std::string first = Submit(Request(3));
  const std::map<std::string, int> seconds = {{"c0", 5}, {"c1", 40}, {"c2", 20}};
  for (int i = 0; i < 3; ++i) {
    auto a = Lease(agent, 0);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->case_id(), "c" + std::to_string(i)) << "manifest order without history";
    clock_.Advance(std::chrono::seconds(seconds.at(a->case_id())));
    ASSERT_TRUE(Succeed(*a, "u" + std::to_string(i), 10.0).ok());
  }
  auto done = store_->GetCollection("team", first);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->counts().succeeded(), 3);
  v1::SubmitCollectionRequest again = Request(4);  // c3 is new
  Submit(again);
  std::string order;
  for (int i = 0; i < 4; ++i) {
    auto a = Lease(agent, i % 2);
    ASSERT_TRUE(a);
    order += a->case_id() + " ";
    ASSERT_TRUE(Succeed(*a, "v" + std::to_string(i), 10.0).ok());
  }
  EXPECT_EQ(order, "c3 c1 c2 c0 ");
}

}  // namespace
}  // namespace npuperf::server
