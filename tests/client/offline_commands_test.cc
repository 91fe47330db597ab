#include "client/offline_commands.h"

#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/evidence/test_util.h"

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

SummarizeArgs Args(const fs::path& ops) {
  SummarizeArgs a;
  a.prof_group = evidence::testing::TestData("group_a2_e2");
  a.ops_dir = ops;
  a.op_name = "main_kernel";
  a.soc = "Ascend910B2";
  return a;
}

TEST(SummarizeTest, WritesRoundAndPrintsSummary) {
  evidence::testing::TempDir ops;
  std::ostringstream out, err;
  ASSERT_EQ(RunSummarize(Args(ops.path()), out, err), 0) << err.str();
  fs::path round = ops.path() / "docs/perf/round_001";
  for (const char* m : {"PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0",
                        "MemoryUB", "L2Cache", "ResourceConflictRatio"}) {
    EXPECT_TRUE(fs::exists(round / (std::string("op_summary_") + m + ".csv"))) << m;
    EXPECT_TRUE(fs::exists(round / (std::string("task_time_") + m + ".csv"))) << m;
    EXPECT_TRUE(fs::exists(round / (std::string("op_statistic_") + m + ".csv"))) << m;
  }
  EXPECT_THAT(err.str(), HasSubstr("Archived 22 CSV files to: " + round.string()));
  std::string cycles = evidence::testing::ReadFile(round / "per_core_cycles.csv");
  EXPECT_THAT(cycles, StartsWith("coreid,task_cycles\n0,143224277\n1,140000000\n"));
  std::string summary = evidence::testing::ReadFile(round / "summary.txt");
  EXPECT_EQ(out.str(), summary + "\n");
  EXPECT_THAT(summary, HasSubstr("Archived CSVs: " + round.string() + "/"));
  auto j = nlohmann::json::parse(evidence::testing::ReadFile(round / "evidence.json"));
  EXPECT_EQ(j["op_name"], "main_kernel");
  EXPECT_EQ(j["seven_metric_status"], "complete");
  EXPECT_EQ(j["launch"]["selector"], "unique");
  EXPECT_EQ(j["launch"]["total"], 1);
  EXPECT_EQ(j["input"]["kind"], "prof_group");
  // Issue 15 failure 9: the count is every CSV in the round.
  int csvs = 0;
  for (const auto& e : fs::directory_iterator(round)) csvs += e.path().extension() == ".csv";
  EXPECT_EQ(csvs, 22);
  auto st = nlohmann::json::parse(evidence::testing::ReadFile(round / "evidence_status.json"));
  EXPECT_EQ(st["per_core_claim_allowed"], false);
  // A second run takes the next free round; gaps are filled first.
  std::ostringstream out2, err2;
  ASSERT_EQ(RunSummarize(Args(ops.path()), out2, err2), 0);
  EXPECT_TRUE(fs::exists(ops.path() / "docs/perf/round_002/summary.txt"));
  fs::remove_all(round);
  ASSERT_EQ(RunSummarize(Args(ops.path()), out2, err2), 0);
  EXPECT_TRUE(fs::exists(round / "summary.txt"));
}

