#include "agent/job_runner.h"

#include <signal.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "SQLiteCpp/SQLiteCpp.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/constants.h"
#include "agent/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "tests/fakes/fake_clock.h"
#include "tests/fakes/fake_profiler_runner.h"
#include "tests/fakes/temp_dir.h"

namespace npuperf::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Fake = testing::FakeProfilerRunner;
using Argv = std::vector<std::string>;

const fs::path kTestData = NPUPERF_EVIDENCE_TESTDATA;
// The seven metric groups in the order the protocol runs them, spelled out
// here so that a change of order fails these tests.
const std::vector<std::string> kMetrics = {
    "PipeUtilization", "ArithmeticUtilization", "Memory", "MemoryL0", "MemoryUB",
    "L2Cache",         "ResourceConflictRatio"};

class JobRunnerTest : public ::testing::Test {
 protected:
  JobRunnerTest()
      : fake_(clock_), metrics_(registry_), runner_(fake_, clock_, Options(), &metrics_) {
    fs::create_directories(op_dir());
    std::ofstream(op_dir() / "test_op.py") << "# the operator's runner\n";
    v1::JobAssignment& job = ctx_.job;
    job.set_job_id(7);
    job.set_device_id(3);
    job.set_soc("Ascend910B2");
    job.set_operator_name("op");
    job.set_op_name("main_kernel");
    job.mutable_params()->set_timeout_seconds(60);
    ctx_.operator_dir = op_dir();
    ctx_.session_dir = dir_.path() / "session";
    ctx_.progress = [this](const v1::JobProgress& p) { phases_.push_back(p.phase()); };
    ctx_.cancel = &cancel_;
    ctx_.timings = &timings_;
  }

  static JobRunnerOptions Options() {
    JobRunnerOptions o;
    o.msprof = "msprof";
    o.python = "python3";
    o.agent_env = {{"PATH", "/usr/bin:/bin"}, {"SECRET", "not passed on"}};
    o.host = "host-a";
    o.agent_version = "9.9.9";
    return o;
  }

  fs::path op_dir() const { return dir_.path() / "op"; }
  fs::path session() const { return ctx_.session_dir; }
  Argv App() const { return {"python3", (op_dir() / "test_op.py").string()}; }
  Argv WithApp(Argv argv) const {
    for (auto& a : App()) argv.push_back(a);
    return argv;
  }
  Argv MetricRun(int repeat, const std::string& metric) const {
    return WithApp(
        {"msprof",
         "--output=" + (session() / absl::StrCat("repeat_", repeat) / ("PROF_" + metric)).string(),
         "--ai-core=on", "--aic-metrics=" + metric, "--task-time=on", "--ascendcl=on"});
  }
  Argv SampleRun(int repeat) const {
    return WithApp(
        {"msprof",
         "--output=" + (session() / absl::StrCat("repeat_", repeat) / "PROF_Sample").string(),
         "--ai-core=on", "--aic-metrics=PipeUtilization", "--aic-mode=sample-based",
         "--aic-freq=100", "--task-time=on", "--ascendcl=on"});
  }
  Argv QuickRun(int repeat) const {
    return WithApp({"msprof", "--output=" + (session() / absl::StrCat("repeat_", repeat)).string(),
                    "--task-time=on", "--ascendcl=on"});
  }

  // Every msprof run of the standard protocol writes its group's tree of the
  // group_a2_e2 fixture (a real A2 capture of main_kernel on device 3).
  void ScriptStandardFixture() {
    const fs::path group = kTestData / "group_a2_e2";
    fake_.On(Fake::HasArg("--aic-mode=sample-based"), Fake::Exit(0, group / "PROF_Sample"));
    for (const auto& m : kMetrics) {
      fake_.On(Fake::HasArg("--aic-metrics=" + m), Fake::Exit(0, group / ("PROF_" + m)));
    }
  }

