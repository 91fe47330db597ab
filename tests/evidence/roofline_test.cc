// The roofline arithmetic on worked inputs (roofline.h), the terminal rule,
// the §2.11 completion rule and Tile-DAG attestations.
#include "evidence/roofline.h"

#include <gtest/gtest.h>

#include <fstream>

#include "evidence/cases.h"
#include "evidence/evidence.h"
#include "evidence/roofline_json.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

RooflineInputs Vector910B2() {
  RooflineInputs in;
  in.soc = "Ascend910B2";
  in.merged = {{"aiv_vector_fops", 1e9},
               {"aiv_vec_fp16_ratio", 0.6},
               {"aiv_read_main_memory_datas(KB)", 1000000},
               {"aiv_write_main_memory_datas(KB)", 500000}};
  in.duration_us = 1000;
  in.duration_source = "worked input";
  in.scalar_dominant = false;
  return in;
}

TEST(CeilingsTest, DerivedFromThePlatformTableWithSources) {
  const auto c = CeilingsFor("Ascend910B2", 0);
  ASSERT_TRUE(c.has_value());
  EXPECT_DOUBLE_EQ(c->cube_fp16_ops_per_s, 8192.0 * 24 * 1.8e9);  // 353.9 TOPS
  EXPECT_DOUBLE_EQ(c->cube_int8_ops_per_s, 16384.0 * 24 * 1.8e9);
  EXPECT_DOUBLE_EQ(c->vector_fp16_ops_per_s, 128.0 * 48 * 1.8e9);
  EXPECT_DOUBLE_EQ(c->vector_fp32_ops_per_s, 64.0 * 48 * 1.8e9);
  EXPECT_DOUBLE_EQ(c->hbm_bytes_per_s, 1.6e12);
  EXPECT_EQ(c->hbm_verification, "third_party");
  EXPECT_NE(c->compute_source.find("24 cube / 48 vector cores, 1800 MHz"), std::string::npos);
  EXPECT_NE(c->l2_source.find("unknown"), std::string::npos);
  // The capture's rated clock wins over the table's.
  EXPECT_DOUBLE_EQ(CeilingsFor("Ascend910B2", 1500)->cube_fp16_ops_per_s, 8192.0 * 24 * 1.5e9);
  EXPECT_FALSE(CeilingsFor("Ascend910X", 0).has_value());
  EXPECT_EQ(CeilingsFor("Ascend910B4", 0)->hbm_bytes_per_s, 0);  // no published figure
  EXPECT_EQ(CeilingsFor("Ascend950PR_9589", 0)->hbm_verification, "unverified_external_historical");
}

TEST(RooflineTest, VectorKernelAtTheBandwidthRoof) {
  const Roofline r = ComputeRoofline(Vector910B2());
  ASSERT_EQ(r.status, "measured") << (r.missing.empty() ? "" : r.missing[0]);
  EXPECT_DOUBLE_EQ(r.ops, 1e9);
  EXPECT_DOUBLE_EQ(r.bytes, 1.536e9);  // (1e6 + 5e5) KB x 1024
  EXPECT_EQ(r.compute_ceiling, "vector_fp16");
  EXPECT_DOUBLE_EQ(r.peak_ops_per_s, 1.10592e13);
  EXPECT_NEAR(r.arithmetic_intensity, 0.6510416667, 1e-9);
  EXPECT_DOUBLE_EQ(r.achieved_ops_per_s, 1e12);
  EXPECT_DOUBLE_EQ(r.achieved_bytes_per_s, 1.536e12);
  EXPECT_NEAR(r.ridge_point, 6.912, 1e-12);
  EXPECT_NEAR(r.roof_ops_per_s, 1.0416666667e12, 1e3);
  EXPECT_NEAR(r.percent_of_roof, 96.0, 1e-9);
  EXPECT_NEAR(r.bandwidth_utilization_pct, 96.0, 1e-9);
  EXPECT_NEAR(r.compute_utilization_pct, 9.0422453704, 1e-9);
  EXPECT_EQ(r.binding_ceiling, "memory_bandwidth");
  EXPECT_EQ(r.terminal_status, "data_movement_bound");
  EXPECT_EQ(r.sources.at("duration_us"), "worked input");
  EXPECT_NE(r.sources.at("bytes").find("aiv_read_main_memory_datas(KB)"), std::string::npos);
  EXPECT_NE(r.sources.at("peak_bytes_per_s").find("[third_party]"), std::string::npos);
  // No attestation: never eligible, whatever the roofline says.
  EXPECT_FALSE(r.completion_eligible);
  EXPECT_EQ(r.pipeline_status, "unverified");
}

