// A hostile agent through the real binaries (docs/security.md, "Agent
// identity"): the server with tokens for team alpha and agents h1 and h2; the
// real agent runs as h1, and a gRPC client holding h2's token tries to report
// for h1's running job, lease in h1's name, heartbeat for it and register as
// h1. Each try is refused with its code, nothing is stored, the refusals are
// counted, and the real job still succeeds with the real agent's evidence.
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/agent_service.grpc.pb.h"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

using std::chrono::seconds;

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";
constexpr char kTeamToken[] = "npt_team_alpha_0123456789abcdef";
constexpr char kH1Token[] = "npt_agent_h1_0123456789abcdef";
constexpr char kH2Token[] = "npt_agent_h2_0123456789abcdef";

// AgentService calls with h2's token.
class Intruder {
 public:
  explicit Intruder(const std::string& address)
      : stub_(v1::AgentService::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {}

  grpc::Status Register(const std::string& host, v1::RegisterAgentResponse* resp) {
    v1::RegisterAgentRequest req;
    req.set_host(host);
    req.set_boot_id("intruder-boot");
    req.set_instance_id("intruder");
    auto* d = req.add_devices();
    d->set_device_id(0);
    d->set_soc("Ascend910B2");
    d->set_state(v1::DEVICE_STATE_IDLE);
    auto ctx = Context();
    return stub_->RegisterAgent(ctx.get(), req, resp);
  }
  grpc::Status Result(const std::string& agent_id, const v1::Job& job, int64_t token) {
    v1::ReportResultRequest req;
    req.set_agent_id(agent_id);
    req.set_job_id(job.id());
    req.set_attempt(job.attempt());
    req.set_fencing_token(token);  // the attempt number: a guess that used to work
    req.set_update_uuid(absl::StrCat("forged-", agent_id, "-", token));
    req.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
    req.mutable_evidence()->mutable_duration()->add_samples_us(0.001);
    req.mutable_evidence()->mutable_duration()->set_aggregate_us(0.001);
    req.mutable_evidence()->mutable_bound()->set_label("forged");
    v1::ReportResultResponse resp;
    auto ctx = Context();
    return stub_->ReportResult(ctx.get(), req, &resp);
  }
  grpc::Status Progress(const std::string& agent_id, const v1::Job& job) {
    v1::ReportProgressRequest req;
    req.set_agent_id(agent_id);
    req.set_job_id(job.id());
    req.set_attempt(job.attempt());
    req.set_fencing_token(job.attempt());
    req.mutable_progress()->set_phase(v1::JOB_PHASE_UPLOADING);
    v1::ReportProgressResponse resp;
    auto ctx = Context();
    return stub_->ReportProgress(ctx.get(), req, &resp);
  }
  grpc::Status Lease(const std::string& agent_id, int device) {
    v1::LeaseJobRequest req;
    req.set_agent_id(agent_id);
    auto* d = req.add_free_devices();
    d->set_device_id(device);
    d->set_soc("Ascend910B2");
    v1::LeaseJobResponse resp;
    auto ctx = Context();
    return stub_->LeaseJob(ctx.get(), req, &resp);
  }
  // One heartbeat marking device 0 unhealthy; the stream's final status.
  grpc::Status Heartbeat(const std::string& agent_id) {
    auto ctx = Context();
    auto stream = stub_->AgentSession(ctx.get());
    v1::AgentSessionRequest req;
    req.mutable_heartbeat()->set_agent_id(agent_id);
    auto* d = req.mutable_heartbeat()->add_devices();
    d->set_device_id(0);
    d->set_soc("Ascend910B2");
    d->set_state(v1::DEVICE_STATE_UNHEALTHY);
    stream->Write(req);
    stream->WritesDone();
    v1::AgentSessionResponse resp;
    while (stream->Read(&resp)) {
    }
    return stream->Finish();
  }

 private:
  std::unique_ptr<grpc::ClientContext> Context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("authorization", absl::StrCat("Bearer ", kH2Token));
    ctx->set_deadline(WallClock().SystemNow() + seconds(10));
    return ctx;
  }
  std::unique_ptr<v1::AgentService::Stub> stub_;
};

