#include "tests/integration/cluster.h"

#include "gtest/gtest.h"

namespace npuperf::testing {

void Cluster::Start(const std::string& devices, const std::vector<std::string>& server_flags) {
  std::vector<std::string> argv = {(BuildDir() / "bin/npuperf-server").string(), "--listen",
                                   "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--db",
                                   "sqlite:" + (dir.path() / "server.db").string()};
  argv.insert(argv.end(), server_flags.begin(), server_flags.end());
  auto s = Process::Start(argv, dir.path() / "server.log");
  ASSERT_TRUE(s.ok()) << s.status();
  server = *std::move(s);
  auto line = server->WaitForLine("listening on", std::chrono::seconds(20));
  ASSERT_TRUE(line.ok()) << line.status();
  address = AddressAfter(*line, "listening on");
  metrics_address = AddressAfter(*line, "metrics");
  if (!devices.empty()) agent = StartAgent(devices, "agent");
}

std::unique_ptr<Process> Cluster::StartAgent(const std::string& devices, const std::string& name) {
  const auto work = dir.path() / name;
  auto a = Process::Start(
      {(BuildDir() / "bin/npuperf-agent").string(), "--server", address, "--devices", devices,
       "--msprof", (BuildDir() / "sim-bin/msprof").string(), "--lock-dir",
       (dir.path() / "locks").string(), "--work-dir", work.string(), "--metrics-listen", "127.0.0.1:0"},
      dir.path() / (name + ".log"),
      {{"MSPROF_SIM_STATE_DIR", (dir.path() / "sim-state").string()},
       {"MSPROF_SIM_CONFLICT_LOG", (dir.path() / "conflicts.log").string()}});
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return nullptr;
  auto line = (*a)->WaitForLine("registered as", std::chrono::seconds(20));
  EXPECT_TRUE(line.ok()) << line.status();
  return *std::move(a);
}

CommandResult Cluster::Cli(std::vector<std::string> args) {
  args.insert(args.begin(), {(BuildDir() / "bin/npuperf").string(), "--server", address});
  return RunCommand(args, dir.path());
}

}  // namespace npuperf::testing
