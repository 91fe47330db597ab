#include "evidence/bound.h"

#include "evidence/derived.h"
#include "evidence/per_core.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Row = std::map<std::string, double>;

BoundDiagnosis Diagnose(const Row& row, std::vector<EvidenceError>* errors = nullptr) {
  std::vector<EvidenceError> local;
  return DiagnoseBound(row, errors ? errors : &local);
}

TEST(BoundTest, ReferenceTestExampleAivMte2) {
  // evidence_cli test: aicore 2.0, aiv 5.0, aiv_mte2 0.91 -> aiv, data_movement_candidate.
  BoundDiagnosis d =
      Diagnose({{"aicore_time(us)", 2.0}, {"aiv_time(us)", 5.0}, {"aiv_mte2_ratio", 0.91}});
  EXPECT_EQ(LowerName(d.primary_core), "aiv");
  EXPECT_EQ(Name(d.routing_label), "data_movement_candidate");
  EXPECT_EQ(Name(d.label), "MTE2_BOUND");
  EXPECT_EQ(d.scalar_route_triggered, false);
}

TEST(BoundTest, MaxAboveSeventyOnlyCountsForMte2AndCube) {
  // CUBE is the largest share at 0.75: CUBE_BOUND by the "max > 0.70" rule.
  BoundDiagnosis cube = Diagnose({{"aicore_time(us)", 9},
                                  {"aiv_time(us)", 1},
                                  {"aic_mac_ratio", 0.75},
                                  {"aic_mte2_ratio", 0.5},
                                  {"aic_scalar_ratio", 0.2}});
  EXPECT_EQ(Name(cube.label), "CUBE_BOUND");
  EXPECT_EQ(Name(cube.routing_label), "compute_candidate");
  // VEC at 0.75 as the max is not enough for the pipe label (VEC needs > 0.80),
  // but the routing family still triggers (global max > 0.70).
  BoundDiagnosis vec =
      Diagnose({{"aiv_time(us)", 3}, {"aiv_vec_ratio", 0.75}, {"aiv_mte2_ratio", 0.4}});
  EXPECT_EQ(Name(vec.label), "NO_BOUND");
  EXPECT_EQ(Name(vec.routing_label), "compute_candidate");
  // MTE2 comes first in the order even when SCALAR is also above 0.80.
  BoundDiagnosis both =
      Diagnose({{"aiv_time(us)", 3}, {"aiv_mte2_ratio", 0.85}, {"aiv_scalar_ratio", 0.9}});
  EXPECT_EQ(Name(both.label), "MTE2_BOUND");
  EXPECT_EQ(Name(both.routing_label), "mixed");
  EXPECT_THAT(testing::Names(both.triggered_families), ElementsAre("data_movement", "scalar"));
}

TEST(BoundTest, NoDominantAndInsufficient) {
  BoundDiagnosis low =
      Diagnose({{"aiv_time(us)", 3}, {"aiv_vec_ratio", 0.3}, {"aiv_mte2_ratio", 0.6}});
  EXPECT_EQ(Name(low.routing_label), "no_dominant_pipe");
  EXPECT_EQ(Name(low.label), "NO_BOUND");
  BoundDiagnosis none =
      Diagnose({{"aicore_time(us)", 0}, {"aiv_time(us)", 0}, {"aiv_vec_ratio", 0.9}});
  EXPECT_EQ(Name(none.routing_label), "insufficient_evidence");
  EXPECT_EQ(LowerName(none.primary_core), "");
  EXPECT_THAT(none.ratios, IsEmpty());
  EXPECT_FALSE(none.scalar_route_triggered.has_value());
  BoundDiagnosis tie =
      Diagnose({{"aicore_time(us)", 4}, {"aiv_time(us)", 4}, {"aic_fixpipe_ratio", 0.81}});
  EXPECT_EQ(LowerName(tie.primary_core), "aic");  // ties go to aic
  EXPECT_EQ(Name(tie.label), "FIXP_BOUND");
}

TEST(BoundTest, RatioOutOfRangeIsRecordedNotThrown) {
  std::vector<EvidenceError> errors;
  BoundDiagnosis d = Diagnose({{"aiv_time(us)", 3}, {"aiv_vec_ratio", 91}}, &errors);
  EXPECT_EQ(Name(d.label), "UNKNOWN");
  EXPECT_EQ(Name(d.routing_label), "insufficient_evidence");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].code, "RATIO_OUT_OF_RANGE");
}

