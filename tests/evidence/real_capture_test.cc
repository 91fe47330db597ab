// Public real captures (testdata/real/PROVENANCE.md): every expected figure
// below was computed independently from the files with Python's csv module
// (the snippet is in PROVENANCE.md), never by running this library.
#include <string>

#include "evidence/discovery.h"
#include "evidence/evidence.h"
#include "evidence/layout.h"
#include "evidence/op_summary.h"
#include "evidence/task_time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

constexpr char kSlice[] = "aclnnInplaceCopy_SliceAiCore_Slice";
constexpr char kSliceKernel[] = "Slice_82e6b4faea71b451f217d7ea57c08012_high_performance_522000000";
constexpr char kMuls[] = "aclnnMuls_MulAiCore_Mul";
constexpr char kMaxPoolGrad[] =
    "aclnnMaxPool2dWithMaskBackward_MaxPoolGradWithArgmaxV1AiCore_MaxPoolGradWithArgmaxV1";

std::filesystem::path Real(std::string_view rel) {
  return testing::TestData(std::string("real/") + std::string(rel));
}

BuildOptions Opts(std::string op, std::string_view launch = "unique", std::string soc = "") {
  BuildOptions o;
  o.op_name = std::move(op);
  o.launch = *ParseLaunchSelector(launch);
  o.soc = std::move(soc);
  return o;
}

bool NotesContain(const Evidence& ev, std::string_view s) {
  for (const std::string& n : ev.input.notes) {
    if (n.find(s) != std::string::npos) return true;
  }
  return false;
}

// Issue 15 failure 1: a target launched 20 times was refused with no way out.
TEST(RealCaptureTest, UniqueErrorListsEveryLaunchAndSuggestsTheOption) {
  auto ev = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice));
  ASSERT_EQ(ev.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string msg(ev.status().message());
  EXPECT_THAT(msg, HasSubstr("expected exactly one launch of op_name=" + std::string(kSlice)));
  EXPECT_THAT(msg, HasSubstr("found 20:"));
  // Start times are µs since the epoch held in a double: printed to 0.25 us
  // (1778059616768656.843 -> .750), enough to order launches.
  EXPECT_THAT(msg, HasSubstr("  #1 stream 46 task 1270 start 1778059616768656."));
  EXPECT_THAT(msg, HasSubstr(" duration 13.360 us ("));
  EXPECT_THAT(msg, HasSubstr("  #20 stream 46 task 1289 "));
  EXPECT_THAT(msg, HasSubstr("--launch unique|all|N|-N|task:STREAM/TASK"));
}

TEST(RealCaptureTest, LaunchByIndexFromEitherEndAndByTask) {
  auto last = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "-1"));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_DOUBLE_EQ(last->duration.aggregate_us, 14.060);
  ASSERT_THAT(last->launch.used, SizeIs(1));
  EXPECT_EQ(last->launch.used[0].index, 20);
  EXPECT_EQ(*last->launch.used[0].task_id, 1289);
  EXPECT_EQ(last->launch.total, 20);
  auto task = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "task:46/1289"));
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_DOUBLE_EQ(task->duration.aggregate_us, 14.060);
  auto seventh = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "7"));
  ASSERT_TRUE(seventh.ok()) << seventh.status();
  EXPECT_DOUBLE_EQ(seventh->task_duration_us, 12.460);
  EXPECT_DOUBLE_EQ(seventh->aiv_time_us, 9.951);
  auto beyond = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "21"));
  EXPECT_EQ(beyond.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(beyond.status().message(), HasSubstr("it has 20 launches"));
}

