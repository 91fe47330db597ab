#include "common/clock.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(RealClockTest, AwaitReturnsAtOnceWhenTheConditionHolds) {
  RealClock clock;
  absl::Mutex mu;
  bool ready = true;
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(
      clock.AwaitWithDeadline(mu, absl::Condition(&ready), clock.MonotonicNow() + seconds(60)));
}

TEST(RealClockTest, AwaitTimesOutAtThePassedDeadline) {
  RealClock clock;
  absl::Mutex mu;
  bool ready = false;
  absl::MutexLock lock(&mu);
  EXPECT_FALSE(
      clock.AwaitWithDeadline(mu, absl::Condition(&ready), clock.MonotonicNow() - seconds(1)));
}

TEST(FakeClockTest, MovesOnlyWhenAdvanced) {
  testing::FakeClock clock;
  const auto t0 = clock.MonotonicNow();
  const auto s0 = clock.SystemNow();
  clock.Advance(seconds(5));
  EXPECT_EQ(clock.MonotonicNow() - t0, seconds(5));
  EXPECT_EQ(clock.SystemNow() - s0, seconds(5));
}

TEST(FakeClockTest, AdvanceWakesAWaitWhoseDeadlineItReaches) {
  testing::FakeClock clock;
  absl::Mutex mu;
  bool ready = false;
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    EXPECT_FALSE(
        clock.AwaitWithDeadline(mu, absl::Condition(&ready), clock.MonotonicNow() + seconds(30)));
    returned = true;
  });
  clock.AwaitWaiters(1);
  clock.Advance(seconds(29));
  EXPECT_FALSE(returned.load());
  EXPECT_EQ(clock.waiters(), 1u);
  clock.Advance(seconds(1));
  waiter.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, ConditionChangedUnderTheMutexEndsTheWaitWithoutAdvancing) {
  testing::FakeClock clock;
  absl::Mutex mu;
  bool ready = false;
  std::thread waiter([&] {
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(
        clock.AwaitWithDeadline(mu, absl::Condition(&ready), clock.MonotonicNow() + seconds(30)));
  });
  clock.AwaitWaiters(1);
  {
    absl::MutexLock lock(&mu);
    ready = true;
  }
  waiter.join();
}

TEST(FakeClockTest, SleepForReturnsWhenAdvancedPastIt) {
  testing::FakeClock clock;
  std::thread sleeper([&] { clock.SleepFor(milliseconds(250)); });
  clock.AwaitWaiters(1);
  clock.Advance(milliseconds(250));
  sleeper.join();
  EXPECT_EQ(clock.waiters(), 0u);
}

TEST(FakeClockTest, AdvanceWakesOnlyTheWaitsItReaches) {
  testing::FakeClock clock;
  std::atomic<int> woken{0};
  std::vector<std::thread> threads;
  for (int i = 1; i <= 4; ++i) {
    threads.emplace_back([&, i] {
      clock.SleepFor(seconds(i));
      ++woken;
    });
  }
  clock.AwaitWaiters(4);
  clock.Advance(seconds(2));
  while (woken.load() != 2) std::this_thread::yield();
  EXPECT_EQ(clock.waiters(), 2u);
  clock.Advance(seconds(2));
  for (auto& t : threads) t.join();
  EXPECT_EQ(woken.load(), 4);
}

}  // namespace
}  // namespace npuperf
