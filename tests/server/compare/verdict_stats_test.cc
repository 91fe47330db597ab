#include "server/compare/verdict_stats.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

TEST(MannWhitneyTest, FullySeparatedSamplesReachTheSmallestExactP) {
  const MannWhitney mw = MannWhitneyU({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_TRUE(mw.exact);
  EXPECT_DOUBLE_EQ(mw.u, 25);
  EXPECT_NEAR(mw.p_value, 2.0 / 252, 1e-12);
  EXPECT_NEAR(MinAchievablePValue(5, 5), 2.0 / 252, 1e-12);
  // The direction does not change a two-sided p.
  EXPECT_NEAR(MannWhitneyU({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}).p_value, 2.0 / 252, 1e-12);
}

TEST(MannWhitneyTest, KnownExactValue) {
  // Baseline {1,3,5}, candidate {2,4,6,7}: U = 1+2+3+3 = 9 of 12.
  // P(U >= 9) = P(U <= 3) = 7/35 (subsets of 3 ranks out of 7 with small sums).
  const MannWhitney mw = MannWhitneyU({1, 3, 5}, {2, 4, 6, 7});
  EXPECT_DOUBLE_EQ(mw.u, 9);
  EXPECT_NEAR(ExactUCdf(4, 3, 3), 7.0 / 35, 1e-12);
  EXPECT_NEAR(mw.p_value, 2 * 7.0 / 35, 1e-12);
}

TEST(MannWhitneyTest, InterleavedSamplesAreNotSignificant) {
  const MannWhitney mw = MannWhitneyU({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10});
  EXPECT_GT(mw.p_value, 0.5);
}

TEST(MannWhitneyTest, TiesUseTheCorrectedNormalApproximation) {
  const MannWhitney mw = MannWhitneyU({1, 1, 2, 2, 3}, {2, 3, 3, 4, 4});
  EXPECT_FALSE(mw.exact);
  EXPECT_GT(mw.p_value, 0.01);
  EXPECT_LT(mw.p_value, 0.2);
  // All values equal: no evidence of any shift.
  EXPECT_DOUBLE_EQ(MannWhitneyU({5, 5, 5}, {5, 5, 5}).p_value, 1);
}

TEST(MannWhitneyTest, ExactAndNormalAgreeForModerateSamples) {
  // 25 + 25 without ties: exact; the normal tail of the same U is close.
  std::vector<double> a, b;
  for (int i = 0; i < 25; ++i) {
    a.push_back(100 + i * 1.0);
    b.push_back(108.5 + i * 1.0);
  }
  const MannWhitney mw = MannWhitneyU(a, b);
  ASSERT_TRUE(mw.exact);
  const double var = 25.0 * 25 * 51 / 12;
  const double z = (std::abs(mw.u - 312.5) - 0.5) / std::sqrt(var);
  EXPECT_NEAR(mw.p_value, std::erfc(z / std::sqrt(2.0)), 0.003);
}

TEST(MannWhitneyTest, SmallSamplesCannotReachOnePercent) {
  EXPECT_NEAR(MinAchievablePValue(3, 3), 0.1, 1e-12);
  EXPECT_GT(MinAchievablePValue(4, 4), 0.01);
  EXPECT_LT(MinAchievablePValue(4, 6), 0.01);
  EXPECT_DOUBLE_EQ(MinAchievablePValue(0, 5), 1);
}

TEST(HodgesLehmannTest, RecoversAScaleFactorWithAnIntervalAroundIt) {
  const std::vector<double> base = {100, 101, 102, 103, 104, 105, 106};
  std::vector<double> cand;
  for (double v : base) cand.push_back(v * 0.9);
  const RatioEstimate r = HodgesLehmannRatio(base, cand, 0.01);
  EXPECT_NEAR(r.ratio, 0.9, 0.01);
  ASSERT_TRUE(r.low.has_value());
  EXPECT_LT(*r.low, 0.9);
  EXPECT_GT(*r.high, 0.9);
  EXPECT_LT(*r.high, 1.0);
}

TEST(HodgesLehmannTest, NoIntervalWhenTheSamplesAreTooSmall) {
  const RatioEstimate r = HodgesLehmannRatio({1, 2}, {2, 3}, 0.01);
  EXPECT_GT(r.ratio, 1);
  EXPECT_FALSE(r.low.has_value());
}

TEST(GeometricMeanTest, IgnoresNonPositiveValues) {
  EXPECT_NEAR(GeometricMean({0.5, 2.0}), 1.0, 1e-12);
  EXPECT_NEAR(GeometricMean({4, 1, 0, -3}), 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(GeometricMean({}), 0);
}

}  // namespace
}  // namespace npuperf::server
