// Failed logins per peer (server/ui/login_throttle.h), on the FakeClock.
#include "server/ui/login_throttle.h"

#include "gtest/gtest.h"
#include "tests/fakes/fake_clock.h"

namespace npuperf::server::ui {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(LoginThrottleTest, FifthFailureInTheWindowBlocksThePeerOnly) {
  testing::FakeClock clock;
  LoginThrottle t(clock);
  for (int i = 0; i < LoginThrottle::kMaxFailures; ++i) {
    EXPECT_TRUE(t.Allowed("p"));
    t.RecordFailure("p");
  }
  EXPECT_FALSE(t.Allowed("p"));
  EXPECT_TRUE(t.Allowed("q"));
}

TEST(LoginThrottleTest, FailuresAgeOutOfTheWindowOneByOne) {
  testing::FakeClock clock;
  LoginThrottle t(clock);
  t.RecordFailure("p");
  clock.Advance(minutes(5));
  for (int i = 1; i < LoginThrottle::kMaxFailures; ++i) t.RecordFailure("p");
  EXPECT_FALSE(t.Allowed("p"));
  clock.Advance(minutes(10) - seconds(1));
  EXPECT_FALSE(t.Allowed("p"));
  clock.Advance(seconds(1));  // the first failure is 15 min old
  EXPECT_TRUE(t.Allowed("p"));
  t.RecordFailure("p");
  EXPECT_FALSE(t.Allowed("p"));
}

TEST(LoginThrottleTest, SuccessForgetsThePeer) {
  testing::FakeClock clock;
  LoginThrottle t(clock);
  for (int i = 0; i < LoginThrottle::kMaxFailures - 1; ++i) t.RecordFailure("p");
  t.RecordSuccess("p");
  EXPECT_EQ(t.TrackedPeersForTest(), 0u);
  t.RecordFailure("p");
  EXPECT_TRUE(t.Allowed("p"));
}

TEST(LoginThrottleTest, MemoryIsBoundedByThePeerCap) {
  testing::FakeClock clock;
  LoginThrottle t(clock);
  for (size_t i = 0; i < LoginThrottle::kMaxPeers; ++i) t.RecordFailure("p" + std::to_string(i));
  EXPECT_EQ(t.TrackedPeersForTest(), LoginThrottle::kMaxPeers);
  clock.Advance(seconds(1));
  for (int i = 0; i < LoginThrottle::kMaxFailures; ++i) t.RecordFailure("new");
  EXPECT_EQ(t.TrackedPeersForTest(), LoginThrottle::kMaxPeers) << "the stalest peer made room";
  EXPECT_FALSE(t.Allowed("new"));
  // The first peers' failures age out; "new"'s, a second younger, do not.
  clock.Advance(LoginThrottle::kWindow - seconds(1));
  t.RecordFailure("newer");
  EXPECT_EQ(t.TrackedPeersForTest(), 2u) << "aged-out peers went first";
  EXPECT_FALSE(t.Allowed("new"));
}

}  // namespace
}  // namespace npuperf::server::ui
