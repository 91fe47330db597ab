#include "tests/integration/cluster.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status_util.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "npuperf/v1/query_service.grpc.pb.h"

namespace npuperf::testing {

bool Terminal(const v1::Collection& c) {
  return c.state() == v1::COLLECTION_STATE_SUCCEEDED || c.state() == v1::COLLECTION_STATE_FAILED ||
         c.state() == v1::COLLECTION_STATE_CANCELLED;
}

double AgentCallsRefused(const std::string& metrics, const std::string& method,
                         const std::string& reason) {
  const std::string key = absl::StrCat("npuperf_server_agent_calls_refused_total{method=\"", method,
                                       "\",reason=\"", reason, "\"} ");
  const auto at = metrics.find(key);
  return at == std::string::npos ? 0 : std::stod(metrics.substr(at + key.size()));
}

std::vector<std::string> Cluster::ServerArgv(const std::string& listen) const {
  std::vector<std::string> argv = server_wrapper;
  argv.insert(argv.end(), {(BuildDir() / "bin/npuperf-server").string(), "--listen", listen,
                           "--metrics-listen", "127.0.0.1:0", "--db",
                           db.empty() ? "sqlite:" + (dir.path() / "server.db").string() : db});
  argv.insert(argv.end(), server_flags_.begin(), server_flags_.end());
  // Authentication is on by default; tests without a tokens file run the
  // loopback development mode.
  if (insecure_no_auth && std::find(argv.begin(), argv.end(), "--tokens-file") == argv.end()) {
    argv.push_back("--insecure-no-auth");
  }
  return argv;
}

void Cluster::Start(const std::string& devices, const std::vector<std::string>& server_flags) {
  server_flags_ = server_flags;
  absl::StatusOr<std::string> line = absl::UnknownError("not started");
  // A port found free may be taken before the server binds it (tests run
  // in parallel): then another.
  for (int tries = 0; tries < 3 && !line.ok(); ++tries) {
    if (server != nullptr) server->Stop();
    auto s = Process::Start(ServerArgv(absl::StrCat("127.0.0.1:", RestartablePort())),
                            dir.path() / "server.log");
    ASSERT_TRUE(s.ok()) << s.status();
    server = *std::move(s);
    line = server->WaitForLine("listening on", std::chrono::seconds(tries == 2 ? 20 : 5));
  }
  ASSERT_TRUE(line.ok()) << line.status();
  address = AddressAfter(*line, "listening on");
  metrics_address = AddressAfter(*line, "metrics");
  if (!devices.empty()) agent = StartAgent(devices, "agent");
}

std::unique_ptr<Process> Cluster::StartReplica(const std::string& name,
                                               std::string* replica_address) {
  auto s = Process::Start(ServerArgv("127.0.0.1:0"), dir.path() / (name + ".log"));
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  auto line = (*s)->WaitForLine("listening on", std::chrono::seconds(20));
  EXPECT_TRUE(line.ok()) << line.status();
  if (line.ok()) *replica_address = AddressAfter(*line, "listening on");
  return *std::move(s);
}

void Cluster::RestartServer(const std::vector<std::string>& server_flags) {
  server_flags_ = server_flags;
  auto s = Process::Start(ServerArgv(address), dir.path() / "server2.log");
  ASSERT_TRUE(s.ok()) << s.status();
  server = *std::move(s);
  auto line = server->WaitForLine("listening on", std::chrono::seconds(20));
  ASSERT_TRUE(line.ok()) << line.status();
}

v1::Collection Cluster::Get(const std::string& id) {
  auto r = Cli({"--format", "json", "get", id});
  v1::Collection c;
  if (r.exit_code == 0) (void)google::protobuf::util::JsonStringToMessage(r.out, &c);
  return c;
}

v1::Collection Cluster::WaitFor(const std::string& id,
                                const std::function<bool(const v1::Collection&)>& pred,
                                std::chrono::seconds timeout) {
  const auto deadline = WallClock().MonotonicNow() + timeout;
  v1::Collection c;
  while (WallClock().MonotonicNow() < deadline) {
    c = Get(id);
    if (pred(c)) return c;
    WallClock().SleepFor(std::chrono::milliseconds(100));
  }
  return c;
}

absl::StatusOr<v1::Round> Cluster::GetRound(int64_t round_id) const {
  auto queries =
      v1::QueryService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(WallClock().SystemNow() + std::chrono::seconds(10));
  v1::GetRoundRequest req;
  req.set_round_id(round_id);
  v1::GetRoundResponse resp;
  if (absl::Status s = FromGrpcStatus(queries->GetRound(&ctx, req, &resp)); !s.ok()) return s;
  return resp.round();
}

std::unique_ptr<Process> Cluster::StartAgent(const std::string& devices, const std::string& name,
                                             const std::map<std::string, std::string>& env,
                                             const std::string& server_address) {
  auto a = LaunchAgent(devices, name, env, server_address);
  if (a == nullptr) return nullptr;
  auto line = a->WaitForLine("registered as", std::chrono::seconds(20));
  EXPECT_TRUE(line.ok()) << line.status();
  return a;
}

std::unique_ptr<Process> Cluster::LaunchAgent(const std::string& devices, const std::string& name,
                                              const std::map<std::string, std::string>& extra_env,
                                              const std::string& server_address) {
  const auto work = dir.path() / name;
  std::map<std::string, std::string> env = {
      {"MSPROF_SIM_STATE_DIR", (dir.path() / "sim-state").string()},
      {"MSPROF_SIM_CONFLICT_LOG", (dir.path() / "conflicts.log").string()}};
  for (const auto& [k, v] : extra_env) env[k] = v;
  std::vector<std::string> argv = {(BuildDir() / "bin/npuperf-agent").string(),
                                   "--server",
                                   server_address.empty() ? address : server_address,
                                   "--devices",
                                   devices,
                                   "--msprof",
                                   (BuildDir() / "sim-bin/msprof").string(),
                                   "--lock-dir",
                                   (dir.path() / "locks").string(),
                                   "--work-dir",
                                   work.string(),
                                   "--metrics-listen",
                                   "127.0.0.1:0"};
  argv.insert(argv.end(), agent_flags.begin(), agent_flags.end());
  auto a = Process::Start(argv, dir.path() / (name + ".log"), env);
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return nullptr;
  return *std::move(a);
}

CommandResult Cluster::Cli(std::vector<std::string> args, const std::string& server_address) {
  if (!cli_token.empty()) args.insert(args.begin(), {"--token", cli_token});
  args.insert(args.begin(), cli_flags.begin(), cli_flags.end());
  args.insert(args.begin(), {(BuildDir() / "bin/npuperf").string(), "--server",
                             server_address.empty() ? address : server_address});
  return RunCommand(args, dir.path());
}

}  // namespace npuperf::testing
