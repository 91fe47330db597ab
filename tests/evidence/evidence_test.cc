#include "evidence/evidence.h"

#include "evidence/evidence_json.h"
#include "evidence/op_summary.h"
#include "evidence/prof_layout.h"
#include "evidence/summary_text.h"
#include "evidence/task_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

BuildOptions Opts(std::string op, std::string soc = "Ascend910B2") {
  BuildOptions o;
  o.op_name = std::move(op);
  o.soc = std::move(soc);
  return o;
}

double Field(const Evidence& ev, const std::string& group, const std::string& field) {
  for (const MetricGroup& g : ev.metrics) {
    if (g.group != group) continue;
    for (const auto& [name, v] : g.fields) {
      if (name == field) return v;
    }
  }
  ADD_FAILURE() << group << "/" << field << " absent";
  return -1;
}

class E2GroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ev = BuildEvidence(testing::TestData("group_a2_e2"), Opts("main_kernel"));
    ASSERT_TRUE(ev.ok()) << ev.status();
    ev_ = std::move(*ev);
  }
  Evidence ev_;
};

TEST_F(E2GroupTest, IdentityAndTimingFromPipeUtilization) {
  EXPECT_EQ(ev_.op_name, "main_kernel");
  EXPECT_EQ(ev_.task_type, "MIX_AIC");
  EXPECT_EQ(ev_.block_num, 256);
  EXPECT_EQ(ev_.mix_block_num, 512);
  EXPECT_EQ(ev_.input_shapes, "1,32;1,32");  // quoted comma cell
  EXPECT_DOUBLE_EQ(ev_.task_duration_us, 87139.380);
  EXPECT_THAT(ev_.duration.samples_us, ElementsAre(87139.380));
  EXPECT_THAT(ev_.duration.core_samples_us, ElementsAre(79569.043));  // max(aicore, aiv)
  EXPECT_EQ(Name(ev_.duration.method), "single");
  EXPECT_DOUBLE_EQ(ev_.aicore_time_us, 12.716);
  EXPECT_DOUBLE_EQ(ev_.aiv_time_us, 79569.043);
  EXPECT_NEAR(ev_.head_overhead_us, 87139.380 - 79569.043, 1e-9);
  EXPECT_NEAR(ev_.head_overhead_pct, (87139.380 - 79569.043) / 87139.380 * 100, 1e-9);
  EXPECT_DOUBLE_EQ(ev_.cube_utilization_pct, 0.014);
}

TEST_F(E2GroupTest, SevenGroupsMergedFirstNonZeroWins) {
  EXPECT_EQ(Name(ev_.seven_metric_status), "complete");
  EXPECT_TRUE(ev_.missing_metrics.empty());
  ASSERT_EQ(ev_.metrics.size(), 7u);
  EXPECT_EQ(ev_.metrics[0].group, "PipeUtilization");
  EXPECT_EQ(ev_.metrics[6].group, "ResourceConflictRatio");
  EXPECT_DOUBLE_EQ(Field(ev_, "Memory", "aic_main_mem_read_bw(GB/s)"), 2.25);  // Block Dim file
  EXPECT_DOUBLE_EQ(Field(ev_, "ArithmeticUtilization", "aiv_vector_fops"), 524288);
  EXPECT_DOUBLE_EQ(ev_.merged.at("aiv_time(us)"), 79569.043);  // PipeUtilization's, not later
  EXPECT_DOUBLE_EQ(ev_.merged.at("aiv_vec_fp16_ratio"), 0.002);
  EXPECT_DOUBLE_EQ(ev_.merged.at("aiv_ub_read_bw_vector(GB/s)"), 7.5);  // CRLF file
  EXPECT_DOUBLE_EQ(ev_.merged.at("aiv_vec_resc_cflt_ratio"), 0.03);
  EXPECT_TRUE(ev_.errors.empty());
}

