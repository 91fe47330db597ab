// The command lines of the real binaries (issue 17): settings flags after
// the command, `help` and a mistyped command (exit 2 with the commands and a
// suggestion), bad flags on npuperf-server and npuperf-agent exiting 2 with a
// message naming the flag instead of CLI11's own 105..114, the daemons'
// NPUPERF_* variables and --config files, and watch outliving a restart.
#include <fstream>
#include <thread>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/cluster.h"

namespace npuperf::testing {
namespace {

CommandResult RunTool(const std::string& program, const std::vector<std::string>& args) {
  TempDir dir;
  std::vector<std::string> argv = {(BuildDir() / "bin" / program).string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, dir.path(), {}, std::chrono::seconds(20));
}

TEST(CliUsageTest, SettingFlagsComeAnywhereOnTheLine) {
  Cluster c;
  c.Start(/*devices=*/"");
  // Cluster::Cli puts --server first; these go after the command.
  auto r = c.Cli({"list", "--format", "json", "--timeout", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out, nullptr, false).is_object()) << r.out;
  auto agents = RunCommand(
      {(BuildDir() / "bin/npuperf").string(), "agents", "--server", c.address, "--format", "json"},
      c.dir.path());
  ASSERT_EQ(agents.exit_code, 0) << agents.err;
  EXPECT_TRUE(nlohmann::json::parse(agents.out, nullptr, false).is_object()) << agents.out;
}

TEST(CliUsageTest, AMistypedCommandListsTheCommandsAndSuggests) {
  auto r = RunTool("npuperf", {"sumbit", "ops/add"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'sumbit' (did you mean 'submit'?)"), std::string::npos)
      << r.err;
  for (const char* command : {"submit", "watch", "compare", "summarize", "help"}) {
    EXPECT_NE(r.err.find(std::string("\n  ") + command + " "), std::string::npos) << command;
  }
  auto none = RunTool("npuperf", {});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("a command is required"), std::string::npos) << none.err;
}

TEST(CliUsageTest, HelpPrintsTheCommandsOrOneCommandsFlags) {
  auto all = RunTool("npuperf", {"help"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("submit"), std::string::npos) << all.out;
  auto submit = RunTool("npuperf", {"help", "submit"});
  EXPECT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("--no-wait"), std::string::npos) << submit.out;
}

TEST(CliUsageTest, BadFlagsExitTwoNamingTheFlag) {
  struct Case {
    std::string program;
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {"npuperf", {"list", "--bogus"}, "--bogus"},
      // Read up to one byte past the server's 64 KiB, never to the end of /dev/zero.
      {"npuperf", {"timeline", "5", "--tile-dag-attestation", "/dev/zero"}, "over 64 KiB"},
      {"npuperf", {"timeline", "5", "--case", "c1"}, "--case goes with a collection id"},
      {"npuperf-server", {"--bogus"}, "--bogus"},    // CLI11: 109
      {"npuperf-server", {"--listen"}, "--listen"},  // 114
      {"npuperf-server", {"--max-jobs-per-collection", "0"}, "--max-jobs-per-collection"},  // 105
      {"npuperf-server", {"migrate"}, "--db"},                                              // 106
      {"npuperf-server", {"--lease-ttl-ms", "0"}, "--lease-ttl-ms"},
      {"npuperf-server", {"--heartbeat-ms", "-5"}, "--heartbeat-ms"},
      {"npuperf-server", {"--lease-ttl-ms", "3000", "--heartbeat-ms", "1001"}, "a third of"},
      {"npuperf-agent", {"--bogus"}, "--bogus"},
      {"npuperf-agent", {"--devices", "0"}, "--server"},                 // 106
      {"npuperf-agent", {"--server", "h:1", "--devices"}, "--devices"},  // 114
  };
  for (const Case& c : cases) {
    auto r = RunTool(c.program, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.program << " " << c.args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(c.named), std::string::npos) << c.program << ": " << r.err;
  }
}

constexpr char kKernel[] = "_Z26inplace_add_rmsnorm_kernelPDhS_S_S_ii";

std::string Operator() { return (SourceDir() / "examples/ops/inplace_add_rmsnorm").string(); }

// The server and the agent take every flag from NPUPERF_* and a TOML file:
// here nothing but --config is on their command lines.
TEST(CliUsageTest, DaemonsReadTheEnvironmentAndAConfigFile) {
  Cluster c;
  const auto server_toml = c.dir.path() / "server.toml";
  std::ofstream(server_toml) << "db = \"sqlite:" << (c.dir.path() / "s.db").string()
                             << "\"\ninsecure-no-auth = true\nlisten = \"127.0.0.1:1\"\n";
  auto server = Process::Start(
      {(BuildDir() / "bin/npuperf-server").string(), "--config", server_toml.string()},
      c.dir.path() / "server.log",
      {{"NPUPERF_LISTEN", "127.0.0.1:0"},  // wins over the file
       {"NPUPERF_METRICS_LISTEN", "127.0.0.1:0"}});
  ASSERT_TRUE(server.ok()) << server.status();
  auto line = (*server)->WaitForLine("listening on", std::chrono::seconds(20));
  ASSERT_TRUE(line.ok()) << line.status() << (*server)->Log();
  const std::string address = AddressAfter(*line, "listening on");
  EXPECT_NE(address, "127.0.0.1:1");
  const auto agent_toml = c.dir.path() / "agent.toml";
  std::ofstream(agent_toml) << "server = \"" << address << "\"\ndevices = \"0\"\nmsprof = \""
                            << (BuildDir() / "sim-bin/msprof").string() << "\"\nlock-dir = \""
                            << (c.dir.path() / "locks").string() << "\"\nwork-dir = \""
                            << (c.dir.path() / "work").string()
                            << "\"\nmetrics-listen = \"127.0.0.1:0\"\n";
  auto agent =
      Process::Start({(BuildDir() / "bin/npuperf-agent").string()}, c.dir.path() / "agent.log",
                     {{"NPUPERF_AGENT_CONFIG", agent_toml.string()},
                      {"NPUPERF_RUN_AS_SELF", "true"},
                      {"MSPROF_SIM_STATE_DIR", (c.dir.path() / "sim-state").string()}});
  ASSERT_TRUE(agent.ok()) << agent.status();
  auto registered = (*agent)->WaitForLine("registered as", std::chrono::seconds(20));
  EXPECT_TRUE(registered.ok()) << registered.status() << (*agent)->Log();
  // A key the agent does not know is refused by name, exit 2.
  const auto bad = c.dir.path() / "bad.toml";
  std::ofstream(bad) << "devics = \"0\"\n";
  auto r = RunTool("npuperf-agent", {"--config", bad.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("devics"), std::string::npos) << r.err;
}

// A server restart under `npuperf watch`: the watch reconnects and follows
// the collection to its end (exit 0) instead of exiting 5.
TEST(CliUsageTest, WatchReconnectsAfterAServerRestart) {
  Cluster c;
  c.Start(/*devices=*/"");  // nothing runs the job until an agent comes
  auto submit = c.Cli(
      {"--format", "json", "submit", "--quick", Operator(), "--op-name", kKernel, "--no-wait"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  v1::Collection queued;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(submit.out, &queued).ok()) << submit.out;
  CommandResult watch;
  std::thread watcher([&] {
    watch = RunCommand({(BuildDir() / "bin/npuperf").string(), "--server", c.address, "watch",
                        queued.id(), "--reconnect-for", "120"},
                       c.dir.path(), {}, std::chrono::seconds(300));
  });
  WallClock().SleepFor(std::chrono::seconds(1));  // the watch is open
  c.server->Stop();
  WallClock().SleepFor(std::chrono::seconds(2));  // and fails at least once meanwhile
  c.RestartServer();
  c.agent = c.StartAgent("0", "agent");
  watcher.join();
  EXPECT_EQ(watch.exit_code, 0) << watch.err;
  EXPECT_NE(watch.err.find("UNAVAILABLE"), std::string::npos) << watch.err;
  EXPECT_NE(watch.err.find("; reconnecting in "), std::string::npos) << watch.err;
  EXPECT_NE(watch.out.find("succeeded"), std::string::npos) << watch.out;
}

}  // namespace
}  // namespace npuperf::testing
