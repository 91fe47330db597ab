// npuperf summarize-timeline: exit codes and output on hand-made traces.
#include "client/timeline_commands.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "CLI/CLI.hpp"

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;

fs::path WriteTrace(const std::string& name, const std::string& body) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("tlcmd_" + name) / "PROF_000001_a" /
                       "mindstudio_profiler_output";
  fs::remove_all(dir.parent_path().parent_path());
  fs::create_directories(dir);
  std::ofstream(dir / "msprof_20260101000000.json") << body;
  return dir.parent_path().parent_path();
}

const char* kTrace = R"([
{"name":"thread_name","ph":"M","pid":100,"tid":1,"args":{"name":"Group0-aiv0"}},
{"name":"Add_1","ph":"X","pid":1,"tid":1,"ts":"1780000000000000.000","dur":"10.000"},
{"name":"MTE2","ph":"X","pid":100,"tid":1,"ts":"1780000000000000.000","dur":"4.000"},
{"name":"VEC","ph":"X","pid":100,"tid":1,"ts":"1780000000000002.500","dur":"4.000"}])";

TEST(SummarizeTimelineTest, JsonOfAProfDirectory) {
  std::ostringstream out, err;
  const int code = RunSummarizeTimeline({WriteTrace("ok", kTrace), "Add_1", "json", 10}, out, err);
  ASSERT_EQ(code, 0) << err.str();
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["attribution_status"], "unique_exact_target_window");
  EXPECT_EQ(j["same_lane_pipe_interval_overlap"]["pair_overlap_us"]["compute+movement"], "1.500");
  EXPECT_EQ(j["pipeline_evidence_status"], "requires_tile_dag_correlation");
  EXPECT_NE(err.str().find("1 pass"), std::string::npos);
}

TEST(SummarizeTimelineTest, TextAndExitCodes) {
  std::ostringstream out, err;
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("text", kTrace), "Add_1", "text", 10}, out, err), 0);
  EXPECT_NE(out.str().find("overlap 1.500 us"), std::string::npos) << out.str();
  std::ostringstream o2, e2;
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("miss", kTrace), "Mul_2", "json", 10}, o2, e2), 1);
  EXPECT_EQ(nlohmann::json::parse(o2.str())["attribution_status"], "target_not_found");
  std::ostringstream o3, e3;
  EXPECT_EQ(RunSummarizeTimeline({"/nonexistent/x", "Add_1", "json", 10}, o3, e3), 1);
  EXPECT_NE(e3.str().find("[ERROR]"), std::string::npos);
  std::ostringstream o4, e4;
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("bad", "[{"), "Add_1", "json", 10}, o4, e4), 1);
  EXPECT_NE(e4.str().find("malformed trace"), std::string::npos);
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("u", kTrace), "", "json", 10}, o4, e4), 2);
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("u", kTrace), "Add_1", "xml", 10}, o4, e4), 2);
  std::ostringstream o5, e5;
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("h", kTrace), "Add_1", "html", 10}, o5, e5), 0);
  EXPECT_NE(o5.str().find("class=\"overlap\""), std::string::npos);
  std::ostringstream o6, e6;
  EXPECT_EQ(RunSummarizeTimeline({WriteTrace("p", kTrace), "Add_1", "perfetto", 1}, o6, e6), 0);
  const auto trace = nlohmann::json::parse(o6.str());
  EXPECT_EQ(trace["otherData"]["time_origin_us"], "1780000000000000.000");
  EXPECT_NE(e6.str().find("holds 1 of the window's 2 instruction events (--max-events)"),
            std::string::npos)
      << e6.str();
}

TEST(SummarizeTimelineTest, RegistersTheCommand) {
  CLI::App app;
  int exit_code = -1;
  AddTimelineCommands(app, exit_code);
  const std::string dir = WriteTrace("cli", kTrace).string();
  const char* argv[] = {"npuperf", "summarize-timeline", dir.c_str(), "--op-name",
                        "Add_1",   "--format",           "json"};
  testing::internal::CaptureStdout();
  EXPECT_NO_THROW(app.parse(7, argv));
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("unique_exact_target_window"), std::string::npos);
  EXPECT_EQ(exit_code, 0);
}

}  // namespace
}  // namespace npuperf::client