TEST_F(E2GroupTest, L2HitRatesFromRawCounts) {
  // BOM file; aic read (900+0)/(900+100+0+0), write 300/400; aiv read 750/1000, write 20/100.
  EXPECT_DOUBLE_EQ(ev_.l2_hit_rate_pct.at("aic_read"), 90.0);
  EXPECT_DOUBLE_EQ(ev_.l2_hit_rate_pct.at("aic_write"), 75.0);
  EXPECT_DOUBLE_EQ(ev_.l2_hit_rate_pct.at("aiv_read"), 75.0);
  EXPECT_DOUBLE_EQ(ev_.l2_hit_rate_pct.at("aiv_write"), 20.0);
}

TEST_F(E2GroupTest, ScalarBoundOnAiv) {
  EXPECT_EQ(LowerName(ev_.bound.primary_core), "aiv");
  EXPECT_EQ(Name(ev_.bound.routing_label), "scalar_candidate");
  EXPECT_THAT(testing::Names(ev_.bound.triggered_families), ElementsAre("scalar"));
  EXPECT_EQ(Name(ev_.bound.label), "SCALAR_BOUND");
  EXPECT_EQ(ev_.bound.scalar_route_triggered, true);
}

TEST_F(E2GroupTest, PerCoreFromDevice3VectorDb) {
  const PerCore& p = ev_.per_core;
  ASSERT_EQ(StatusText(p), "process_scope_unattributed");
  EXPECT_EQ(p.device_id, 3);
  EXPECT_EQ(Name(p.core_type), "AIV");
  ASSERT_EQ(p.cores.size(), 8u);  // NULL core, zero and replay-1 rows dropped
  EXPECT_EQ(p.cores[0].cycles, 143224277);
  EXPECT_EQ(p.cores[1].cycles, 140000000);
  EXPECT_NEAR(p.freq_ghz, 1.8, 1e-6);
  EXPECT_NEAR(p.max_us, 79569.043, 1e-6);
  double ns = 79569.043 * 1000 / 143224277;
  EXPECT_NEAR(p.min_us, 119e6 * ns / 1000, 1e-6);
  EXPECT_NEAR(p.spread_pct, (143224277.0 - 119e6) / 143224277.0 * 100, 1e-9);
  EXPECT_EQ(Name(p.verdict), "WARNING");
  EXPECT_THAT(p.slowest_cores, ElementsAre(0, 3, 1));
  EXPECT_THAT(p.fastest_cores, ElementsAre(6, 4, 5));
  double a = (143224277.0 + 140e6 + 139e6 + 141e6) / 4, b = 120.5e6;
  EXPECT_NEAR(p.half_gap_pct, (a - b) / a * 100, 1e-9);
  EXPECT_TRUE(p.half_gap_hint);
  const PerCore& s = ev_.per_core_secondary;
  ASSERT_EQ(StatusText(s), "process_scope_unattributed");
  EXPECT_EQ(Name(s.core_type), "AIC");
  EXPECT_NEAR(s.freq_ghz, 22889 / 12.716 / 1000, 1e-9);
  EXPECT_NEAR(s.spread_pct, (22889.0 - 20000) / 22889 * 100, 1e-9);
}

TEST_F(E2GroupTest, DvfsBackCalculatedFromCycles) {
  // 6666439114 cyc / 79569.043 us / 512 mix blocks * ceil(512/48) = 1800 MHz.
  EXPECT_EQ(Name(ev_.dvfs.source), "op_summary.cycles_back_calculated");
  EXPECT_NEAR(ev_.dvfs.observed_mhz, 1800.0, 0.01);
  EXPECT_EQ(Name(ev_.dvfs.status), "ok");
  EXPECT_DOUBLE_EQ(ev_.dvfs.rated_mhz, 1800);
}