  std::vector<Argv> Argvs() {
    std::vector<Argv> out;
    for (const auto& spec : fake_.started()) out.push_back(spec.argv);
    return out;
  }

  double MsprofRuns(const std::string& group, const std::string& outcome) {
    return metrics_.msprof_runs.Add({{"group", group}, {"outcome", outcome}}).Value();
  }

  std::string CollectionLog() const {
    std::ifstream in(session() / "collection.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  Fake fake_;
  prometheus::Registry registry_;
  AgentMetrics metrics_;
  JobRunner runner_;
  std::atomic<bool> cancel_{false};
  JobTimings timings_;
  JobContext ctx_;
  std::vector<v1::JobPhase> phases_;
};

TEST_F(JobRunnerTest, StandardRunsWarmUpsThenTheMetricRunsAndTheSampleRunPerRepeat) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_warm_up(2);
  ctx_.job.mutable_params()->set_repeats(2);
  ScriptStandardFixture();

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<Argv> want = {App(), App()};
  for (int r = 1; r <= 2; ++r) {
    for (const auto& m : kMetrics) want.push_back(MetricRun(r, m));
    want.push_back(MetricRun(r, "MemoryAccess"));  // the eighth group: an A2 SoC has it
    want.push_back(SampleRun(r));
  }
  EXPECT_THAT(Argvs(), ElementsAreArray(want));
  for (const auto& spec : fake_.started()) {
    EXPECT_EQ(spec.env.at("ASCEND_RT_VISIBLE_DEVICES"), "3");
    EXPECT_FALSE(spec.env.contains("SECRET"));
    EXPECT_EQ(spec.cwd, op_dir().string());
  }
  // Both repeats parsed from the fixture: same kernel, one duration sample each.
  EXPECT_EQ(e->op_name(), "main_kernel");
  EXPECT_THAT(e->duration().samples_us(), ElementsAre(87139.380, 87139.380));
  EXPECT_THAT(e->warnings(), IsEmpty());
  EXPECT_EQ(e->fingerprint().mode(), "standard");
  EXPECT_EQ(e->fingerprint().warm_up(), 2);
  EXPECT_EQ(e->fingerprint().repeats(), 2);
  EXPECT_EQ(e->fingerprint().agent_version(), "9.9.9");
  EXPECT_THAT(e->fingerprint().argv(), ElementsAre("python3", "test_op.py"));
  EXPECT_EQ(timings_.msprof_runs, 18);
  EXPECT_EQ(MsprofRuns("Memory", "ok"), 2);
  EXPECT_EQ(MsprofRuns("Sample", "ok"), 2);
  std::vector<v1::JobPhase> phases = {v1::JOB_PHASE_WARM_UP, v1::JOB_PHASE_WARM_UP};
  for (int r = 1; r <= 2; ++r) {
    phases.insert(phases.end(), kMetrics.size() + 1, v1::JOB_PHASE_METRIC_RUN);
    phases.push_back(v1::JOB_PHASE_SAMPLE_RUN);
    phases.push_back(v1::JOB_PHASE_PARSING);
  }
  EXPECT_THAT(phases_, ElementsAreArray(phases));
}

TEST_F(JobRunnerTest, QuickRunsTaskTimeRunsOnly) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  ctx_.job.mutable_params()->set_warm_up(1);
  ctx_.job.mutable_params()->set_repeats(3);
  ctx_.job.set_launch("-1");
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_THAT(Argvs(), ElementsAre(App(), QuickRun(1), QuickRun(2), QuickRun(3)));
  EXPECT_EQ(e->op_name(), "main_kernel");
  // quick_mix launches main_kernel three times per process; -1 is the last.
  EXPECT_THAT(e->duration().samples_us(), ElementsAre(86849.340, 86849.340, 86849.340));
  EXPECT_EQ(e->fingerprint().mode(), "quick");
  EXPECT_EQ(MsprofRuns("TaskTime", "ok"), 3);
  EXPECT_THAT(phases_,
              ElementsAre(v1::JOB_PHASE_WARM_UP, v1::JOB_PHASE_TIMING_RUN, v1::JOB_PHASE_PARSING,
                          v1::JOB_PHASE_TIMING_RUN, v1::JOB_PHASE_PARSING, v1::JOB_PHASE_TIMING_RUN,
                          v1::JOB_PHASE_PARSING));
}