TEST(SummarizeTest, JsonMdAndZhFormats) {
  evidence::testing::TempDir ops;
  SummarizeArgs a = Args(ops.path());
  a.format = "json";
  std::ostringstream out, err;
  ASSERT_EQ(RunSummarize(a, out, err), 0);
  EXPECT_EQ(nlohmann::json::parse(out.str())["bound"]["label"], "SCALAR_BOUND");
  a.format = "md";
  a.lang = "zh";
  a.round_name = "round_042";
  std::ostringstream md;
  ASSERT_EQ(RunSummarize(a, md, err), 0);
  EXPECT_THAT(md.str(), HasSubstr("# Evidence: `main_kernel`"));
  EXPECT_THAT(evidence::testing::ReadFile(ops.path() / "docs/perf/round_042/summary.txt"),
              HasSubstr("上板性能统计摘要"));
  // An explicit round is never reused (the reference overwrote half of it).
  std::ostringstream again;
  EXPECT_EQ(RunSummarize(a, again, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("round directory already exists"));
}

TEST(SummarizeTest, ExitCodes) {
  evidence::testing::TempDir ops;
  std::ostringstream out, err;
  SummarizeArgs a = Args(ops.path());
  a.round_name = "round_x";
  EXPECT_EQ(RunSummarize(a, out, err), 2);
  a = Args(ops.path());
  a.format = "xml";
  EXPECT_EQ(RunSummarize(a, out, err), 2);
  a = Args(ops.path());
  a.op_name = "nope";
  EXPECT_EQ(RunSummarize(a, out, err), 1);
  EXPECT_THAT(err.str(),
              HasSubstr("[ERROR] metric PipeUtilization: no row with Op Name == 'nope'"));
  EXPECT_FALSE(fs::exists(ops.path() / "docs/perf/round_001"));  // nothing reserved on failure
  a = Args(ops.path() / "missing");
  EXPECT_EQ(RunSummarize(a, out, err), 1);
  // Evidence with a recorded error (ratio 1.2) is archived but exits 1.
  a = Args(ops.path());
  a.prof_group = evidence::testing::TestData("group_aiv_partial");
  a.op_name = "sanitized_add_custom_vector";
  std::ostringstream out2;
  EXPECT_EQ(RunSummarize(a, out2, err), 1);
  EXPECT_THAT(out2.str(), HasSubstr("[RATIO_OUT_OF_RANGE]"));
}

TEST(ListOpNamesTest, TsvAndErrors) {
  std::ostringstream out, err;
  ASSERT_EQ(RunListOpNames(evidence::testing::TestData("group_a2_e2"), out, err), 0) << err.str();
  EXPECT_THAT(
      out.str(),
      StartsWith("count\ttask_type\ttotal_duration_us\texact_op_name\tlaunches\tincidental\n"
                 "1\tMIX_AIC\t87139.380000\tmain_kernel\t#1:1756/0\t-\n"));
  evidence::testing::TempDir empty;
  EXPECT_EQ(RunListOpNames(empty.path(), out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("holds no profiling output"));
  EXPECT_EQ(RunListOpNames(empty.path() / "x", out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("is not a directory."));
}

// Issue 31 item 8: an empty path is a usage error naming the argument, never an abort.
TEST(ListOpNamesTest, EmptyPathsAreUsageErrors) {
  std::ostringstream out, err;
  EXPECT_EQ(RunListOpNames("", out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("prof_group argument is empty"));
  evidence::testing::TempDir ops;
  SummarizeArgs a = Args(ops.path());
  a.prof_group = "";
  EXPECT_EQ(RunSummarize(a, out, err), 2);
  a = Args("");
  EXPECT_EQ(RunSummarize(a, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("ops_dir argument is empty"));
}

// Issue 31 item 7: the option a bounded refusal names lists every launch.
TEST(ListOpNamesTest, LaunchesOfListsEveryLaunch) {
  std::ostringstream out, err;
  ASSERT_EQ(RunListOpNames(evidence::testing::TestData("group_a2_e2"), out, err, "main_kernel"), 0)
      << err.str();
  EXPECT_THAT(out.str(), StartsWith("index\tstream_id\ttask_id\tstart_us\tduration_us\twhere\n"
                                    "1\t1756\t0\t"));
  EXPECT_EQ(RunListOpNames(evidence::testing::TestData("group_a2_e2"), out, err, "nope"), 1);
}

// Issue 31: list-op-names prints discovery's notes, such as PyPTO's two names
// of one kernel (op_summary PYPTO_<op>, 3 rows per launch; task_time
// tilefwk_<n>_mix_aic) and the name each mode reads.
TEST(ListOpNamesTest, NotesSayWhichNameEachModeReads) {
  evidence::testing::TempDir run;
  const fs::path out =
      run.path() / "PROF_000001_20260101000000000_ABCDEFGHIJKLMNOP" / "mindstudio_profiler_output";
  std::string op =
      "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),"
      "Task Duration(us)\n";
  for (const char* start : {"656.843", "659.843", "662.843"})
    op += std::string("0,4294967295,7,48,PYPTO_k,PYPTO_k,MIX_AIC,1778059616768") + start +
          "\t,3.000\n";
  evidence::testing::WriteFile(out / "op_summary_20260101000001.csv", op);
  evidence::testing::WriteFile(
      out / "task_time_20260101000001.csv",
      "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),"
      "task_stop(us)\n0,tilefwk_0_mix_aic,KERNEL_MIX_AIC,48,7,10.200,1778059616768656.063\t,"
      "1778059616768666.263\t\n");
  std::ostringstream tsv, err;
  ASSERT_EQ(RunListOpNames(run.path(), tsv, err), 0) << err.str();
  EXPECT_THAT(tsv.str(), HasSubstr("3\tMIX_AIC\t9.000000\tPYPTO_k\t"));
  EXPECT_THAT(err.str(), HasSubstr("[INFO] op_summary's PYPTO_k and task_time's tilefwk_0_mix_aic "
                                   "are one kernel: 3 of its 3 op_summary rows"));
  EXPECT_THAT(err.str(), HasSubstr("--quick reads task_time (--op-name tilefwk_0_mix_aic)"));
}

// Issue 15 failure 6: a group that summarize accepts without PipeUtilization.
TEST(ListOpNamesTest, AnyGroupAndAnyLayout) {
  evidence::testing::TempDir group;
  fs::copy(evidence::testing::TestData("group_a2_e2/PROF_ArithmeticUtilization"),
           group.path() / "PROF_ArithmeticUtilization", fs::copy_options::recursive);
  std::ostringstream out, err;
  ASSERT_EQ(RunListOpNames(group.path(), out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("\tmain_kernel\t"));
  EXPECT_THAT(err.str(), HasSubstr("PROF_ArithmeticUtilization"));
  std::ostringstream torch;
  ASSERT_EQ(RunListOpNames(evidence::testing::TestData("real/torch_level1"), torch, err), 0);
  EXPECT_THAT(torch.str(), HasSubstr("18\tAI_VECTOR_CORE\t"));
}

// Issue 15 failures 1 and 7: --launch on the CLI, and a quick-mode entry.
TEST(SummarizeTest, LaunchSelectorAndQuickEntry) {
  evidence::testing::TempDir ops;
  SummarizeArgs a = Args(ops.path());
  a.prof_group = evidence::testing::TestData("real/as_strided_cann7");
  a.op_name = "aclnnInplaceCopy_SliceAiCore_Slice";
  a.soc = "Ascend910B3";
  a.format = "json";
  std::ostringstream out, err;
  EXPECT_EQ(RunSummarize(a, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("--launch unique|all|N|-N|task:STREAM/TASK"));
  a.launch = "all";
  std::ostringstream all;
  ASSERT_EQ(RunSummarize(a, all, err), 0) << err.str();
  auto j = nlohmann::json::parse(all.str());
  EXPECT_EQ(j["launch"]["used"].size(), 20u);
  EXPECT_EQ(j["input"]["kind"], "prof_run");
  a.launch = "sideways";
  EXPECT_EQ(RunSummarize(a, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("launch selector 'sideways'"));
  a.launch = "-1";
  a.quick = true;
  a.op_name = "";  // the one kernel that is not incidental
  std::ostringstream quick;
  ASSERT_EQ(RunSummarize(a, quick, err), 0) << err.str();
  auto q = nlohmann::json::parse(quick.str());
  EXPECT_EQ(q["duration"]["source"], "task_time.task_time(us)");
  EXPECT_EQ(q["duration"]["samples_us"][0], 14.06);
  EXPECT_EQ(q["head_overhead_status"], "not_applicable");
  a.quick = false;
  EXPECT_EQ(RunSummarize(a, out, err), 2);  // standard mode needs the name
}

TEST(AddOfflineCommandsTest, ParsesAndRuns) {
  CLI::App app("npuperf");
  int exit_code = -1;
  AddOfflineCommands(app, exit_code);
  std::string group = evidence::testing::TestData("group_a2_e2").string();
  std::vector<std::string> argv = {group, "list-op-names"};  // CLI11 parses reversed vectors
  testing::internal::CaptureStdout();
  app.parse(argv);
  std::string printed = testing::internal::GetCapturedStdout();
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(printed, HasSubstr("main_kernel"));
  CLI::App bad("npuperf");
  AddOfflineCommands(bad, exit_code);
  std::vector<std::string> wrong = {"xml",  "--format", "k",        "--op-name",
                                    "/ops", group,      "summarize"};
  EXPECT_THROW(bad.parse(wrong), CLI::ValidationError);
}

}  // namespace
}  // namespace npuperf::client

namespace npuperf::client {
namespace {

TEST(SummarizeTest, TileDagAttestationIsRecordedWithItsHash) {
  evidence::testing::TempDir ops;
  const fs::path dag = ops.path() / "tile_dag.json";
  std::ofstream(dag) << R"({"schema_version":1,"target_op_name":"main_kernel",)"
                     << R"("pipeline_evidence_status":"not_applicable_with_dag",)"
                     << R"("tile_dag":"one tile: nothing to pipeline"})";
  SummarizeArgs a = Args(ops.path());
  a.format = "json";
  a.tile_dag = dag;
  std::ostringstream out, err;
  ASSERT_EQ(RunSummarize(a, out, err), 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["roofline"]["pipeline_overlap_status"], "not_applicable_with_dag");
  EXPECT_EQ(j["roofline"]["tile_dag_attestation"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(j["bound"]["pipeline_overlap_status"], "not_applicable_with_dag");
  // No MemoryAccess group in this capture: not measured, so never closable.
  EXPECT_EQ(j["roofline"]["status"], "insufficient_evidence");
  EXPECT_EQ(j["bound"]["completion_eligible"], false);
  std::ofstream(dag) << R"({"schema_version":1,"target_op_name":"other"})";
  a.round_name = "round_099";
  EXPECT_EQ(RunSummarize(a, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("target_op_name"));
}

}  // namespace
}  // namespace npuperf::client