TEST(RealCaptureTest, AllLaunchesAreSamplesMetricsByMedianWithSpread) {
  auto ev = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "all"));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_THAT(ev->duration.samples_us, SizeIs(20));
  ASSERT_THAT(ev->duration.core_samples_us, SizeIs(20));  // one aiv_time per launch
  EXPECT_DOUBLE_EQ(Median(ev->duration.core_samples_us), ev->aiv_time_us);
  EXPECT_EQ(Name(ev->duration.method), "trimmed_mean");
  EXPECT_NEAR(ev->duration.aggregate_us, 12.898111111111112, 1e-9);
  EXPECT_EQ(ev->launch.selector, "all");
  EXPECT_THAT(ev->launch.used, SizeIs(20));
  EXPECT_EQ(Name(ev->launch.metric_method), "median");
  EXPECT_DOUBLE_EQ(ev->merged.at("aiv_vec_ratio"), 0.028);
  EXPECT_DOUBLE_EQ(ev->aiv_time_us, 10.135);
  ASSERT_THAT(ev->launch.spread, SizeIs(1));
  bool found = false;
  for (const auto& [field, range] : ev->launch.spread[0].second) {
    if (field != "aiv_vec_ratio") continue;
    found = true;
    EXPECT_DOUBLE_EQ(range.first, 0.027);
    EXPECT_DOUBLE_EQ(range.second, 0.029);
  }
  EXPECT_TRUE(found);
}

// Issue 15 failure 2: CANN 6/7 op_summary_0_1_1_<ts>.csv was skipped silently.
TEST(RealCaptureTest, Cann7FileNamesAreRead) {
  auto ev = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "1"));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->input.kind, "prof_run");
  EXPECT_TRUE(NotesContain(*ev, "op_summary: op_summary_0_1_1_20260506100000.csv"));
  EXPECT_DOUBLE_EQ(ev->task_duration_us, 13.360);
  EXPECT_EQ(ev->block_num, 40);
  // One run read: the others are "not collected", a warning, not MISSING_GROUP.
  EXPECT_TRUE(ev->errors.empty());
  EXPECT_EQ(Name(ev->seven_metric_status), "partial");
}

// Issue 15 failure 3: the pre-8.0 PROF_*/device_<id>/summary tree.
TEST(RealCaptureTest, Pre80DeviceSummaryTreeGivesTheSameFigures) {
  auto pre = BuildEvidence(Real("as_strided_pre8"), Opts(kSlice, "all"));
  ASSERT_TRUE(pre.ok()) << pre.status();
  auto cann7 = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "all"));
  ASSERT_TRUE(cann7.ok()) << cann7.status();
  EXPECT_TRUE(NotesContain(*pre, "pre-CANN-8.0 tree"));
  EXPECT_TRUE(NotesContain(*pre, "op_summary: op_summary_0_1.csv"));
  EXPECT_EQ(pre->duration.samples_us, cann7->duration.samples_us);
  EXPECT_EQ(pre->merged, cann7->merged);
}

TEST(RealCaptureTest, ImpliedClockChecksAgainstTheRightSoc) {
  // Launch 7: 716441 cycles / 9.951 us / 40 blocks = 1799.9 MHz.
  auto b3 = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "7", "Ascend910B3"));
  ASSERT_TRUE(b3.ok()) << b3.status();
  EXPECT_EQ(Name(b3->dvfs.status), "ok");
  EXPECT_NEAR(b3->dvfs.observed_mhz, 716441 / 9.951 / 40, 1e-6);
  EXPECT_EQ(b3->dvfs.rated_mhz, 1800);
  // B4 has the same 20/40 cores but a 1500 MHz clock: never B3's numbers.
  auto b4 = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "7", "Ascend910B4"));
  ASSERT_TRUE(b4.ok()) << b4.status();
  EXPECT_EQ(b4->dvfs.rated_mhz, 1500);
  EXPECT_EQ(Name(b4->dvfs.status), "suspect");
  // Issue 15 failure 5: an unknown SoC is a clear warning, not another row.
  auto unknown = BuildEvidence(Real("as_strided_cann7"), Opts(kSlice, "7", "Ascend910B9"));
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_EQ(Name(unknown->dvfs.status), "unknown");
  EXPECT_EQ(unknown->dvfs.rated_mhz, 0);
  ASSERT_FALSE(unknown->dvfs.warnings.empty());
  EXPECT_THAT(unknown->dvfs.warnings[0], HasSubstr("Ascend910B9"));
}