TEST(BoundTest, Unprefixed310PColumns) {
  BoundDiagnosis d = Diagnose({{"aicore_time(us)", 10},
                               {"total_cycles", 1000},
                               {"vec_ratio", 0.85},
                               {"mac_ratio", 0.0},
                               {"mte2_ratio", 0.3},
                               {"scalar_ratio", 0.1}});
  EXPECT_EQ(LowerName(d.primary_core), "aic");
  EXPECT_EQ(Name(d.label), "VEC_BOUND");
  EXPECT_EQ(Name(d.routing_label), "compute_candidate");
}

TEST(PerCoreBalanceTest, VerdictEdgesAndHalves) {
  auto balance = [](std::vector<int64_t> cycles) {
    std::vector<CoreCycles> cores;
    for (size_t i = 0; i < cycles.size(); ++i) cores.push_back({static_cast<int>(i), cycles[i], 0});
    PerCore p;
    ComputeBalance(cores, 10.0, &p);
    return p;
  };
  EXPECT_EQ(Name(balance({100, 90}).verdict), "WARNING");   // exactly 10% -> WARNING
  EXPECT_EQ(Name(balance({100, 70}).verdict), "CRITICAL");  // exactly 30% -> CRITICAL
  EXPECT_EQ(Name(balance({100, 91}).verdict), "PASS");
  // Odd n: the second half is the larger one (cores 2, 3, 4).
  PerCore p = balance({100, 100, 50, 50, 50});
  EXPECT_DOUBLE_EQ(p.first_half_avg_us, 10.0);
  EXPECT_DOUBLE_EQ(p.second_half_avg_us, 5.0);
  EXPECT_DOUBLE_EQ(p.half_gap_pct, 50.0);
  EXPECT_TRUE(p.half_gap_hint);
  EXPECT_THAT(p.slowest_cores, ElementsAre(0, 1, 2));
  EXPECT_THAT(p.fastest_cores, ElementsAre(4, 3, 2));   // overlap with fewer than 6 cores
  EXPECT_FALSE(balance({100, 99, 100}).half_gap_hint);  // n < 4
}

TEST(DerivedTest, E1MatmulImpliesDvfsDip) {
  // msprof-output.md E1: MIX_AIC, Block 32 / Mix 64; aiv_time 103.548 us with
  // 2650825 cycles over 64 mix blocks on 48 AIV cores -> 800 MHz (rated 1800).
  Evidence ev;
  ev.task_type = "MIX_AIC";
  ev.block_num = 32;
  ev.mix_block_num = 64;
  ev.aicore_time_us = 93.205;
  ev.aiv_time_us = 103.548;
  ev.merged = {{"aic_total_cycles", 1193021}, {"aiv_total_cycles", 2650825}};
  BuildOptions o;
  o.soc = "Ascend910B2";
  DvfsCheck d = CheckDvfs(ev, o);
  EXPECT_NEAR(d.observed_mhz, 800.0, 0.1);
  EXPECT_EQ(Name(d.status), "suspect");
  EXPECT_NEAR(d.deviation_pct, -55.56, 0.01);
  o.soc = "";
  EXPECT_EQ(Name(CheckDvfs(ev, o).status), "unknown");
  EXPECT_EQ(Name(CheckDvfs(ev, o, 1790.0, 1800.0).status), "ok");  // OPPROF figures win
  EXPECT_EQ(LookupSoc("Ascend950PR_9589")->rated_mhz, 1650);
  EXPECT_EQ(LookupSoc("Ascend310P3")->rated_mhz, 1060);
  EXPECT_FALSE(LookupSoc("Ascend310P4").has_value());  // unknown: never another row
}

TEST(DerivedTest, A5L2NamesAndHeadOverhead) {
  Row m = {{"aiv_read_local_l2_hit", 998},
           {"aiv_read_local_l2_miss", 2},
           {"aiv_write_local_l2_hit", 0},
           {"aiv_write_local_l2_miss", 10}};
  std::map<std::string, double> r = L2HitRates(m);
  EXPECT_DOUBLE_EQ(r.at("aiv_read"), 99.8);
  EXPECT_DOUBLE_EQ(r.at("aiv_write"), 0.0);
  EXPECT_EQ(r.count("aic_read"), 0u);
  // A5 softmax E6: 5.834 us task, aiv 5.340 us -> 0.494 us (8.5%).
  Evidence ev;
  ev.task_duration_us = 5.834;
  ev.aiv_time_us = 5.340;
  ComputeHeadOverhead(&ev);
  EXPECT_NEAR(ev.head_overhead_us, 0.494, 1e-9);
  EXPECT_NEAR(ev.head_overhead_pct, 8.467, 1e-3);
}

}  // namespace
}  // namespace npuperf::evidence