// Discovery (issue 15): one task-time run of the runner, and the candidate
// table of everything it launched; quick_mix has two kernels that are not
// incidental, so --op-name-auto's pick fails listing both.
TEST_F(JobRunnerTest, DiscoveryRunsTheRunnerOnceUnderTaskTime) {
  ctx_.job.set_op_name("");
  ctx_.job.mutable_params()->set_warm_up(2);  // discovery does not warm up
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));

  auto d = runner_.Discover(ctx_);

  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(Argvs(),
              ElementsAre(WithApp({"msprof", "--output=" + (session() / "discovery").string(),
                                   "--task-time=on", "--ascendcl=on"})));
  EXPECT_EQ(MsprofRuns("TaskTime", "ok"), 1);
  ASSERT_EQ(d->candidates.size(), 2u);
  EXPECT_EQ(d->candidates[0].op_name, "main_kernel");
  EXPECT_EQ(d->candidates[0].task_type, "MIX_AIC");
  EXPECT_EQ(d->candidates[0].count, 3);
  EXPECT_NEAR(d->candidates[0].total_duration_us, 87141.960 + 86810.080 + 86849.340, 1e-6);
  EXPECT_EQ(d->candidates[1].op_name, "_Z14rmsnorm_kernelPfS_iiii");
  auto pick = evidence::PickAutoCandidate(d->candidates, d->source);
  ASSERT_FALSE(pick.ok());
  EXPECT_THAT(pick.status().message(), HasSubstr("main_kernel"));
  EXPECT_THAT(pick.status().message(), HasSubstr("_Z14rmsnorm_kernelPfS_iiii"));
}

// A capture without one kernel row, or a failing msprof run, fails discovery.
TEST_F(JobRunnerTest, DiscoveryFailsWithoutKernelsOrWhenMsprofFails) {
  fake_.On(Fake::HasArg("--output=" + (session() / "discovery").string()),
           Fake::Exit(0, kTestData / "quick_api_only"));
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(3));  // the second session's run
  auto empty = runner_.Discover(ctx_);
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition) << empty.status();
  EXPECT_THAT(empty.status().message(), HasSubstr("discovery: "));
  ctx_.session_dir = dir_.path() / "session2";
  auto failed = runner_.Discover(ctx_);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(MsprofRuns("TaskTime", "ok"), 1);
}

// The job's launch selector reaches the parser: by default (unique) a target
// launched three times fails the job listing the launches; `all` makes each
// launch of each repeat a sample; a malformed selector fails before any run.
TEST_F(JobRunnerTest, QuickModeAppliesTheJobsLaunchSelector) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  ctx_.job.mutable_params()->set_repeats(2);
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Exit(0, kTestData / "quick_mix"));

  auto unique = runner_.Run(ctx_);
  ASSERT_TRUE(absl::IsFailedPrecondition(unique.status())) << unique.status();
  EXPECT_THAT(unique.status().message(), HasSubstr("found 3"));
  EXPECT_THAT(unique.status().message(), HasSubstr("#3 stream 1756 task 4"));
  EXPECT_THAT(unique.status().message(), HasSubstr("--launch"));

  ctx_.job.set_launch("all");
  ctx_.session_dir = dir_.path() / "session_all";
  auto all = runner_.Run(ctx_);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(all->duration().samples_us(),
              ElementsAre(87141.960, 86810.080, 86849.340, 87141.960, 86810.080, 86849.340));

  ctx_.job.set_launch("first");
  ctx_.session_dir = dir_.path() / "session_bad";
  const size_t started = fake_.started().size();
  auto bad = runner_.Run(ctx_);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
  EXPECT_EQ(fake_.started().size(), started);
}

