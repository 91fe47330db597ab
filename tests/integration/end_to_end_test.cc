// The walking skeleton through the real binaries: npuperf submit -> server ->
// agent (flock, msprof-sim, task_time parser) -> server store -> queries.
#include <fstream>

#include "common/status_util.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/query_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

constexpr char kRmsNormKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

std::string Operator(const std::string& name) {
  return (SourceDir() / "examples/ops" / name).string();
}

TEST(EndToEndTest, QuickSubmitStoresTheKernelTime) {
  Cluster c;
  c.Start("0-3");
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
  EXPECT_NE(r.err.find("timing_run"), std::string::npos) << "no progress line: " << r.err;

  // The stored round holds the three repeat samples the agent parsed.
  auto channel = grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials());
  auto queries = v1::QueryService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  v1::GetRoundRequest req;
  req.set_round_id(job.round_id());
  v1::GetRoundResponse resp;
  ASSERT_TRUE(queries->GetRound(&ctx, req, &resp).ok());
  const v1::Evidence& e = resp.round().evidence();
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
