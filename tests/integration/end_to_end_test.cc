// The walking skeleton through the real binaries: npuperf submit -> server ->
// agent (flock, msprof-sim, task_time parser) -> server store -> queries.
#include <fstream>

#include "absl/strings/match.h"
#include "common/bundle_tar.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

std::string Operator(const std::string& name) {
  return (SourceDir() / "examples/ops" / name).string();
}

TEST(EndToEndTest, QuickSubmitStoresTheKernelTime) {
  Cluster c;
  // The job's progress goes with the agent's heartbeats (docs/api.md, "Progress in heartbeats"):
  // a heartbeat every 100 ms, so this job of about a second shows a phase.
  c.Start("0-3", {"--heartbeat-ms", "100"});
  auto r = c.Cli({"--format", "json", "submit", "--quick", Operator("inplace_add_rmsnorm"),
                  "--op-name", kRmsNormKernel, "--repeats", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nagent log:\n" << c.agent->Log();
  v1::Collection collection;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok()) << r.out;
  ASSERT_EQ(collection.jobs_size(), 1);
  const v1::Job& job = collection.jobs(0);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.op_name(), kRmsNormKernel);
  EXPECT_GT(job.kernel_time_us(), 0.5);
  EXPECT_LT(job.kernel_time_us(), 10'000);
  // Each heartbeat carries the attempt's newest phase: some phase of the running job shows.
  EXPECT_TRUE(absl::StrContains(r.err, "running preparing") ||
              absl::StrContains(r.err, "running preflight") ||
              absl::StrContains(r.err, "running warm_up") ||
              absl::StrContains(r.err, "running timing_run") ||
              absl::StrContains(r.err, "running parsing") ||
              absl::StrContains(r.err, "running uploading"))
      << "no progress line: " << r.err;

  // The stored round holds the three repeat samples the agent parsed.
  auto round = c.GetRound(job.round_id());
  ASSERT_TRUE(round.ok()) << round.status();
  const v1::Evidence& e = round->evidence();
  ASSERT_EQ(e.duration().samples_us_size(), 3);
  EXPECT_DOUBLE_EQ(e.duration().aggregate_us(), job.kernel_time_us());
  EXPECT_EQ(e.duration().method(), v1::AGGREGATION_METHOD_TRIMMED_MEAN);
  EXPECT_EQ(e.task_type(), "AI_VECTOR_CORE");
  EXPECT_EQ(e.fingerprint().soc(), "Ascend910B2");
  EXPECT_EQ(e.fingerprint().mode(), "quick");
  EXPECT_GE(e.fingerprint().device_id(), 0);
  EXPECT_LE(e.fingerprint().device_id(), 3);

  // `npuperf get` shows it again; /metrics counted the stored round.
  auto get = c.Cli({"get", collection.id()});
  EXPECT_EQ(get.exit_code, 0) << get.err;
  EXPECT_NE(get.out.find(kRmsNormKernel), std::string::npos) << get.out;
  auto metrics = HttpGet(c.metrics_address, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->find("npuperf_server_ingest_rounds_stored_total 1"), std::string::npos);

  // The agent counted its msprof runs by group and outcome.
  auto agent_line = c.agent->WaitForLine("metrics on", std::chrono::seconds(1));
  ASSERT_TRUE(agent_line.ok());
  auto agent_metrics = HttpGet(AddressAfter(*agent_line, "metrics on"), "/metrics");
  ASSERT_TRUE(agent_metrics.ok()) << agent_metrics.status();
  EXPECT_NE(
      agent_metrics->find("npuperf_agent_msprof_runs_total{group=\"TaskTime\",outcome=\"ok\"} 3"),
      std::string::npos)
      << *agent_metrics;

  // The simulator never saw a device used twice at once.
  EXPECT_FALSE(std::filesystem::exists(c.dir.path() / "conflicts.log"));
  EXPECT_EQ(c.agent->Stop(), 0);
  EXPECT_EQ(c.server->Stop(), 0) << c.server->Log();
}

// Issue 14: an operator directory holding non-ASCII names packs on the
// client, passes the server's check and unpacks on the agent with the same
// sha256 everywhere (each side verifies it), whatever locale the binaries
// start in.
TEST(EndToEndTest, NonAsciiNamesRoundTripWithTheSameHash) {
  Cluster c;
  c.Start("0");
  const auto op = c.dir.path() / "算子" / "inplace_add_rmsnorm";
  std::filesystem::create_directories(op.parent_path());
  std::filesystem::copy(Operator("inplace_add_rmsnorm"), op,
                        std::filesystem::copy_options::recursive);
  std::ofstream(op / "说明.md") << "# 说明\n";
  ASSERT_NE(UseUtf8PathNames().find("UTF-8"), std::string::npos);
  auto local = PackBundle(op, 64 << 20);
  ASSERT_TRUE(local.ok()) << local.status();
  auto r = c.Cli({"--format", "json", "submit", "--quick", op.string(), "--op-name", kRmsNormKernel,
                  "--repeats", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err << "\nagent log:\n" << c.agent->Log();
  v1::Collection collection;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &collection).ok()) << r.out;
  ASSERT_EQ(collection.jobs_size(), 1);
  EXPECT_EQ(collection.jobs(0).state(), v1::JOB_STATE_SUCCEEDED);
  auto get = c.Cli({"--format", "json", "get", collection.id()});
  EXPECT_NE((r.out + get.out).find(Sha256Hex(*local)), std::string::npos)
      << "the stored bundle is not the client's bytes: " << r.out;
}

// Issue 15: a runner that launches its target three times per process. The
// job's launch selector (submit --launch) reaches the agent in both modes:
// unique (the default) fails listing the launches, all makes each launch a
// sample, -1 / 1 pick one, and a malformed selector is refused at submission.
constexpr char kTripleKernel[] = "triple_kernel";
constexpr char kTripleRunner[] = R"PY(import os
channel = os.environ.get("MSPROF_SIM_LAUNCH_FILE")
if channel:  # the three launches grow: 8, 16 and 24 MiB moved into UB
    with open(channel, "a") as f:
        for i in (1, 2, 3):
            f.write("launch op=triple_kernel task=AI_VECTOR_CORE blocks=8 gm_to_ub=%d\n" % (i << 23))
)PY";