TEST(RooflineTest, CubeKernelAtTheComputeRoofIsEligibleOnlyWithAnAttestation) {
  RooflineInputs in;
  in.soc = "Ascend910B2";
  in.merged = {{"aic_cube_fops", 3.2e11},
               {"aic_mac_fp16_ratio", 0.9},
               {"aic_read_main_memory_datas(KB)", 100000},
               {"aic_write_main_memory_datas(KB)", 50000}};
  in.duration_us = 1000;
  in.scalar_dominant = false;
  Roofline r = ComputeRoofline(in);
  EXPECT_EQ(r.compute_ceiling, "cube_fp16");
  EXPECT_NEAR(r.arithmetic_intensity, 2083.3333333, 1e-6);
  EXPECT_NEAR(r.ridge_point, 221.184, 1e-9);
  EXPECT_EQ(r.binding_ceiling, "compute");
  EXPECT_NEAR(r.percent_of_roof, 3.2e14 / 3.538944e14 * 100, 1e-9);
  EXPECT_EQ(r.terminal_status, "compute_bound");
  EXPECT_FALSE(r.completion_eligible);
  ASSERT_EQ(r.completion_blockers.size(), 1u);
  EXPECT_NE(r.completion_blockers[0].find("pipeline evidence is unverified"), std::string::npos);
  in.attestation = TileDagAttestation{"dag.json", "ab", "proven", "slot rotation"};
  r = ComputeRoofline(in);
  EXPECT_TRUE(r.completion_eligible);
  EXPECT_EQ(r.pipeline_status, "proven");
  in.scalar_dominant = true;
  EXPECT_FALSE(ComputeRoofline(in).completion_eligible);
  in.scalar_dominant.reset();
  EXPECT_FALSE(ComputeRoofline(in).completion_eligible);
  in.merged["aic_mac_int8_ratio"] = 0.95;  // int8 doubles the roof: 45 % of it
  r = ComputeRoofline(in);
  EXPECT_EQ(r.compute_ceiling, "cube_int8");
  EXPECT_EQ(r.terminal_status, "residual_not_overlapped");
}

TEST(RooflineTest, BelowBothRoofsTheScalarRouteDecides) {
  RooflineInputs in = Vector910B2();
  in.duration_us = 10000;  // 9.6 % of bandwidth
  EXPECT_EQ(ComputeRoofline(in).terminal_status, "residual_not_overlapped");
  in.scalar_dominant = true;
  EXPECT_EQ(ComputeRoofline(in).terminal_status, "scalar_bound");
}

TEST(RooflineTest, WhatCannotBeMeasuredIsNamed) {
  RooflineInputs in = Vector910B2();
  in.merged.erase("aiv_read_main_memory_datas(KB)");
  Roofline r = ComputeRoofline(in);
  EXPECT_EQ(r.status, "insufficient_evidence");
  EXPECT_EQ(r.terminal_status, "insufficient_evidence");
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_NE(r.missing[0].find("read_main_memory_datas(KB)"), std::string::npos);
  EXPECT_TRUE(r.notes.empty());
  // A5 / CANN 9.2: only bandwidth fields. Never integrated into traffic.
  in.merged = {{"aiv_vector_fops", 1e9}, {"aiv_main_mem_read_bw(GB/s)", 900}};
  in.soc = "Ascend950PR_9589";
  r = ComputeRoofline(in);
  EXPECT_EQ(r.status, "insufficient_evidence");
  EXPECT_EQ(r.bytes, 0);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("never integrated into traffic"), std::string::npos);
  in = Vector910B2();
  in.soc = "Ascend910B4";
  EXPECT_EQ(ComputeRoofline(in).missing.at(0),
            "HBM bandwidth of Ascend910B4 (no published "
            "figure in the table)");
  in.soc = "";
  in.duration_us = 0;
  in.merged.clear();
  r = ComputeRoofline(in);
  EXPECT_EQ(r.missing.size(), 4u);  // ops, bytes, duration, soc
  const auto j = RooflineToJson(r);
  EXPECT_EQ(j["status"], "insufficient_evidence");
  EXPECT_EQ(j["completion_eligible"], false);
}

TEST(RooflineTest, MsprofOpPerBlockAveragesAreScaledByBlocks) {
  RooflineInputs in = Vector910B2();
  in.merged = {{"vector_fops", 1e9 / 40},
               {"read_main_memory_datas(KB)", 1000000.0 / 40},
               {"write_main_memory_datas(KB)", 500000.0 / 40}};
  in.per_block_averages = true;
  in.blocks = 40;
  const Roofline r = ComputeRoofline(in);
  EXPECT_NEAR(r.ops, 1e9, 1e-3);
  EXPECT_NEAR(r.bytes, 1.536e9, 1e-3);
  EXPECT_EQ(r.terminal_status, "data_movement_bound");
}

class AttestationTest : public ::testing::Test {
 protected:
  fs::path Write(const std::string& text) {
    const fs::path p = fs::path(::testing::TempDir()) / "tile_dag.json";
    std::ofstream(p) << text;
    return p;
  }
};

