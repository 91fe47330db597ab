// npuperf-agent: one per NPU host. Wires the flock device locker, the
// subprocess runner, the server channel and the agent loop.
//
//   npuperf-agent --server HOST:PORT --token-file F --devices 0-7
//                 [--soc SOC | --soc-map 0-3=Ascend910B2,4-7=Ascend950PR_9589]
//                 --msprof PATH --lock-dir DIR --work-dir DIR --metrics-listen HOST:PORT
//                 [--run-as USER] [--label k=v]...
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/agent.h"
#include "agent/flock_device_lock.h"
#include "agent/http_endpoint.h"
#include "agent/job_environment.h"
#include "agent/run_as.h"
#include "agent/subprocess_runner.h"
#include "common/clock.h"
#include "common/device_range.h"
#include "common/log.h"

namespace npuperf::agent {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

// First line printed by `<program> --version`, empty when it fails.
std::string VersionOf(const std::string& program) {
  std::string cmd = "'" + program + "' --version 2>/dev/null";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return "";
  char buf[256] = {0};
  std::string out = std::fgets(buf, sizeof(buf), f) != nullptr ? buf : "";
  ::pclose(f);
  return std::string(absl::StripAsciiWhitespace(out));
}

int Fail(const std::string& message) {
  std::cerr << "npuperf-agent: " << message << "\n";
  return 2;
}

std::string HostName() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace
}  // namespace npuperf::agent

int main(int argc, char** argv) {
  using namespace npuperf;
  using namespace npuperf::agent;
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::string server, token_file, devices_text, soc = "Ascend910B2", soc_map, lock_dir = "/run/npuperf/locks";
  std::string metrics_listen = "127.0.0.1:9465", msprof = "msprof", python = "python3";
  std::vector<std::string> labels;
  AgentOptions options;
  std::string work_dir = options.work_dir.string();
  CLI::App app{"npuperf-agent: leases profiling jobs for this host's NPU devices and runs msprof"};
  app.add_option("--server", server, "npuperf-server HOST:PORT")->required();
  app.add_option("--token-file", token_file, "file holding this agent's bearer token");
  std::string tls_ca;
  app.add_option("--tls-ca", tls_ca, "CA certificate (PEM) of a TLS server (env NPUPERF_TLS_CA)")
      ->envname("NPUPERF_TLS_CA")->check(CLI::ExistingFile);
  app.add_option("--devices", devices_text, "physical device ids, e.g. 0-7")->required();
  auto* soc_opt = app.add_option("--soc", soc, "SoC of every device")->capture_default_str();
  app.add_option("--soc-map", soc_map, "per-device SoC, e.g. 0-3=Ascend910B2,4-7=Ascend950PR_9589")
      ->excludes(soc_opt);
  app.add_option("--msprof", msprof, "msprof binary (e.g. build/sim-bin/msprof)")->capture_default_str();
  app.add_option("--python", python, "interpreter for *.py runners")->capture_default_str();
  app.add_option("--lock-dir", lock_dir, "lock directory, or a path template with {id}")->capture_default_str();
  app.add_option("--work-dir", work_dir, "bundle cache, scratch and result spool")->capture_default_str();
  app.add_option("--metrics-listen", metrics_listen, "Prometheus HOST:PORT (port 0: pick one)")
      ->capture_default_str();
  app.add_option("--label", labels, "host label key=value (repeatable)");
  std::string run_as;
  app.add_option("--run-as", run_as, "run runners and msprof as this unprivileged user (agent must be root)")
      ->envname("NPUPERF_RUN_AS");
  CLI11_PARSE(app, argc, argv);

  auto ids = ParseDeviceRange(devices_text);
  if (!ids.ok()) return Fail(absl::StrCat("--devices: ", ids.status().message()));
  options.devices = *ids;
  if (!soc_map.empty()) {
    auto map = ParseDeviceMap(soc_map);
    if (!map.ok()) return Fail(absl::StrCat("--soc-map: ", map.status().message()));
    for (int d : options.devices) {
      if (!map->contains(d)) return Fail(absl::StrCat("--soc-map names no SoC for device ", d));
      options.socs[d] = map->at(d);
    }
  } else {
    for (int d : options.devices) options.socs[d] = soc;
  }
  for (const auto& l : labels) {
    std::vector<std::string> kv = absl::StrSplit(l, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) return Fail(absl::StrCat("--label '", l, "': want key=value"));
    options.labels[kv[0]] = kv[1];
  }
  std::string token;
  if (!token_file.empty()) {
    token = ReadFirstLine(token_file);
    if (token.empty()) return Fail(absl::StrCat("--token-file ", token_file, " holds no token"));
  }
  // Children run in per-job directories: every path handed down must be absolute.
  options.work_dir = std::filesystem::absolute(work_dir);
  if (msprof.find('/') != std::string::npos) msprof = std::filesystem::absolute(msprof).string();
  lock_dir = std::filesystem::absolute(lock_dir).string();
  options.host = HostName();
  options.boot_id = ReadFirstLine("/proc/sys/kernel/random/boot_id");
  absl::BitGen gen;
  options.instance_id = absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));

  JobRunnerOptions job_options;
  job_options.msprof = msprof;
  job_options.python = python;
  job_options.agent_env = CurrentEnvironment();
  job_options.host = options.host;
  job_options.agent_version = options.version;
  job_options.msprof_version = VersionOf(msprof);
  job_options.run_as = run_as;
  // Refuse to start rather than lease jobs that would all fail.
  if (!run_as.empty()) {
    auto user = ResolveRunAs(run_as, ::geteuid());
    if (!user.ok()) return Fail(std::string(user.status().message()));
  }

  auto registry = std::make_shared<prometheus::Registry>();
  AgentMetrics metrics(*registry);
  FlockDeviceLocker locker(lock_dir);
  RealClock clock;
  SubprocessRunner runner(clock);
  auto channel = ServerChannel::Connect(server, token, tls_ca, clock);
  Agent agent(*channel, locker, runner, metrics, clock, options, job_options);
  auto http = HttpEndpoint::Start(metrics_listen, registry,
                                  [&agent, &clock] { return DecideHealth(agent.Health(), clock.MonotonicNow()); });
  if (!http.ok()) return Fail(absl::StrCat("--metrics-listen ", metrics_listen, ": ", http.status().message()));
  LogInfo("agent", absl::StrCat("metrics on ", metrics_listen.substr(0, metrics_listen.rfind(':')), ":",
                                (*http)->port(), " (/metrics, /healthz), devices ",
                                FormatDeviceRange(options.devices), ", server ", server, ", msprof ",
                                msprof, job_options.msprof_version.empty() ? "" : " (" + job_options.msprof_version + ")"));
  std::atomic<bool> stop{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    LogInfo("agent", absl::StrCat("signal ", sig, ": stopping"));
    stop = true;
    agent.Stop();
  });
  agent.Run(stop);
  if (!stop) ::kill(::getpid(), SIGTERM);
  signal_thread.join();
  LogInfo("agent", "stopped");
  return 0;
}