TEST_F(E2GroupTest, JsonContractKeys) {
  nlohmann::json j = nlohmann::json::parse(ToJson(ev_));
  for (const char* key :
       {"op_name", "op_type", "task_type", "block_num", "mix_block_num", "task_duration_us",
        "aicore_time_us", "aiv_time_us", "head_overhead_us", "cube_utilization_pct", "metrics",
        "missing_metrics", "seven_metric_status", "per_core", "per_core_secondary", "bound", "dvfs",
        "errors"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["metrics"]["PipeUtilization"]["aiv_scalar_ratio"], 0.999);
  EXPECT_EQ(j["per_core"]["cores"][0]["cycles"], 143224277);
  EXPECT_EQ(j["per_core"]["verdict"], "WARNING");
  EXPECT_EQ(j["bound"]["routing_label"], "scalar_candidate");
  EXPECT_EQ(j["per_core_claim_allowed"], false);
  nlohmann::json st = nlohmann::json::parse(ToStatusJson(ev_));
  EXPECT_EQ(st["per_core_status"], "process_scope_unattributed");
  EXPECT_EQ(st["bound_diagnosis"]["routing_label"], "scalar_candidate");
}

TEST_F(E2GroupTest, SummarySectionsOnceEachInOrder) {
  std::string s = RenderSummary(ev_, {Lang::kZh, "/ops/docs/perf/round_001"});
  EXPECT_THAT(s, HasSubstr("=== 上板性能统计摘要 (msprof) ==="));
  EXPECT_THAT(s, HasSubstr("Type: main_kernel | TaskType: MIX_AIC | Duration: 87139.38us | "
                           "BlockDim: 256 (mix=512)"));
  EXPECT_THAT(s, HasSubstr("  aiv: scalar= 99.90%"));
  EXPECT_THAT(s, HasSubstr("primary_core=aiv | routing_label=scalar_candidate | "
                           "scalar_route_triggered=True"));
  EXPECT_THAT(s, HasSubstr("核最长耗时: 79569.043us | 头开销: 7570.337us (8.7%)"));
  EXPECT_THAT(s, HasSubstr("  aic read: hit=900 miss=100 hit_rate=90.00%"));
  EXPECT_THAT(s, HasSubstr("(max-min)/max = 16.91%  ->  警告 (10~30%)"));
  EXPECT_THAT(s, HasSubstr("  归档 CSV : /ops/docs/perf/round_001/"));
  EXPECT_THAT(s, HasSubstr("status=ok | observed=1800.0 MHz"));
  size_t first = s.find("--- Pipe ratios");
  EXPECT_EQ(s.find("--- Pipe ratios", first + 1), std::string::npos);  // reference bug 4
  EXPECT_LT(s.find("--- Bound routing"), s.find("--- 头开销"));
  EXPECT_LT(s.find("--- 头开销"), s.find("--- Memory 带宽"));
  EXPECT_LT(s.find("--- L2Cache"), s.find("--- 逐核负载均衡"));
  EXPECT_NE(s.back(), '\n');
  std::string en = RenderSummary(ev_, {});
  EXPECT_THAT(en, HasSubstr("(max-min)/max = 16.91%  ->  WARNING (10~30%)"));
  EXPECT_THAT(en, Not(HasSubstr("头开销")));
}

TEST(BuildEvidenceTest, AivOnlyPartialGroupWithRatioOutOfRange) {
  auto ev =
      BuildEvidence(testing::TestData("group_aiv_partial"), Opts("sanitized_add_custom_vector"));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->task_type, "AI_VECTOR_CORE");
  EXPECT_EQ(ev->block_num, 8);  // "Block Dim" naming, BOM + CRLF file
  EXPECT_EQ(ev->mix_block_num, 0);
  EXPECT_EQ(ev->input_shapes, "8,2048;8,2048");
  EXPECT_DOUBLE_EQ(ev->task_duration_us, 9.22);
  EXPECT_NEAR(ev->head_overhead_us, 9.22 - 8.66, 1e-9);
  EXPECT_EQ(Name(ev->seven_metric_status), "partial");
  EXPECT_THAT(ev->missing_metrics, ElementsAre("ArithmeticUtilization", "MemoryL0", "MemoryUB",
                                               "L2Cache", "ResourceConflictRatio"));
  EXPECT_EQ(ev->cube_utilization_pct, 0);  // N/A cell
  EXPECT_EQ(LowerName(ev->bound.primary_core), "aiv");
  EXPECT_EQ(Name(ev->bound.label), "UNKNOWN");
  EXPECT_EQ(Name(ev->bound.routing_label), "insufficient_evidence");
  bool ratio_error = false;
  for (const EvidenceError& e : ev->errors) {
    if (e.code == "RATIO_OUT_OF_RANGE") {
      ratio_error = true;
      EXPECT_THAT(e.message, HasSubstr("aiv_vec_ratio=1.2"));
    }
  }
  EXPECT_TRUE(ratio_error);
  // The zero-byte ai_vector_core.db is an error status, not a crash.
  EXPECT_THAT(StatusText(ev->per_core), HasSubstr("unavailable:sqlite_error:"));
  EXPECT_EQ(Name(ev->per_core.core_type), "AIV");
  EXPECT_EQ(StatusText(ev->per_core_secondary), "unavailable:no_aicore_db");
  EXPECT_THAT(RenderSummary(*ev, {}), HasSubstr("[RATIO_OUT_OF_RANGE]"));
}