TEST_F(JobRunnerTest, StandardModeAppliesTheJobsLaunchSelector) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_repeats(1);
  ctx_.job.set_launch("task:9/9");  // group_a2_e2 has one launch, not this one
  ScriptStandardFixture();

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(absl::IsFailedPrecondition(e.status())) << e.status();
  EXPECT_THAT(e.status().message(), HasSubstr("task:9/9"));
  ctx_.job.set_launch("1");
  ctx_.session_dir = dir_.path() / "session_first";
  auto first = runner_.Run(ctx_);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(first->duration().samples_us(), ElementsAre(87139.380));
}

// Today's rule (job_runner.cc RunStandard): only a failed sample run is a
// warning, the per-core data is then missing; a failed metric run fails the
// job (next test).
TEST_F(JobRunnerTest, FailedSampleRunIsAWarning) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_repeats(1);
  fake_.On(Fake::HasArg("--aic-mode=sample-based"), Fake::Exit(1, {}, "no sample buffer\n"));
  ScriptStandardFixture();

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_THAT(e->warnings(),
              ElementsAre("per-core: unavailable:no_sample_run",
                          "repeat 1 sample run failed: repeat_1_Sample failed (exit code 1); "
                          "stderr tail: no sample buffer\n"));
  EXPECT_EQ(MsprofRuns("Sample", "failed"), 1);
  EXPECT_THAT(e->duration().samples_us(), ElementsAre(87139.380));
}

TEST_F(JobRunnerTest, MemoryAccessRunsOnlyWhereTheSocHasIt) {
  ctx_.job.set_soc("Ascend310P3");
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_repeats(1);
  ctx_.job.mutable_params()->set_skip_sample_run(true);
  ScriptStandardFixture();

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(e.ok()) << e.status();
  std::vector<Argv> want;
  for (const auto& m : kMetrics) want.push_back(MetricRun(1, m));
  EXPECT_THAT(Argvs(), ElementsAreArray(want));
}

// Like the sample run, the optional group's failure is a warning; what it
// left behind is removed so that the evidence is read from the seven.
TEST_F(JobRunnerTest, FailedMemoryAccessRunIsAWarning) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_repeats(1);
  ctx_.job.mutable_params()->set_skip_sample_run(true);
  fake_.On(Fake::HasArg("--aic-metrics=MemoryAccess"),
           Fake::Exit(1, kTestData / "group_a2_e2" / "PROF_Memory", "no counters\n"));
  ScriptStandardFixture();

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(fs::exists(session() / "repeat_1" / "PROF_MemoryAccess"));
  bool warned = false;
  for (const auto& w : e->warnings()) {
    warned |=
        absl::StrContains(w, "repeat 1 MemoryAccess run failed: repeat_1_MemoryAccess failed");
  }
  EXPECT_TRUE(warned) << e->DebugString();
  EXPECT_EQ(MsprofRuns("MemoryAccess", "failed"), 1);
  EXPECT_THAT(e->duration().samples_us(), ElementsAre(87139.380));
}

TEST_F(JobRunnerTest, FailedMetricRunFailsTheJobAndStopsTheRuns) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_repeats(2);
  fake_.On(Fake::HasArg("--aic-metrics=Memory"), Fake::Exit(3, {}, "memory boom\n"));
  ScriptStandardFixture();

  auto e = runner_.Run(ctx_);

  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsInternal(e.status())) << e.status();  // retryable
  EXPECT_EQ(e.status().message(),
            "metric run Memory: repeat_1_Memory failed (exit code 3); stderr tail: memory boom\n");
  EXPECT_THAT(Argvs(), ElementsAre(MetricRun(1, "PipeUtilization"),
                                   MetricRun(1, "ArithmeticUtilization"), MetricRun(1, "Memory")));
  EXPECT_EQ(MsprofRuns("Memory", "failed"), 1);
  EXPECT_THAT(CollectionLog(), HasSubstr("exit: exit code 3\n"));
}

