// server/compare/change_points.h: E-Divisive means on synthetic series with
// known steps, and its documented rate on flat noise.
#include "server/compare/change_points.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

// Lognormal-ish kernel times around `level` with relative noise `cv`.
std::vector<double> Noise(int n, double level, double cv, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, cv);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(level * std::exp(z(rng)));
  return v;
}

std::vector<double> Concat(std::vector<std::vector<double>> parts) {
  std::vector<double> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<int> Indices(const std::vector<ChangePoint>& cps) {
  std::vector<int> out;
  for (const ChangePoint& c : cps) out.push_back(c.index);
  return out;
}

TEST(EnergyStatisticsTest, PeaksAtTheStepOfAStepSeries) {
  std::vector<double> x = {1, 1, 1, 1, 1, 5, 5, 5, 5, 5};
  std::vector<double> q = EnergyStatistics(x, 2);
  ASSERT_EQ(q.size(), 7u);  // tau = 2..8
  size_t best = 0;
  for (size_t i = 1; i < q.size(); ++i) {
    if (q[i] > q[best]) best = i;
  }
  EXPECT_EQ(best + 2, 5u);
  // Energy distance of {1 x5} vs {5 x5}: 2*4 - 0 - 0 = 8, scaled by 5*5/10.
  EXPECT_DOUBLE_EQ(q[best], 20.0);
}

TEST(EnergyStatisticsTest, IsZeroEverywhereOnAConstantSeries) {
  for (double q : EnergyStatistics(std::vector<double>(12, 3.0), 3)) EXPECT_EQ(q, 0);
}

TEST(ChangePointsTest, FindsOneStepAtTheRoundWhereItHappened) {
  auto x = Concat({Noise(30, 100, 0.01, 1), Noise(30, 110, 0.01, 2)});
  auto cps = FindChangePoints(x);
  ASSERT_EQ(Indices(cps), (std::vector<int>{30}));
  EXPECT_NEAR(cps[0].before_median, 100, 1.5);
  EXPECT_NEAR(cps[0].after_median, 110, 1.5);
  EXPECT_NEAR(cps[0].change_pct, 10, 2);
  EXPECT_LE(cps[0].p_value, 0.01);
}

TEST(ChangePointsTest, FindsThreeStepsUpAndDown) {
  auto x = Concat({Noise(25, 100, 0.01, 3), Noise(25, 120, 0.01, 4), Noise(25, 105, 0.01, 5),
                   Noise(25, 90, 0.01, 6)});
  EXPECT_EQ(Indices(FindChangePoints(x)), (std::vector<int>{25, 50, 75}));
}

TEST(ChangePointsTest, ASignificantStepBelowTheMagnitudeFloorIsNotReported) {
  // 1 % step with 0.1 % noise: certain, but under the 2 % floor.
  auto x = Concat({Noise(30, 100, 0.001, 7), Noise(30, 101, 0.001, 8)});
  EXPECT_TRUE(FindChangePoints(x).empty());
  ChangePointOptions loose;
  loose.min_change_pct = 0.5;
  EXPECT_EQ(Indices(FindChangePoints(x, loose)), (std::vector<int>{30}));
}

TEST(ChangePointsTest, AOneRoundOutlierIsNotAChange) {
  auto x = Noise(40, 100, 0.01, 9);
  x[20] = 300;
  EXPECT_TRUE(FindChangePoints(x).empty());
}

TEST(ChangePointsTest, TooShortASeriesHasNone) {
  EXPECT_TRUE(FindChangePoints({}).empty());
  EXPECT_TRUE(FindChangePoints({1, 2, 3, 10, 11}).empty());  // < 2 * min_segment
}

TEST(ChangePointsTest, TheSameSeriesAlwaysGivesTheSameAnswer) {
  auto x = Concat({Noise(20, 100, 0.03, 10), Noise(20, 106, 0.03, 11)});
  auto a = FindChangePoints(x);
  auto b = FindChangePoints(x);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
}

TEST(ChangePointsTest, OnlyTheNewestMaxPointsAreExaminedAndIndicesStayInTheSeries) {
  auto x = Concat({Noise(50, 100, 0.01, 12), Noise(30, 100, 0.01, 13), Noise(30, 115, 0.01, 14)});
  ChangePointOptions o;
  o.max_points = 60;
  EXPECT_EQ(Indices(FindChangePoints(x, o)), (std::vector<int>{80}));
}

// The documented rate: on flat noise (no floor, so only the test decides)
// at most ~alpha of series show a change; with the 2 % floor and 1 % noise,
// almost none. 200 series of 40 points.
TEST(ChangePointsTest, FlatNoiseRarelyShowsAChange) {
  ChangePointOptions no_floor;
  no_floor.min_change_pct = 0;
  int flagged = 0, flagged_with_floor = 0;
  for (uint64_t s = 0; s < 200; ++s) {
    auto x = Noise(40, 100, 0.01, 1000 + s);
    flagged += !FindChangePoints(x, no_floor).empty();
    flagged_with_floor += !FindChangePoints(x).empty();
  }
  EXPECT_LE(flagged, 6) << "of 200";  // alpha 0.01: expect ~2
  EXPECT_LE(flagged_with_floor, 1) << "of 200";
}

}  // namespace
}  // namespace npuperf::server