TEST(BuildEvidenceTest, DuplicateTargetRowsListLines) {
  auto ev = BuildEvidence(testing::TestData("group_dup"), Opts("main_kernel"));
  ASSERT_EQ(ev.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(ev.status().message(),
              HasSubstr("metric PipeUtilization: expected exactly one launch "
                        "of op_name=main_kernel in "));
  EXPECT_THAT(ev.status().message(), HasSubstr("; found 2:\n  #1 stream "));
  EXPECT_THAT(ev.status().message(), HasSubstr("--launch unique|all|N|-N|task:STREAM/TASK"));
  EXPECT_THAT(ev.status().message(), HasSubstr("op_summary_20260605161737.csv:2"));
  EXPECT_THAT(ev.status().message(), HasSubstr("op_summary_20260605161737.csv:3"));
}

TEST(BuildEvidenceTest, AbsentTargetListsCandidatesNeverFallsBack) {
  auto ev = BuildEvidence(testing::TestData("group_a2_e2"), Opts("main_kernel_v2"));
  ASSERT_EQ(ev.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(ev.status().message(), HasSubstr("no row with Op Name == 'main_kernel_v2'"));
  EXPECT_THAT(
      ev.status().message(),
      HasSubstr("candidates: main_kernel [MIX_AIC, 1 rows, 87139.380 us]; aclnnRandn_Noise"));
}

TEST(BuildEvidenceTest, UsageErrors) {
  EXPECT_EQ(BuildEvidence("/nonexistent", Opts("k")).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(BuildEvidence(testing::TestData("group_a2_e2"), Opts("")).status().code(),
            absl::StatusCode::kInvalidArgument);
  testing::TempDir empty;
  auto ev = BuildEvidence(empty.path(), Opts("k"));
  EXPECT_THAT(ev.status().message(), HasSubstr("holds no profiling output"));
}

TEST(ListCandidatesTest, DiscoveryTsvSortedByTotalDuration) {
  auto parts = FindCsvParts(testing::TestData("group_a2_e2/PROF_PipeUtilization/"
                                              "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA/"
                                              "mindstudio_profiler_output"),
                            "op_summary");
  ASSERT_TRUE(parts.ok());
  auto c = ListCandidates(*parts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(FormatCandidatesTsv(*c),
            "count\ttask_type\ttotal_duration_us\texact_op_name\tlaunches\tincidental\n"
            "1\tMIX_AIC\t87139.380000\tmain_kernel\t#1:1756/0\t-\n"
            "1\tAI_CORE\t500.000000\taclnnRandn_Noise\t#1:1756/0\t-\n"
            "1\tAI_VECTOR_CORE\t12.500000\t_Z14rmsnorm_kernelPfS_iiii\t#1:1756/0\t-\n");
}

TEST(CombineRepeatsTest, SamplesOfAllRepeatsTrimmedMean) {
  Evidence a, b, c;
  a.duration.samples_us = {5.834};
  b.duration.samples_us = {5.926};
  c.duration.samples_us = {6.130};
  c.errors.push_back({"X", "boom"});
  Evidence out = CombineRepeats({a, b, c});
  EXPECT_THAT(out.duration.samples_us, ElementsAre(5.834, 5.926, 6.130));
  EXPECT_EQ(Name(out.duration.method), "trimmed_mean");
  EXPECT_DOUBLE_EQ(out.duration.aggregate_us, 5.926);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].message, "repeat 3: boom");
}

TEST(CombineRepeatsTest, CoreSamplesStayPairedWithTheDurationSamples) {
  Evidence a, b;
  a.duration.samples_us = {5.8, 5.9};
  a.duration.core_samples_us = {5.1, 5.2};
  b.duration.samples_us = {6.1};
  b.duration.core_samples_us = {5.3};
  EXPECT_THAT(CombineRepeats({a, b}).duration.core_samples_us, ElementsAre(5.1, 5.2, 5.3));
  b.duration.core_samples_us.clear();  // a repeat without core times: none at all
  EXPECT_THAT(CombineRepeats({a, b}).duration.core_samples_us, ::testing::IsEmpty());
  EXPECT_THAT(CombineRepeats({b, a}).duration.core_samples_us, ::testing::IsEmpty());
}

}  // namespace
}  // namespace npuperf::evidence

