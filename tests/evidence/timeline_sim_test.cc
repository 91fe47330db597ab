// msprof-sim's --instr-profiling=on timeline parsed back by evidence/timeline.h:
// the pipelined and the serial kernel give different same-lane overlap, and
// the lanes' busy time agrees with op_summary's pipe ratios. Needs the
// simulator ($NPUPERF_MSPROF_SIM, else <build>/bin/msprof-sim); skipped
// otherwise.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "evidence/evidence.h"
#include "evidence/timeline.h"
#include "gtest/gtest.h"
#include "tests/evidence/test_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

fs::path SimBinary() {
  if (const char* env = std::getenv("NPUPERF_MSPROF_SIM")) return env;
  if (const char* build = std::getenv("NPUPERF_BUILD_DIR")) {
    return fs::path(build) / "bin/msprof-sim";
  }
  return {};
}

fs::path Runner() {
  const char* src = std::getenv("NPUPERF_SOURCE_DIR");
  fs::path root = src ? fs::path(src) : fs::path(NPUPERF_EVIDENCE_TESTDATA) / "../../..";
  return root / "examples/ops/inplace_add_rmsnorm/test_inplace_add_rmsnorm.py";
}

int RunCommand(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class TimelineSimTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path sim = SimBinary();
    std::error_code ec;
    if (sim.empty() || !fs::exists(sim, ec) || !fs::exists(Runner(), ec)) return;
    dir_ = new testing::TempDir();
    const std::string env =
        "MSPROF_SIM_STATE_DIR=" + (dir_->path() / "state").string() + " MSPROF_SIM_SEED=7 ";
    for (const char* layout : {"pipelined", "serial"}) {
      const std::string cmd = env + "MSPROF_SIM_FAULT=timeline:" + layout + " " + sim.string() +
                              " --output=" + (dir_->path() / layout).string() +
                              " --ai-core=on --aic-metrics=PipeUtilization --instr-profiling=on"
                              " --task-time=on --ascendcl=on python3 " +
                              Runner().string() + " --case-id p1 >/dev/null 2>&1";
      ASSERT_EQ(RunCommand(cmd), 0) << cmd;
    }
    ready_ = true;
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "msprof-sim not built (set NPUPERF_MSPROF_SIM)";
  }
  static TimelineEvidence Summarize(const char* layout) {
    absl::StatusOr<fs::path> trace = FindTimelineTrace(dir_->path() / layout);
    EXPECT_TRUE(trace.ok()) << trace.status();
    TimelineOptions o;
    o.op_name = kKernel;
    o.max_listed_events = 1000000;
    absl::StatusOr<TimelineEvidence> t = SummarizeTimeline(trace.ok() ? *trace : "", o);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : TimelineEvidence{};
  }

  static inline testing::TempDir* dir_ = nullptr;
  static inline bool ready_ = false;
};

TEST_F(TimelineSimTest, PipelinedAndSerialKernelsDifferInSameLaneOverlap) {
  const TimelineEvidence pipelined = Summarize("pipelined");
  const TimelineEvidence serial = Summarize("serial");
  for (const TimelineEvidence* t : {&pipelined, &serial}) {
    EXPECT_EQ(t->attribution_status, "unique_exact_target_window");
    EXPECT_EQ(t->pipeline_evidence_status, "requires_tile_dag_correlation");
    ASSERT_FALSE(t->monitored_lanes.empty());
    EXPECT_EQ(t->monitored_lanes.front().name, "Group0-aiv0");
    EXPECT_GT(t->pipe_event_counts.at("compute"), 0);
    EXPECT_GT(t->pipe_event_counts.at("movement"), 0);
  }
  EXPECT_GT(pipelined.overlap_ns, 0);
  EXPECT_GT(pipelined.raw_event_pairs, 0);
  EXPECT_EQ(serial.overlap_ns, 0);
  EXPECT_EQ(serial.raw_event_pairs, 0);
  // biu_perf.db and ascend_task.db beside the trace, in the one device directory the agent
  // archives (FindTimelineDeviceFiles), with a row per instruction event and per task.
  absl::StatusOr<TimelineDeviceFiles> files =
      FindTimelineDeviceFiles(dir_->path() / "pipelined", /*device_id=*/0);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->biu_perf_db.filename(), "biu_perf.db");
  EXPECT_GE(files->biu_rows, pipelined.events_in_window);
  EXPECT_EQ(files->ascend_task_db.filename(), "ascend_task.db");
  EXPECT_GT(files->ascend_task_rows, 0);
  // Another device's capture is not this job's.
  absl::StatusOr<TimelineDeviceFiles> other =
      FindTimelineDeviceFiles(dir_->path() / "pipelined", /*device_id=*/3);
  EXPECT_TRUE(absl::IsFailedPrecondition(other.status())) << other.status();
  EXPECT_NE(other.status().message().find("not the job's device 3"), std::string::npos);
}

TEST_F(TimelineSimTest, LaneBusyTimeAgreesWithPipeRatios) {
  const TimelineEvidence t = Summarize("pipelined");
  std::map<std::string, int64_t> busy;  // Group0-aiv0 only
  for (const TimelineEvent& e : t.events) {
    if (e.lane == "Group0-aiv0") busy[e.instruction] += e.duration_ns;
  }
  ASSERT_GT(busy["MTE2"], 0);
  BuildOptions o;
  o.op_name = kKernel;
  absl::StatusOr<Evidence> ev = BuildEvidence(dir_->path() / "pipelined", o);
  ASSERT_TRUE(ev.ok()) << ev.status();
  const double vec = ev->merged.at("aiv_vec_ratio"), mte2 = ev->merged.at("aiv_mte2_ratio");
  ASSERT_GT(mte2, 0);
  // The timeline's VEC:MTE2 busy time is the model's ratio of ratios (rounding and the
  // busiest-core span aside).
  EXPECT_NEAR(static_cast<double>(busy["VEC"]) / static_cast<double>(busy["MTE2"]), vec / mte2,
              0.05 * vec / mte2);
}

TEST_F(TimelineSimTest, ExportModeChecksTheProfDirectory) {
  absl::StatusOr<fs::path> trace = FindTimelineTrace(dir_->path() / "serial");
  ASSERT_TRUE(trace.ok());
  const fs::path prof = trace->parent_path().parent_path();
  const fs::path reports = dir_->path() / "reports.json";
  std::ofstream(reports) << R"({"json_process": {"ascend": true, "biu_perf": true}})";
  EXPECT_EQ(RunCommand(SimBinary().string() + " --export=on --output=" + prof.string() +
                       " --type=text --reports=" + reports.string() + " >/dev/null"),
            0);
  EXPECT_NE(RunCommand(SimBinary().string() + " --export=on --output=" + dir_->path().string() +
                       " >/dev/null 2>&1"),
            0);
}

}  // namespace
}  // namespace npuperf::evidence
