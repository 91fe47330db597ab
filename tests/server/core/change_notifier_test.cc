#include "server/core/change_notifier.h"

#include <atomic>
#include <future>

#include "gtest/gtest.h"
#include "server/core/constants.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class ChangeNotifierTest : public ::testing::Test {
 protected:
  // WaitNewer on its own thread, as LeaseJob and WatchCollection call it.
  std::future<uint64_t> WaitInBackground(uint64_t seen, absl::Duration timeout) {
    return std::async(std::launch::async, [this, seen, timeout] {
      return notifier_.WaitNewer(seen, timeout, [this] { return stop_.load(); });
    });
  }

  static bool Ready(std::future<uint64_t>& f) {
    return f.wait_for(seconds(0)) == std::future_status::ready;
  }

  testing::FakeClock clock_;
  ChangeNotifier notifier_{clock_};
  std::atomic<bool> stop_{false};
};

TEST_F(ChangeNotifierTest, NotifyBumpsTheVersion) {
  EXPECT_EQ(notifier_.version(), 0u);
  notifier_.Notify();
  notifier_.WakeAll();
  EXPECT_EQ(notifier_.version(), 2u);
}

TEST_F(ChangeNotifierTest, ANewerVersionReturnsWithoutWaiting) {
  notifier_.Notify();
  EXPECT_EQ(notifier_.WaitNewer(0, absl::Seconds(30), [] { return false; }), 1u);
  EXPECT_EQ(clock_.waiters(), 0u);
}

TEST_F(ChangeNotifierTest, ANotifyWakesAWaiterBeforeItsTimeout) {
  auto waiting = WaitInBackground(0, absl::Seconds(30));
  clock_.AwaitWaiters(1);
  notifier_.Notify();
  EXPECT_EQ(waiting.get(), 1u);  // the clock never moved
}

TEST_F(ChangeNotifierTest, WakeAllWakesEveryWaiter) {
  auto first = WaitInBackground(0, absl::Seconds(30));
  auto second = WaitInBackground(0, absl::Seconds(30));
  clock_.AwaitWaiters(2);
  notifier_.WakeAll();
  EXPECT_EQ(first.get(), 1u);
  EXPECT_EQ(second.get(), 1u);
}

// The timeout runs on the injected clock, through the stop checks.
TEST_F(ChangeNotifierTest, TimesOutWhenTheClockPassesTheTimeout) {
  auto waiting = WaitInBackground(0, absl::Seconds(1));
  clock_.AwaitWaiters(1);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(kStopCheckPeriod);
    clock_.AwaitWaiters(1);
    EXPECT_FALSE(Ready(waiting)) << "after " << (i + 1) * kStopCheckPeriod.count() << " ms";
  }
  clock_.Advance(kStopCheckPeriod);
  EXPECT_EQ(waiting.get(), 0u);
}

TEST_F(ChangeNotifierTest, ATimeoutShorterThanTheStopCheckIsKept) {
  auto waiting = WaitInBackground(0, absl::Milliseconds(50));
  clock_.AwaitWaiters(1);
  clock_.Advance(milliseconds(50));
  EXPECT_EQ(waiting.get(), 0u);
}

// stop() changes without a notification; the waiter notices it at its next
// stop check, kStopCheckPeriod after it started waiting.
TEST_F(ChangeNotifierTest, StopIsNoticedAtTheNextStopCheck) {
  auto waiting = WaitInBackground(0, absl::Seconds(30));
  clock_.AwaitWaiters(1);
  stop_ = true;
  clock_.Advance(kStopCheckPeriod - milliseconds(1));
  EXPECT_FALSE(Ready(waiting));
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(waiting.get(), 0u);
}

TEST_F(ChangeNotifierTest, AStoppedWaitReturnsAtOnce) {
  stop_ = true;
  EXPECT_EQ(notifier_.WaitNewer(0, absl::Seconds(30), [this] { return stop_.load(); }), 0u);
  EXPECT_EQ(clock_.waiters(), 0u);
}

}  // namespace
}  // namespace npuperf::server
