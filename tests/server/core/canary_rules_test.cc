// The canary rules (core/canary_rules.h) on worked inputs: the reference (peers, else history),
// the threshold (floor, or k x the measured spread), the verdict, and the streaks that
// quarantine and release.
#include "server/core/canary_rules.h"

#include <cmath>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

TEST(CanaryRulesTest, ASlowDeviceIsJudgedAgainstTheMedianOfItsPeers) {
  const CanaryJudgement j = JudgeCanary(115, {100, 101, 99, 100, 300}, {}, std::nullopt, "A2");
  EXPECT_EQ(j.verdict, CanaryVerdict::kSlow);
  EXPECT_EQ(j.reference, "peers");
  EXPECT_DOUBLE_EQ(j.reference_us, 100) << "the median, not the mean the outlier would move";
  EXPECT_NEAR(j.excess_pct, 15, 1e-9);
  EXPECT_DOUBLE_EQ(j.threshold_pct, 5) << "floor: 3 x 1 % default spread is below 5 %";
  EXPECT_TRUE(absl::StrContains(j.reason, "15.0 % slower than the median of 5 other A2 devices"))
      << j.reason;
}

TEST(CanaryRulesTest, AMeasuredNoisySpreadRaisesTheThreshold) {
  const CanaryJudgement j = JudgeCanary(106, {100, 100, 100}, {}, 2.5, "A2");
  EXPECT_DOUBLE_EQ(j.threshold_pct, 7.5);
  EXPECT_EQ(j.verdict, CanaryVerdict::kPass) << "6 % is within 3 x 2.5 %";
  EXPECT_TRUE(absl::StrContains(j.reason, "calibrated"));
}

TEST(CanaryRulesTest, WithTooFewPeersTheDevicesOwnHistoryIsTheReference) {
  const CanaryJudgement j = JudgeCanary(120, {100, 100}, {100, 102, 98}, std::nullopt, "A5");
  EXPECT_EQ(j.reference, "history");
  EXPECT_EQ(j.verdict, CanaryVerdict::kSlow);
  const CanaryJudgement none = JudgeCanary(120, {100}, {}, std::nullopt, "A5");
  EXPECT_EQ(none.verdict, CanaryVerdict::kInconclusive);
  EXPECT_TRUE(absl::StrContains(none.reason, "need 3")) << none.reason;
}

TEST(CanaryRulesTest, NoTimeOrADownClockedRunIsInconclusive) {
  EXPECT_EQ(JudgeCanary(0, {1, 1, 1}, {}, std::nullopt, "A2").verdict,
            CanaryVerdict::kInconclusive);
  EXPECT_EQ(JudgeCanary(NAN, {1, 1, 1}, {}, std::nullopt, "A2").verdict,
            CanaryVerdict::kInconclusive);
  EXPECT_EQ(
      JudgeCanary(225, {100, 100, 100}, {}, std::nullopt, "A2", /*clock_suspect=*/true).verdict,
      CanaryVerdict::kInconclusive);
}

TEST(CanaryRulesTest, TwoSlowInARowQuarantineAndThreePassesInARowRelease) {
  CanaryStreak s;
  EXPECT_EQ(NextCanaryAction(false, CanaryVerdict::kSlow, &s), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(false, CanaryVerdict::kInconclusive, &s), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(false, CanaryVerdict::kSlow, &s), CanaryAction::kQuarantine)
      << "an inconclusive canary does not break the streak";
  EXPECT_EQ(NextCanaryAction(true, CanaryVerdict::kPass, &s), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(true, CanaryVerdict::kPass, &s), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(true, CanaryVerdict::kSlow, &s), CanaryAction::kNone)
      << "slow every other run: the pass streak starts over";
  EXPECT_EQ(NextCanaryAction(true, CanaryVerdict::kPass, &s), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(true, CanaryVerdict::kPass, &s), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(true, CanaryVerdict::kPass, &s), CanaryAction::kRelease);
  CanaryStreak once;
  EXPECT_EQ(NextCanaryAction(false, CanaryVerdict::kSlow, &once), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(false, CanaryVerdict::kPass, &once), CanaryAction::kNone);
  EXPECT_EQ(NextCanaryAction(false, CanaryVerdict::kSlow, &once), CanaryAction::kNone)
      << "one unlucky run at a time never quarantines";
}

TEST(CanaryRulesTest, TheStoredVerdictsNewestFirstDecideAsTheStreakWould) {
  using V = CanaryVerdict;
  EXPECT_EQ(ActionFromHistory(false, {V::kSlow, V::kSlow}), CanaryAction::kQuarantine);
  EXPECT_EQ(ActionFromHistory(false, {V::kSlow, V::kInconclusive, V::kSlow}),
            CanaryAction::kQuarantine);
  EXPECT_EQ(ActionFromHistory(false, {V::kSlow, V::kPass, V::kSlow}), CanaryAction::kNone);
  EXPECT_EQ(ActionFromHistory(true, {V::kPass, V::kPass, V::kPass, V::kSlow, V::kSlow}),
            CanaryAction::kRelease);
  EXPECT_EQ(ActionFromHistory(true, {V::kPass, V::kPass, V::kSlow, V::kPass}), CanaryAction::kNone);
  EXPECT_EQ(ActionFromHistory(false, {}), CanaryAction::kNone);
}

TEST(CanaryRulesTest, AtMostAQuarterOfASocIsQuarantinedByCanariesAtOnce) {
  EXPECT_TRUE(CanaryQuarantineFits(0, 1)) << "at least one, even on a small SoC";
  EXPECT_TRUE(CanaryQuarantineFits(0, 4));
  EXPECT_FALSE(CanaryQuarantineFits(1, 4));
  EXPECT_TRUE(CanaryQuarantineFits(3, 16));
  EXPECT_FALSE(CanaryQuarantineFits(4, 16));
  EXPECT_FALSE(CanaryQuarantineFits(1, 0));
}

}  // namespace
}  // namespace npuperf::server