TEST_F(AttestationTest, AcceptedWithItsHashNeverInferred) {
  const std::string text =
      R"j({"schema_version":1,"target_op_name":"Add_1","pipeline_evidence_status":"proven",)j"
      R"j("tile_dag":"tile i+1 MTE2 overlaps tile i VEC (2 slots)"})j";
  auto a = ReadTileDagAttestation(Write(text), "Add_1");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->status, "proven");
  EXPECT_EQ(a->sha256, Sha256Hex(text));
  for (
      const auto& [bad, field] : std::vector<std::pair<std::string, std::string>>{
          {R"({"schema_version":1,"target_op_name":"Mul","pipeline_evidence_status":"proven","tile_dag":"x"})",
           "target_op_name"},
          {R"({"schema_version":1,"target_op_name":"Add_1","pipeline_evidence_status":"overlap","tile_dag":"x"})",
           "pipeline_evidence_status"},
          {R"({"schema_version":1,"target_op_name":"Add_1","pipeline_evidence_status":"proven"})",
           "tile_dag"},
          {R"({"target_op_name":"Add_1"})", "schema_version"},
          {"not json", "not a JSON object"}}) {
    auto r = ReadTileDagAttestation(Write(bad), "Add_1");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(std::string(r.status().message()).find(field), std::string::npos) << r.status();
  }
  EXPECT_TRUE(absl::IsNotFound(ReadTileDagAttestation("/nonexistent.json", "Add_1").status()));
}

// The service's completion rule (DecideCompletion) on worked inputs: the formal round's
// evidence.json roofline, the timeline's window and overlap, the user's attestation.
std::string FormalJson(const std::string& terminal, const std::string& scalar) {
  return "{\"roofline\": {\"roofline_terminal_status\": \"" + terminal +
         "\", \"scalar_dominant\": " + scalar + "}}";
}

TileDagAttestation Attested(const std::string& status) {
  auto a = ParseTileDagAttestation(
      "{\"schema_version\": 1, \"target_op_name\": \"Add_1\", \"pipeline_evidence_status\": \"" +
          status + "\", \"tile_dag\": \"tile i+1 loads while tile i computes\"}",
      "Add_1", "request");
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : TileDagAttestation{};
}

TEST(CompletionTest, ATerminalRoundWithAProvenPipelineMayBeClosed) {
  const Completion c = DecideCompletion(FormalJson("data_movement_bound", "false"),
                                        "unique_exact_target_window", 1500, Attested("proven"));
  EXPECT_TRUE(c.eligible);
  EXPECT_TRUE(c.blockers.empty());
  EXPECT_EQ(c.pipeline_status, "proven");
  EXPECT_EQ(c.terminal_status, "data_movement_bound");
}

TEST(CompletionTest, ProvenNeedsSameLaneOverlapAndAUniqueWindow) {
  Completion c = DecideCompletion(FormalJson("compute_bound", "false"),
                                  "unique_exact_target_window", 0, Attested("proven"));
  EXPECT_FALSE(c.eligible);
  EXPECT_EQ(c.pipeline_status, "unverified");
  ASSERT_EQ(c.blockers.size(), 2u);
  EXPECT_NE(c.blockers[1].find("no same-lane"), std::string::npos) << c.blockers[1];
  c = DecideCompletion(FormalJson("compute_bound", "false"), "duplicate_target_window", 900,
                       Attested("proven"));
  EXPECT_EQ(c.pipeline_status, "unverified");
  EXPECT_NE(c.blockers.back().find("duplicate_target_window"), std::string::npos);
}

TEST(CompletionTest, NotApplicableWithDagNeedsNoOverlap) {
  const Completion c =
      DecideCompletion(FormalJson("balanced_compute_movement", "false"),
                       "unique_exact_target_window", 0, Attested("not_applicable_with_dag"));
  EXPECT_TRUE(c.eligible);
  EXPECT_EQ(c.pipeline_status, "not_applicable_with_dag");
}

TEST(CompletionTest, EveryUnmetConditionIsABlocker) {
  // No attestation, a non-terminal roofline, scalar dominant.
  Completion c = DecideCompletion(FormalJson("residual_not_overlapped", "true"),
                                  "unique_exact_target_window", 1500, std::nullopt);
  EXPECT_FALSE(c.eligible);
  EXPECT_EQ(c.pipeline_status, "unverified");
  EXPECT_EQ(c.blockers.size(), 4u);
  // A formal round without a roofline (older, or not JSON at all): nothing is assumed.
  c = DecideCompletion("not json", "unique_exact_target_window", 1500, Attested("proven"));
  EXPECT_EQ(c.terminal_status, "insufficient_evidence");
  EXPECT_EQ(c.pipeline_status, "proven");
  EXPECT_EQ(c.blockers.size(), 2u);  // terminal status, scalar dominance unknown
}

TEST(CompletionTest, AnAttestationOfAnotherTargetIsRefusedNamingIt) {
  auto a = ParseTileDagAttestation(
      R"({"schema_version": 1, "target_op_name": "Mul_2", "pipeline_evidence_status": "proven",
          "tile_dag": "x"})",
      "Add_1", "tile_dag_attestation");
  EXPECT_TRUE(absl::IsInvalidArgument(a.status()));
  EXPECT_NE(a.status().message().find("tile_dag_attestation: target_op_name"), std::string::npos)
      << a.status();
}

}  // namespace
}  // namespace npuperf::evidence