TEST_F(JobRunnerTest, ChildKilledBySignalFailsTheJob) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  ctx_.job.mutable_params()->set_warm_up(1);
  ctx_.job.mutable_params()->set_repeats(1);
  fake_.On([](const ProfilerSpec& s) { return s.argv.front() == "python3"; },
           Fake::KilledBy(SIGSEGV));

  auto e = runner_.Run(ctx_);

  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsInternal(e.status())) << e.status();
  EXPECT_THAT(e.status().message(), HasSubstr("warmup_1 failed (killed by signal 11"));
  EXPECT_EQ(fake_.started().size(), 1u) << "no msprof run after a failed warm-up";
}

// A hanging child is terminated when the FakeClock passes the job deadline
// (params.timeout_seconds, measured from Run), not a moment before.
TEST_F(JobRunnerTest, HangingChildIsTerminatedAtTheJobDeadline) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  ctx_.job.mutable_params()->set_repeats(1);
  ctx_.job.mutable_params()->set_timeout_seconds(60);
  fake_.On(Fake::HasArg("--aic-metrics=PipeUtilization"), Fake::Hang());
  absl::StatusOr<v1::Evidence> e;
  std::thread run([&] { e = runner_.Run(ctx_); });

  ASSERT_TRUE(fake_.AwaitHangsParked(1));
  clock_.Advance(std::chrono::seconds(59));
  ASSERT_TRUE(fake_.AwaitHangsParked(1));
  EXPECT_EQ(fake_.terminated(), 0) << "terminated before the deadline";
  clock_.Advance(std::chrono::seconds(1));
  run.join();

  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(e.status())) << e.status();
  EXPECT_EQ(e.status().message(),
            "metric run PipeUtilization: repeat_1_PipeUtilization exceeded the job timeout");
  EXPECT_EQ(fake_.terminated(), 1);
  EXPECT_EQ(fake_.started().size(), 1u);
  EXPECT_EQ(MsprofRuns("PipeUtilization", "timeout"), 1);
}

TEST_F(JobRunnerTest, CancelTerminatesTheRunningChild) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  ctx_.job.mutable_params()->set_repeats(1);
  fake_.On(Fake::HasArg("--task-time=on"), Fake::Hang());
  absl::StatusOr<v1::Evidence> e;
  std::thread run([&] { e = runner_.Run(ctx_); });

  ASSERT_TRUE(fake_.AwaitHangsParked(1));
  cancel_ = true;
  clock_.Advance(kCancelPoll);
  run.join();

  EXPECT_TRUE(absl::IsCancelled(e.status())) << e.status();
  EXPECT_EQ(fake_.terminated(), 1);
  EXPECT_EQ(MsprofRuns("TaskTime", "cancelled"), 1);
  EXPECT_THAT(CollectionLog(), HasSubstr("exit: cancelled\n"));
}