TEST(EndToEndTest, TheJobsLaunchSelectorPicksAmongATargetsLaunches) {
  Cluster c;
  c.Start("0-1");
  const auto op = c.dir.path() / "triple";
  std::filesystem::create_directories(op);
  std::ofstream(op / "test_triple.py") << kTripleRunner;
  auto submit = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"--format",    "json",      "submit", op.string(), "--op-name",
                                     kTripleKernel, "--warm-up", "0",      "--repeats", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = c.Cli(args);
    v1::Collection col;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out << r.err;
    EXPECT_EQ(col.jobs_size(), 1) << r.out << r.err;
    return col.jobs_size() == 1 ? col.jobs(0) : v1::Job();
  };

  const v1::Job unique = submit({"--quick"});
  EXPECT_EQ(unique.state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(unique.reason().find("found 3"), std::string::npos) << unique.reason();
  EXPECT_NE(unique.reason().find("--launch"), std::string::npos) << unique.reason();

  const v1::Job all = submit({"--quick", "--launch", "all"});
  ASSERT_EQ(all.state(), v1::JOB_STATE_SUCCEEDED) << all.reason();
  auto round = c.GetRound(all.round_id());
  ASSERT_TRUE(round.ok()) << round.status();
  const auto samples = round->evidence().duration().samples_us();
  ASSERT_EQ(samples.size(), 3) << "one sample per launch";
  EXPECT_LT(samples[0], samples[2]) << "in start order, the 8 MiB launch first";

  const v1::Job last = submit({"--quick", "--launch", "-1"});
  ASSERT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED) << last.reason();
  EXPECT_NEAR(last.kernel_time_us(), samples[2], samples[2] * 0.05);

  // Standard mode: seven metric runs, MemoryAccess (an A2 SoC has it), the sample run.
  const v1::Job first = submit({"--launch", "1"});
  ASSERT_EQ(first.state(), v1::JOB_STATE_SUCCEEDED) << first.reason();
  EXPECT_LT(first.kernel_time_us(), last.kernel_time_us());
  auto standard = c.GetRound(first.round_id());
  ASSERT_TRUE(standard.ok()) << standard.status();
  const v1::Evidence& e = standard->evidence();
  // One core time per duration sample, the launch used with its exact start,
  // and the MemoryAccess bytes the roofline needs (this test kernel declares no
  // fops, so its roofline stays insufficient_evidence naming only those).
  EXPECT_EQ(e.duration().core_samples_us_size(), e.duration().samples_us_size());
  ASSERT_EQ(e.launch().used_size(), 1);
  EXPECT_EQ(e.launch().selector(), "1");
  EXPECT_EQ(e.launch().total(), 3);
  EXPECT_GT(e.launch().used(0).start_ns(), 0);
  const std::string& json = e.evidence_json();
  EXPECT_NE(json.find("\"read_bytes\": "), std::string::npos);
  EXPECT_EQ(json.find("main memory bytes"), std::string::npos)
      << json.substr(json.find("\"roofline\""), 400);
  EXPECT_EQ(json.find("(MemoryAccess group;"), std::string::npos);

  auto bad = c.Cli({"submit", op.string(), "--op-name", kTripleKernel, "--launch", "first"});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;  // the server refused it
  EXPECT_NE(bad.err.find("operators[0].launch"), std::string::npos) << bad.err;
}

