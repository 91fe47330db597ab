#include "evidence/task_time.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kHeader[] =
    "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),"
    "task_stop(us)";

LaunchSelector Sel(std::string_view text) { return *ParseLaunchSelector(text); }
LaunchSelector All() { return Sel("all"); }

// A quick-mode --output dir with one PROF_* holding task_time `body`.
void WriteQuick(const std::filesystem::path& out, std::string_view task_time,
                std::string_view name = "task_time_20260605161737.csv") {
  testing::WriteFile(out / "PROF_000001_20260605161708478_FRJKORBPFMHQMGLA" /
                         "mindstudio_profiler_output" / std::string(name),
                     task_time);
}

TEST(AggregateSamplesTest, EvidenceRules) {
  Aggregate none = AggregateSamples({});
  EXPECT_EQ(Name(none.method), "none");
  Aggregate one = AggregateSamples({5.0});
  EXPECT_EQ(Name(one.method), "single");
  EXPECT_DOUBLE_EQ(one.value, 5.0);
  Aggregate two = AggregateSamples({4.0, 6.0});
  EXPECT_EQ(Name(two.method), "median");
  EXPECT_DOUBLE_EQ(two.value, 5.0);
  // A5 softmax repeats (msprof-output.md E6): trimmed mean = the middle one.
  Aggregate three = AggregateSamples({3.506, 3.149, 3.250});
  EXPECT_EQ(Name(three.method), "trimmed_mean");
  EXPECT_DOUBLE_EQ(three.value, 3.250);
  // Only ONE min and ONE max are dropped, even when repeated.
  Aggregate five = AggregateSamples({1, 1, 2, 9, 9});
  EXPECT_DOUBLE_EQ(five.value, (1 + 2 + 9) / 3.0);
}

TEST(ReadQuickTimingTest, RealRowsTargetByName) {
  auto unique = ReadQuickTiming(testing::TestData("quick_mix"), "main_kernel");
  ASSERT_EQ(unique.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(unique.status().message(),
              HasSubstr("expected exactly one launch of op_name=main_kernel"));
  EXPECT_THAT(unique.status().message(),
              HasSubstr("#3 stream 1756 task 4 start 1780676244500000.000 us duration "
                        "86849.340 us"));
  auto t = ReadQuickTiming(testing::TestData("quick_mix"), "main_kernel", All());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->selector, "all");
  EXPECT_THAT(t->used, ElementsAre(0, 1, 2));
  auto last = ReadQuickTiming(testing::TestData("quick_mix"), "main_kernel", Sel("-1"));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_THAT(last->launches_us, ElementsAre(86849.340));
  auto task = ReadQuickTiming(testing::TestData("quick_mix"), "main_kernel", Sel("task:1756/2"));
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_THAT(task->launches_us, ElementsAre(86810.080));
  EXPECT_EQ(t->kernel_name, "main_kernel");
  EXPECT_EQ(t->kernel_type, "MIX_AIC");
  EXPECT_THAT(t->launches_us, ElementsAre(87141.960, 86810.080, 86849.340));
  EXPECT_EQ(Name(t->method), "trimmed_mean");
  EXPECT_DOUBLE_EQ(t->aggregate_us, 86849.340);
  EXPECT_EQ(t->source, TimingSource::kTaskTime);
  ASSERT_EQ(t->files.size(), 1u);
  EXPECT_EQ(t->files[0].filename(), "task_time_20260605161737.csv");
}

TEST(ReadQuickTimingTest, EmptyOpNameNeverPicksTheLargestOfSeveral) {
  auto t = ReadQuickTiming(testing::TestData("quick_mix"), "", All());
  ASSERT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(t.status().message(), HasSubstr("main_kernel"));
  EXPECT_THAT(t.status().message(), HasSubstr("_Z14rmsnorm_kernelPfS_iiii"));
  auto v = ReadQuickTiming(testing::TestData("quick_mix"), "_Z14rmsnorm_kernelPfS_iiii");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kernel_type, "AI_VECTOR_CORE");
  EXPECT_EQ(Name(v->method), "single");
  EXPECT_DOUBLE_EQ(v->aggregate_us, 12.5);
}

TEST(ReadQuickTimingTest, AbsentTargetNamesOpAndListsKernels) {
  auto t = ReadQuickTiming(testing::TestData("quick_mix"), "main_kernel_typo");
  ASSERT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(t.status().message(), HasSubstr("no task_time entry for op_name=main_kernel_typo"));
  EXPECT_THAT(t.status().message(), HasSubstr("main_kernel (3 launches)"));
  // Control rows (PROFILING_ENABLE, N/A names) are never candidates.
  EXPECT_THAT(t.status().message(), ::testing::Not(HasSubstr("N/A")));
}