// Timeline mode (issue 32): one --instr-profiling=on run, its export with the BIU section, and
// the timeline evidence of the target's window; the capture must hold the job's device's
// biu_perf.db. No durations: instruction profiling perturbs them.
TEST_F(JobRunnerTest, TimelineModeProfilesInstructionsAndReportsTheWindowWithoutDurations) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_TIMELINE);
  const fs::path capture = dir_.path() / "capture";
  const fs::path prof = capture / "PROF_000001_20260101000000_AAA";
  fs::create_directories(prof / "device_3" / "sqlite");
  fs::create_directories(prof / "mindstudio_profiler_output");
  {
    SQLite::Database db((prof / "device_3" / "sqlite" / "biu_perf.db").string(),
                        SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(
        "CREATE TABLE BiuInstrStatus (instruction TEXT); INSERT INTO BiuInstrStatus VALUES "
        "('MTE2'), ('VEC')");
  }
  std::ofstream(prof / "mindstudio_profiler_output" / "msprof_20260101000000.json") << R"([
{"name":"thread_name","ph":"M","pid":9,"tid":1,"args":{"name":"Group0-aiv0"}},
{"name":"main_kernel","ph":"X","pid":1,"tid":1,"ts":"1780000000000000.000","dur":"10.000"},
{"name":"MTE2","ph":"X","pid":9,"tid":1,"ts":"1780000000000000.000","dur":"4.000"},
{"name":"VEC","ph":"X","pid":9,"tid":1,"ts":"1780000000000002.500","dur":"4.000"}])";
  fake_.On(Fake::HasArg("--instr-profiling=on"), Fake::Exit(0, capture));

  auto e = runner_.Run(ctx_);

  ASSERT_TRUE(e.ok()) << e.status();
  const Argv timeline = WithApp({"msprof", "--output=" + (session() / "timeline").string(),
                                 "--ai-core=on", "--aic-metrics=PipeUtilization",
                                 "--instr-profiling=on", "--task-time=on", "--ascendcl=on"});
  const Argv export_run = {"msprof", "--export=on",
                           "--output=" + (session() / "timeline" / prof.filename()).string(),
                           "--type=text", "--reports=" + (session() / "reports.json").string()};
  EXPECT_THAT(Argvs(), ::testing::Contains(timeline));
  EXPECT_THAT(Argvs(), ::testing::Contains(export_run));
  std::ifstream reports(session() / "reports.json");
  std::string text((std::istreambuf_iterator<char>(reports)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr(R"({"json_process":{"ascend":true,"biu_perf":true}})"));
  const v1::TimelineSummary& t = e->timeline();
  EXPECT_EQ(t.attribution_status(), "unique_exact_target_window");
  EXPECT_EQ(t.pipeline_evidence_status(), "requires_tile_dag_correlation");
  EXPECT_EQ(t.target_start_ns(), 1780000000000000000);
  EXPECT_EQ(t.target_duration_ns(), 10000);
  EXPECT_EQ(t.overlap_ns(), 1500);  // MTE2 [0, 4) and VEC [2.5, 6.5) on one lane
  EXPECT_EQ(t.monitored_lanes(), 1);
  EXPECT_EQ(t.biu_rows(), 2);
  EXPECT_EQ(t.ascend_task_rows(), -1);
  EXPECT_THAT(e->warnings(), ::testing::Contains(HasSubstr("no ascend_task.db")));
  EXPECT_EQ(e->duration().samples_us_size(), 0);
  EXPECT_EQ(e->metrics_size(), 0);
  EXPECT_EQ(e->fingerprint().mode(), "timeline");
  EXPECT_THAT(e->evidence_json(), HasSubstr("\"schema_version\": 1"));
  EXPECT_EQ(MsprofRuns("Timeline", "ok"), 1);
  EXPECT_EQ(MsprofRuns("TimelineExport", "ok"), 1);
}

// A capture of another device, or a trace without the target's window, fails the job for good.
TEST_F(JobRunnerTest, TimelineModeFailsClosedOnAnotherDeviceOrNoWindow) {
  ctx_.job.mutable_params()->set_mode(v1::PROFILE_MODE_TIMELINE);
  const fs::path capture = dir_.path() / "capture";
  const fs::path prof = capture / "PROF_000001_20260101000000_AAA";
  fs::create_directories(prof / "device_0" / "sqlite");  // the job runs on device 3
  fake_.On(Fake::HasArg("--instr-profiling=on"), Fake::Exit(0, capture));
  auto e = runner_.Run(ctx_);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kFailedPrecondition) << e.status();
  EXPECT_THAT(e.status().message(), HasSubstr("not the job's device 3"));
}

}  // namespace
}  // namespace npuperf::agent