// One inplace_add_rmsnorm job, one repeat and no warm-up, in quick or
// standard mode: the CLI's result and the collection it printed.
std::pair<CommandResult, v1::Collection> SubmitOneRmsNorm(Cluster& c, bool quick) {
  std::vector<std::string> args = {"--format",  "json",
                                   "submit",    Operator("inplace_add_rmsnorm"),
                                   "--op-name", kRmsNormKernel,
                                   "--warm-up", "0",
                                   "--repeats", "1"};
  if (quick) args.push_back("--quick");
  auto r = c.Cli(args);
  v1::Collection col;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &col).ok()) << r.out << r.err;
  return {r, col};
}

// Issue 15: on a host whose CANN writes the tree before 8.0 (device_<id>/summary,
// op_summary_0_1_1_<ts>.csv), the agent's standard and quick jobs succeed.
TEST(EndToEndTest, AHostWritingThePre80TreeRunsBothModes) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_LAYOUT", "cann7"}});
  ASSERT_NE(c.agent, nullptr);
  for (const std::string mode : {"quick", "standard"}) {
    auto [r, col] = SubmitOneRmsNorm(c, mode == "quick");
    EXPECT_EQ(r.exit_code, 0) << mode << ": " << r.out << r.err << c.agent->Log();
    ASSERT_EQ(col.jobs_size(), 1);
    EXPECT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << mode << ": " << col.jobs(0).reason();
    EXPECT_GT(col.jobs(0).kernel_time_us(), 0.5) << mode;
  }
}

// Issue 15: on a host whose captures arrive as torch_npu exports
// (*_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv), a standard job
// succeeds through the layout detector; a quick job, which times from
// task_time, fails saying so (torch_npu writes no task_time).
TEST(EndToEndTest, AHostWritingTorchNpuExportsRunsStandardMode) {
  Cluster c;
  c.Start("");
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_LAYOUT", "torch_npu"}});
  ASSERT_NE(c.agent, nullptr);
  for (const std::string mode : {"standard", "quick"}) {
    auto [r, col] = SubmitOneRmsNorm(c, mode == "quick");
    ASSERT_EQ(col.jobs_size(), 1);
    if (mode == "standard") {
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err << c.agent->Log();
      EXPECT_EQ(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED) << col.jobs(0).reason();
      EXPECT_GT(col.jobs(0).kernel_time_us(), 0.5);
    } else {
      EXPECT_NE(col.jobs(0).state(), v1::JOB_STATE_SUCCEEDED);
      EXPECT_NE(col.jobs(0).reason().find("task_time"), std::string::npos) << col.jobs(0).reason();
    }
  }
}

TEST(EndToEndTest, BadSubmissionNamesTheFieldAndQueuesNothing) {
  Cluster c;
  c.Start("");
  auto r = c.Cli({"submit", "--quick", Operator("inplace_add_rmsnorm"), "--max-jobs", "9",
                  "--priority", "50", "--no-wait"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("INVALID_ARGUMENT"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.max_concurrent_jobs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.priority"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.operators[0].op_name"), std::string::npos) << r.err;
  auto list = c.Cli({"--format", "json", "list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_EQ(list.out.find("\"id\""), std::string::npos) << list.out;
}

TEST(EndToEndTest, UsageErrorsExitTwo) {
  Cluster c;
  c.Start("");
  EXPECT_EQ(c.Cli({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(c.Cli({"--format", "yaml", "list"}).exit_code, 2);
  auto missing = c.Cli({"get", "c-000000000000"});
  EXPECT_EQ(missing.exit_code, 6);  // not found (docs/api.md exit codes)
  EXPECT_NE(missing.err.find("NOT_FOUND"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace npuperf::testing
