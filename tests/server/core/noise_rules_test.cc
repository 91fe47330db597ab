// The measured-noise rules (core/noise_rules.h) on inputs whose answers are
// worked out by hand (or in two lines of Python: math.log, math.erfc).
#include "server/core/noise_rules.h"

#include <cmath>

#include "gtest/gtest.h"

namespace npuperf::server {
namespace {

TEST(NoiseRulesTest, DurationSpreadIsTheRmsOverPairsOfTheLogRatioInPercent) {
  // Pairs: 100 ln(102/100) = 1.9803, 100 ln(104/100) = 3.9221, 100 ln(104/102) = 1.9418.
  EXPECT_NEAR(*DurationSpread({100, 102, 104}), 2.773368, 1e-6);
  // Symmetric in order, and scale-free.
  EXPECT_NEAR(*DurationSpread({104, 100, 102}), 2.773368, 1e-6);
  EXPECT_NEAR(*DurationSpread({1, 1.02, 1.04}), 2.773368, 1e-6);
  EXPECT_DOUBLE_EQ(*DurationSpread({50, 50, 50, 50}), 0);
}

TEST(NoiseRulesTest, DurationSpreadNeedsThreePositiveRounds) {
  EXPECT_FALSE(DurationSpread({}).has_value());
  EXPECT_FALSE(DurationSpread({100, 101}).has_value());
  EXPECT_FALSE(DurationSpread({100, 0, 101}).has_value());
  EXPECT_FALSE(DurationSpread({100, -1, 101}).has_value());
  EXPECT_FALSE(DurationSpread({100, NAN, 101}).has_value());
  EXPECT_TRUE(DurationSpread({100, 100, 101}).has_value());
}

TEST(NoiseRulesTest, RatioSpreadIsTheWidestFieldWithThreeRounds) {
  // a: 50, 51, 52 -> differences 1, 2, 1 -> sqrt(6/3) = 1.4142.
  // c: 10, 10, 13 -> 0, 3, 3 -> sqrt(18/3) = 2.4495: the family's spread.
  // b: in two rounds only (a huge difference): ignored.
  const std::vector<std::map<std::string, double>> rounds = {
      {{"a", 50}, {"b", 0}, {"c", 10}},
      {{"a", 51}, {"b", 90}, {"c", 10}},
      {{"a", 52}, {"c", 13}},
  };
  EXPECT_NEAR(*RatioSpread(rounds), std::sqrt(6.0), 1e-9);
  EXPECT_NEAR(*RatioSpread({{{"a", 50}}, {{"a", 51}}, {{"a", 52}}}), std::sqrt(2.0), 1e-9);
  EXPECT_FALSE(RatioSpread({{{"a", 50}}, {{"a", 51}}}).has_value());
  EXPECT_FALSE(RatioSpread({{}, {}, {}}).has_value());
}

TEST(NoiseRulesTest, RatioPointsFollowTheComparatorsRatioTest) {
  EXPECT_DOUBLE_EQ(*RatioPoints("aiv_mte2_ratio", 0.41), 41);
  EXPECT_DOUBLE_EQ(*RatioPoints("aic_read_hit_rate", 0.5), 50);
  EXPECT_DOUBLE_EQ(*RatioPoints("cube_utilization(%)", 37.5), 37.5);
  EXPECT_DOUBLE_EQ(*RatioPoints("occupancy_pct", 12), 12);
  EXPECT_FALSE(RatioPoints("aic_time(us)", 12).has_value());
  EXPECT_FALSE(RatioPoints("aiv_total_cycles", 1e6).has_value());
}

TEST(NoiseRulesTest, ThresholdIsKTimesTheSpreadButNeverBelowTheFloor) {
  EXPECT_DOUBLE_EQ(kNoiseK, 3);
  EXPECT_DOUBLE_EQ(NoiseThreshold(0, kDurationFloorPct), 2);
  EXPECT_DOUBLE_EQ(NoiseThreshold(0.5, kDurationFloorPct), 2);
  EXPECT_DOUBLE_EQ(NoiseThreshold(1.3, kDurationFloorPct), 3.9000000000000004);
  EXPECT_DOUBLE_EQ(NoiseThreshold(0.2, kRatioFloorPp), 1);
  EXPECT_DOUBLE_EQ(NoiseThreshold(2, kRatioFloorPp), 6);
}

TEST(NoiseRulesTest, FalseAlarmRatesAreTheTwoSidedNormalTails) {
  // 2 (1 - Phi(ln(1.039) / 0.013)) = 0.0032507.
  EXPECT_NEAR(DurationFalseAlarmRate(3.9, 1.3), 0.0032507, 1e-6);
  // The 2 % default with a 1 % spread: 4.8 % of A/A pairs pass it.
  EXPECT_NEAR(DurationFalseAlarmRate(2, 1), 0.047674, 1e-5);
  EXPECT_NEAR(DurationFalseAlarmRate(2, 1.3), 0.127689, 1e-5);
  // 2 (1 - Phi(3)) = 0.0026998.
  EXPECT_NEAR(RatioFalseAlarmRate(3, 1), 0.0026998, 1e-6);
  EXPECT_DOUBLE_EQ(DurationFalseAlarmRate(2, 0), 0);
  EXPECT_DOUBLE_EQ(RatioFalseAlarmRate(1, 0), 0);
  // Monotone: a higher threshold never alarms more.
  EXPECT_LT(DurationFalseAlarmRate(4, 1.3), DurationFalseAlarmRate(3, 1.3));
}

v1::Round AaRound(const std::string& op, const std::string& soc, double us, double ratio) {
  v1::Round r;
  r.set_operator_name(op);
  r.set_case_id("p0");
  r.mutable_evidence()->mutable_fingerprint()->set_soc(soc);
  r.mutable_evidence()->mutable_fingerprint()->set_mode("standard");
  r.mutable_evidence()->mutable_duration()->set_aggregate_us(us);
  auto* g = r.mutable_evidence()->add_metrics();
  g->set_group("PipeUtilization");
  (*g->mutable_fields())["aiv_mte2_ratio"] = ratio;
  (*g->mutable_fields())["aiv_time(us)"] = us;  // not a ratio: no spread of its own
  return r;
}

TEST(NoiseRulesTest, MeasureNoiseGroupsBySocModeAndCaseAndSkipsErroredRounds) {
  std::vector<v1::Round> rounds = {
      AaRound("add", "A2", 100, 0.50), AaRound("add", "A2", 102, 0.51),
      AaRound("add", "A2", 104, 0.52), AaRound("add", "A3", 100, 0.5),
      AaRound("add", "A3", 101, 0.5),  AaRound("mul", "A2", 10, 0.3),
  };
  v1::Round errored = AaRound("mul", "A2", 500, 0.9);
  errored.mutable_evidence()->add_errors()->set_code("PARSE");
  rounds.push_back(errored);
  rounds.push_back(AaRound("mul", "A2", 10, 0.3));
  rounds.push_back(AaRound("mul", "A2", 0, 0.3));  // no kernel time: left out
  const std::vector<NoiseRecord> got = MeasureNoise(rounds);
  // add on A2: duration and ratio; add on A3: two rounds only; mul: two usable rounds.
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].operator_name, "add");
  EXPECT_EQ(got[0].soc, "A2");
  EXPECT_EQ(got[0].mode, "standard");
  EXPECT_EQ(got[0].family, "duration");
  EXPECT_NEAR(got[0].spread, 2.773368, 1e-6);
  EXPECT_EQ(got[0].rounds, 3);
  EXPECT_NEAR(got[0].threshold, 3 * 2.773368, 1e-5);
  EXPECT_NEAR(got[0].far, DurationFalseAlarmRate(got[0].threshold, got[0].spread), 1e-12);
  EXPECT_EQ(got[1].family, "ratio");
  EXPECT_NEAR(got[1].spread, std::sqrt(2.0), 1e-9);  // 50, 51, 52 points
  EXPECT_NEAR(got[1].threshold, 3 * std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(got[1].far, RatioFalseAlarmRate(3 * std::sqrt(2.0), std::sqrt(2.0)), 1e-12);
}

}  // namespace
}  // namespace npuperf::server