TEST(ReadQuickTimingTest, NamedTargetNeverFallsBackToHostApiTime) {
  auto t = ReadQuickTiming(testing::TestData("quick_api_only"), "main_kernel");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
}

TEST(ReadQuickTimingTest, ApiStatisticFallbackOnlyWithoutOpName) {
  auto t = ReadQuickTiming(testing::TestData("quick_api_only"), "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->source, TimingSource::kApiStatistic);
  // Avg(us) per launch, not the reference's Time(us) sum over 3 calls (192.14).
  EXPECT_DOUBLE_EQ(t->aggregate_us, 64.047);
}

TEST(ReadQuickTimingTest, BomCrlfAndTrailingTabs) {
  testing::TempDir dir;
  std::string body = std::string("\xEF\xBB\xBF") + kHeader + "\r\n" +
                     "0,N/A,PROFILING_ENABLE,1,1,0.020,1.000\t,1.020\t\r\n"
                     "0,N/A,TASK_TIMEOUT_SET,1,2,93.980,2.000\t,95.980\t\r\n"
                     "0,k,AI_CORE,1,3,10.000\t,100.000\t,110.000\t\r\n"
                     "0,k,AI_CORE,1,4,12.000,200.000\t,212.000\t\r\n";
  WriteQuick(dir.path(), body);
  auto t = ReadQuickTiming(dir.path(), "k", All());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->launches_us, ElementsAre(10.0, 12.0));
  EXPECT_EQ(Name(t->method), "median");
  EXPECT_DOUBLE_EQ(t->aggregate_us, 11.0);
}

TEST(ReadQuickTimingTest, OlderHeaderWithoutDeviceIdAndSlices) {
  testing::TempDir dir;
  std::string h =
      "kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),task_stop(us)\n";
  WriteQuick(dir.path(), h + "k,AI_CORE,1,1,1.0,0,1\n", "task_time_slice_0_20260101000000.csv");
  WriteQuick(dir.path(), h + "k,AI_CORE,1,2,2.0,0,1\nk,AI_CORE,1,3,9.0,0,1\n",
             "task_time_slice_1_20260101000000.csv");
  auto t = ReadQuickTiming(dir.path(), "k", All());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->launches_us, ElementsAre(1.0, 2.0, 9.0));
  EXPECT_EQ(t->files.size(), 2u);
  EXPECT_DOUBLE_EQ(t->aggregate_us, 2.0);
}

TEST(ReadQuickTimingTest, NonNumericDurationNamesFileLineColumn) {
  testing::TempDir dir;
  WriteQuick(dir.path(), std::string(kHeader) + "\n0,k,AI_CORE,1,1,12us,0,1\n");
  auto t = ReadQuickTiming(dir.path(), "k");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(),
              HasSubstr("task_time_20260605161737.csv:2: column 6 (task_time(us)): not a number"));
}

TEST(ReadQuickTimingTest, LayoutErrorsNameTheFiles) {
  testing::TempDir dir;
  EXPECT_THAT(ReadQuickTiming(dir.path(), "k").status().message(),
              HasSubstr("no PROF_* directory"));
  std::filesystem::create_directories(dir.path() / "PROF_000001_a");
  EXPECT_THAT(ReadQuickTiming(dir.path(), "k").status().message(),
              HasSubstr("no mindstudio_profiler_output (CANN 8.x export) and no "
                        "device_<id>/summary (before CANN 8.0) in"));
  std::filesystem::create_directories(dir.path() / "PROF_000002_b");
  auto two = ReadQuickTiming(dir.path(), "k");
  EXPECT_THAT(two.status().message(), HasSubstr("expected exactly one PROF_* (or *_ascend_pt) in"));
  EXPECT_THAT(two.status().message(), HasSubstr("PROF_000002_b"));
}

TEST(ReadQuickTimingTest, TwoExportsAreAnError) {
  testing::TempDir dir;
  WriteQuick(dir.path(), std::string(kHeader) + "\n", "task_time_20260101000000.csv");
  WriteQuick(dir.path(), std::string(kHeader) + "\n", "task_time_20260101000001.csv");
  auto t = ReadQuickTiming(dir.path(), "k");
  EXPECT_THAT(t.status().message(), HasSubstr("expected one export of task_time"));
  EXPECT_THAT(t.status().message(), HasSubstr("task_time_20260101000001.csv"));
}

}  // namespace
}  // namespace npuperf::evidence