// Quick mode on the same capture's task_time: same rule, its own figures.
TEST(RealCaptureTest, QuickModeSameLaunchRule) {
  auto unique = ReadQuickTiming(Real("as_strided_cann7"), kSliceKernel);
  EXPECT_EQ(unique.status().code(), absl::StatusCode::kFailedPrecondition);
  auto t = ReadQuickTiming(Real("as_strided_pre8"), kSliceKernel, *ParseLaunchSelector("all"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->launches_us, SizeIs(20));
  EXPECT_NEAR(t->aggregate_us, 12.89777777777778, 1e-9);
  // Launch 2: task_time 14.140 against op_summary 14.141 (failure 10: the
  // two modes' figures are not comparable).
  auto second = ReadQuickTiming(Real("as_strided_cann7"), kSliceKernel, *ParseLaunchSelector("2"));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_DOUBLE_EQ(second->launches_us[0], 14.140);
}

// Issue 15 failure 3 (torch_npu): *_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv.
TEST(RealCaptureTest, TorchNpuKernelDetails) {
  auto ev = BuildEvidence(Real("torch_level1"), Opts(kMuls, "all"));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->input.kind, "ascend_pt");
  ASSERT_FALSE(ev->metrics.empty());
  EXPECT_EQ(ev->metrics[0].group, "PipeUtilization");  // profiler_info _aic_metrics
  EXPECT_THAT(ev->duration.samples_us, SizeIs(18));
  EXPECT_NEAR(ev->duration.aggregate_us, 5.982562499999999, 1e-9);
  EXPECT_DOUBLE_EQ(ev->merged.at("aiv_vec_ratio"), 0.0325);
  EXPECT_EQ(ev->task_type, "AI_VECTOR_CORE");
  EXPECT_EQ(*ev->launch.used.front().task_id, 11112);
  EXPECT_EQ(*ev->launch.used.back().task_id, 11242);
}

// Issue 15 failure 4: no core time -> not applicable; a negative gap warns.
TEST(RealCaptureTest, HeadOverheadNotApplicableAndNegativeGap) {
  auto hccl = BuildEvidence(Real("torch_level1"), Opts("hcom_allReduce__586_1_1"));
  ASSERT_TRUE(hccl.ok()) << hccl.status();
  EXPECT_EQ(Name(hccl->head_overhead_status), "not_applicable");
  EXPECT_THAT(hccl->head_overhead_note, HasSubstr("task type HCCL"));
  EXPECT_EQ(hccl->head_overhead_pct, 0);
  auto neg = BuildEvidence(Real("torch_level1"), Opts(kMaxPoolGrad, "3"));
  ASSERT_TRUE(neg.ok()) << neg.status();
  EXPECT_EQ(Name(neg->head_overhead_status), "negative_gap");
  EXPECT_NEAR(neg->head_overhead_us, 100.742 - 101.669, 1e-9);
  bool warned = false;
  for (const std::string& w : neg->warnings) warned |= w.find("head overhead") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Issue 15 failure 6: discovery reads any input summarize reads.
TEST(RealCaptureTest, DiscoveryOnEveryLayout) {
  auto torch = DiscoverCandidates(Real("torch_level1"));
  ASSERT_TRUE(torch.ok()) << torch.status();
  int64_t muls = 0;
  for (const OpCandidate& c : torch->candidates) {
    if (c.op_name == kMuls) muls = c.count;
  }
  EXPECT_EQ(muls, 18);
  auto pre = DiscoverCandidates(Real("as_strided_pre8"));
  ASSERT_TRUE(pre.ok()) << pre.status();
  ASSERT_THAT(pre->candidates, SizeIs(1));
  EXPECT_EQ(pre->candidates[0].count, 20);
  auto opprof = DiscoverCandidates(Real("cann9_opprof_950"));
  ASSERT_TRUE(opprof.ok()) << opprof.status();
  ASSERT_THAT(opprof->candidates, SizeIs(1));
  EXPECT_THAT(opprof->candidates[0].op_name, HasSubstr("add_custom("));
}

// msprof op (CANN 9.x jsonl layout, Ascend950PR_9599): Current/Rated Freq of
// the capture feed the DVFS check; the capture's 1650 wins over the table's
// 1800 (with a warning naming both).
TEST(RealCaptureTest, MsprofOpRatedFreqFeedsDvfs) {
  auto ev = BuildEvidence(
      Real("cann9_opprof_950"),
      Opts("add_custom(unsigned char*, unsigned char*, unsigned char*, AddCustomTilingData)"));
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->input.kind, "opprof");
  EXPECT_DOUBLE_EQ(ev->task_duration_us, 4.841);
  EXPECT_EQ(ev->block_num, 8);
  EXPECT_DOUBLE_EQ(ev->aiv_time_us, 4.48303);  // longest block
  EXPECT_EQ(Name(ev->dvfs.status), "ok");
  EXPECT_EQ(ev->dvfs.observed_mhz, 1650);
  EXPECT_EQ(ev->dvfs.rated_mhz, 1650);
  EXPECT_THAT(ev->dvfs.rated_source, HasSubstr("capture"));
}

}  // namespace
}  // namespace npuperf::evidence

