#include "server/core/reaper.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "tests/server/core/scheduler_fixture.h"

namespace npuperf::server {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

using ReaperTest = SchedulerFixture;

double Gauge(prometheus::Family<prometheus::Gauge>& family, const std::string& state) {
  return family.Add({{"state", state}}).Value();
}

TEST_F(ReaperTest, FirstRoundRefreshesTheGaugesThenItWaitsOnTheClock) {
  ASSERT_TRUE(scheduler_.Submit("team", Request(2)).ok());
  Reaper reaper(scheduler_, clock_, seconds(1), seconds(5));
  clock_.AwaitWaiters(1);  // the reaper waits only after its round
  EXPECT_EQ(Gauge(metrics_.jobs, "queued"), 2);
}

// The reaper's round after the clock passes a lease's TTL takes the lease
// back: nothing waits in real time.
TEST_F(ReaperTest, TakesBackALeaseOnceTheClockPassesItsTtl) {
  auto submitted = scheduler_.Submit("team", Request(1));
  ASSERT_TRUE(submitted.ok());
  ASSERT_TRUE(Lease(Register("h1"), 0));
  Reaper reaper(scheduler_, clock_, seconds(1), seconds(5));
  clock_.AwaitWaiters(1);
  EXPECT_EQ(metrics_.lease_expirations.Value(), 0);
  clock_.Advance(seconds(31));
  // The round runs on the reaper's thread; its counter says when it is done.
  while (metrics_.lease_expirations.Value() < 1) std::this_thread::yield();
  reaper.Stop();
  EXPECT_EQ(JobState(submitted->first.id()), v1::JOB_STATE_QUEUED);
}

// The upkeep (main.cc: the confirmations' AdvancePending and the
// calibrations' Advance) runs every round, not only with the gauges; its
// error is logged and the rounds go on.
TEST_F(ReaperTest, RunsItsUpkeepEveryRound) {
  std::atomic<int> runs{0};
  Reaper reaper(scheduler_, clock_, seconds(1), seconds(5), [&runs] {
    ++runs;
    return absl::UnavailableError("database restarting");
  });
  clock_.AwaitWaiters(1);
  EXPECT_EQ(runs.load(), 1);
  clock_.Advance(seconds(1));  // one period, well before the gauges are due
  // The round runs on the reaper's thread; the count says when it is done.
  while (runs.load() < 2) std::this_thread::yield();
  reaper.Stop();
  EXPECT_EQ(runs.load(), 2);
}

TEST_F(ReaperTest, StopEndsTheWaitWithoutTheClockMoving) {
  Reaper reaper(scheduler_, clock_, hours(1), hours(1));
  clock_.AwaitWaiters(1);
  reaper.Stop();
  EXPECT_EQ(clock_.waiters(), 0u);
  reaper.Stop();  // idempotent
}

}  // namespace
}  // namespace npuperf::server