namespace npuperf::evidence {
namespace {

TEST(GoldenInEvidenceTest, BuildAndCombineUseTheAggregate) {
  BuildOptions o;
  o.op_name = "main_kernel";
  o.golden_per_iteration_us = 174278.76;
  auto ev = BuildEvidence(testing::TestData("group_a2_e2"), o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(StatusText(ev->golden), "joined");
  EXPECT_NEAR(ev->golden.ratio, 174278.76 / 87139.38, 1e-12);
  Evidence second = *ev;
  second.duration.samples_us = {87000.0};
  Evidence third = *ev;
  third.duration.samples_us = {88000.0};
  Evidence all = CombineRepeats({*ev, second, third});
  EXPECT_DOUBLE_EQ(all.duration.aggregate_us, 87139.38);  // trimmed mean of 3 = middle
  EXPECT_NEAR(all.golden.ratio, 174278.76 / 87139.38, 1e-12);
  EXPECT_THAT(RenderSummary(all, {}), ::testing::HasSubstr("golden_reference_ratio=2.000"));
}

KernelTiming Timing(std::vector<double> us, std::string selector) {
  KernelTiming t;
  t.kernel_name = "k";
  t.kernel_type = "AI_CORE";
  t.source = TimingSource::kTaskTime;
  t.selector = std::move(selector);
  for (size_t i = 0; i < us.size(); ++i) {
    LaunchInfo l;
    l.index = static_cast<int>(i + 1);
    l.duration_us = us[i];
    t.launches.push_back(l);
    t.used.push_back(i);
  }
  t.launches_us = std::move(us);
  return t;
}

TEST(QuickEvidenceTest, EveryUsedLaunchOfEveryRepeatIsASample) {
  Evidence ev = QuickEvidence(
      {Timing({10.0}, "all"), Timing({12.0, 14.0}, "all"), Timing({11.0}, "all")}, 22.0);
  EXPECT_THAT(ev.duration.samples_us, ElementsAre(10.0, 12.0, 14.0, 11.0));
  EXPECT_EQ(Name(ev.duration.method), "trimmed_mean");
  EXPECT_DOUBLE_EQ(ev.duration.aggregate_us, 11.5);  // drop 10 and 14
  EXPECT_EQ(Name(ev.duration.source), "task_time.task_time(us)");
  EXPECT_EQ(Name(ev.seven_metric_status), "not_collected");
  EXPECT_EQ(StatusText(ev.golden), "joined");
  EXPECT_DOUBLE_EQ(ev.golden.ratio, 22.0 / 11.5);
  EXPECT_EQ(ev.launch.selector, "all");
  EXPECT_EQ(ev.launch.total, 1);  // the first repeat's
  EXPECT_EQ(Name(ev.head_overhead_status), "not_applicable");
}

}  // namespace
}  // namespace npuperf::evidence