TEST(HostileAgentTest, AnotherAgentsTokenCannotForgeLeaseOrHeartbeatForItsJob) {
  Cluster c;
  const auto tokens = c.dir.path() / "tokens";
  std::ofstream(tokens) << "team alpha " << Sha256Hex(kTeamToken) << "\nagent h1 "
                        << Sha256Hex(kH1Token) << "\nagent h2 " << Sha256Hex(kH2Token) << "\n";
  std::ofstream(c.dir.path() / "h1.token") << kH1Token << "\n";
  // The agent refuses a token file others can read.
  std::filesystem::permissions(c.dir.path() / "h1.token", std::filesystem::perms::owner_read |
                                                              std::filesystem::perms::owner_write);
  c.cli_token = kTeamToken;
  c.agent_flags.insert(c.agent_flags.end(),
                       {"--token-file", (c.dir.path() / "h1.token").string(), "--host", "h1"});
  c.Start("", {"--tokens-file", tokens.string(), "--heartbeat-ms", "300"});
  // The job's one timing run hangs 6 s: time for the intruder to try everything.
  c.agent = c.StartAgent("0", "agent", {{"MSPROF_SIM_FAULT", "hang:6@first=1"}});
  ASSERT_NE(c.agent, nullptr);
  auto submit = c.Cli({"--format", "json", "submit", "--quick", "--repeats", "1",
                       (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(), "--op-name",
                       kKernel, "--no-wait"});
  v1::Collection submitted;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(submit.out, &submitted).ok())
      << submit.out << submit.err;
  auto running = c.WaitFor(
      submitted.id(),
      [](const v1::Collection& col) {
        return col.jobs_size() == 1 && col.jobs(0).state() == v1::JOB_STATE_RUNNING;
      },
      seconds(60));
  ASSERT_EQ(running.jobs(0).state(), v1::JOB_STATE_RUNNING) << running.DebugString();
  const v1::Job job = running.jobs(0);
  const std::string victim = job.placement().agent_id();

  Intruder h2(c.address);
  // Reports in the victim's name, and in its own name for the victim's lease.
  EXPECT_EQ(h2.Result(victim, job, job.attempt()).error_code(), grpc::PERMISSION_DENIED);
  EXPECT_EQ(h2.Progress(victim, job).error_code(), grpc::PERMISSION_DENIED);
  v1::RegisterAgentResponse own;
  ASSERT_TRUE(h2.Register("h2", &own).ok());
  for (int64_t token = 1; token <= 3; ++token) {
    EXPECT_EQ(h2.Result(own.agent_id(), job, token).error_code(),
              token == job.attempt() ? grpc::PERMISSION_DENIED : grpc::FAILED_PRECONDITION)
        << token;
  }
  EXPECT_EQ(h2.Progress(own.agent_id(), job).error_code(), grpc::PERMISSION_DENIED);
  // Leases and heartbeats in the victim's name, devices it never registered,
  // a registration as h1.
  EXPECT_EQ(h2.Lease(victim, 0).error_code(), grpc::PERMISSION_DENIED);
  EXPECT_EQ(h2.Heartbeat(victim).error_code(), grpc::PERMISSION_DENIED);
  EXPECT_EQ(h2.Lease(own.agent_id(), 900).error_code(), grpc::INVALID_ARGUMENT);
  v1::RegisterAgentResponse as_h1;
  EXPECT_EQ(h2.Register("h1", &as_h1).error_code(), grpc::PERMISSION_DENIED);

  // Nothing stored: the job still runs, attempt 1, on the victim; no round.
  const v1::Collection during = c.Get(submitted.id());
  ASSERT_EQ(during.jobs_size(), 1);
  EXPECT_EQ(during.jobs(0).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(during.jobs(0).attempt(), 1);
  EXPECT_EQ(during.jobs(0).round_id(), 0);
  // A team sees the devices and its own job, not the hosts.
  auto agents = c.Cli({"--format", "json", "agents"});
  EXPECT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_EQ(agents.out.find("\"h1\""), std::string::npos) << agents.out;
  EXPECT_NE(agents.out.find("Ascend910B2"), std::string::npos) << agents.out;

  // The real job succeeds with the real agent's evidence.
  const v1::Collection done = c.WaitFor(submitted.id(), Terminal, seconds(120));
  ASSERT_EQ(done.state(), v1::COLLECTION_STATE_SUCCEEDED) << done.DebugString() << "\nagent log:\n"
                                                          << c.agent->Log();
  EXPECT_EQ(done.jobs(0).attempt(), 1);
  EXPECT_EQ(done.jobs(0).placement().agent_id(), victim);
  EXPECT_GT(done.jobs(0).kernel_time_us(), 0.5);
  EXPECT_EQ(c.agent->Log().find("lease lost"), std::string::npos) << c.agent->Log();

  auto metrics = HttpGet(c.metrics_address, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(AgentCallsRefused(*metrics, "ReportResult", "foreign_agent"), 2) << *metrics;
  EXPECT_EQ(AgentCallsRefused(*metrics, "ReportResult", "stale_lease"), 2);
  EXPECT_EQ(AgentCallsRefused(*metrics, "ReportProgress", "foreign_agent"), 2);
  EXPECT_EQ(AgentCallsRefused(*metrics, "LeaseJob", "foreign_agent"), 1);
  EXPECT_EQ(AgentCallsRefused(*metrics, "LeaseJob", "unregistered_device"), 1);
  EXPECT_EQ(AgentCallsRefused(*metrics, "AgentSession", "foreign_agent"), 1);
  EXPECT_EQ(AgentCallsRefused(*metrics, "RegisterAgent", "wrong_host"), 1);
}

}  // namespace
}  // namespace npuperf::testing