namespace npuperf::evidence {
namespace {

// AgenticCompiler/Helix (testdata/real/PROVENANCE.md): an msprof application
// capture of CANN 8.5.0 (torch_npu 2.7.1, a 910B-class chip) with only its
// mindstudio_profiler_output/ kept: "Block Dim" for Block Num, a TAB after
// every Task Start Time, shapes quoted twice, five launches of matmul_kernel.
TEST(RealCaptureTest, Cann85ApplicationCaptureWithEveryLaunch) {
  auto ev = BuildEvidence(testing::TestData("real/helix_cann85_matmul"), [] {
    BuildOptions o;
    o.op_name = "matmul_kernel";
    o.launch = *ParseLaunchSelector("all");
    return o;
  }());
  ASSERT_TRUE(ev.ok()) << ev.status();
  EXPECT_EQ(ev->task_type, "AI_CORE");
  EXPECT_EQ(ev->block_num, 4);
  EXPECT_EQ(ev->input_shapes, "\"32,32;32,32\"");
  EXPECT_THAT(ev->duration.samples_us, ::testing::ElementsAre(6.56, 6.2, 5.78, 6.122, 5.482));
  EXPECT_DOUBLE_EQ(ev->duration.aggregate_us, 6.034);  // drop 5.482 and 6.56
  EXPECT_THAT(ev->duration.core_samples_us,
              ::testing::ElementsAre(5.576, 5.127, 4.735, 5.188, 4.159));
  EXPECT_DOUBLE_EQ(ev->aicore_time_us, 5.127);  // the median over the launches
  EXPECT_DOUBLE_EQ(ev->merged.at("aic_mac_ratio"), 0.014);
  ASSERT_EQ(ev->launch.used.size(), 5u);
  EXPECT_EQ(*ev->launch.used[0].start_ns, 1778463028745189370);  // the TAB is not part of it
  EXPECT_EQ(*ev->launch.used[4].task_id, 10);
  // Given the export directory itself, the same run is read.
  auto inner =
      BuildEvidence(testing::TestData("real/helix_cann85_matmul/mindstudio_profiler_output"), [] {
        BuildOptions o;
        o.op_name = "matmul_kernel";
        o.launch = *ParseLaunchSelector("1");
        return o;
      }());
  ASSERT_TRUE(inner.ok()) << inner.status();
  EXPECT_DOUBLE_EQ(inner->task_duration_us, 6.56);
}

}  // namespace
}  // namespace npuperf::evidence
