// npuperf-agent: one per NPU host. Wires the flock device locker, the
// subprocess runner, the server channel and the agent loop.
//
//   npuperf-agent --server HOST:PORT --token-file F [--host NAME] --devices 0-7
//                 [--soc SOC | --soc-map 0-3=Ascend910B2,4-7=Ascend950PR_9589]
//                 --msprof PATH --lock-dir DIR --work-dir DIR --metrics-listen HOST:PORT
//                 (--run-as-pool USERS | --run-as USER | --run-as-self)
//                 [--cgroup auto|none|DIR] [--job-pids-max N] [--job-memory-max BYTES]
//                 [--label k=v]... [--tls-ca PEM [--tls-cert PEM --tls-key PEM]] [--npu-smi PATH]
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "agent/agent.h"
#include "agent/channel_tls.h"
#include "agent/constants.h"
#include "agent/containment.h"
#include "agent/flock_device_lock.h"
#include "agent/host_setup.h"
#include "agent/http_endpoint.h"
#include "agent/job_environment.h"
#include "agent/run_as.h"
#include "agent/subprocess_runner.h"
#include "common/bundle_tar.h"
#include "common/cli_docs.h"
#include "common/cli_environment.h"
#include "common/clock.h"
#include "common/device_range.h"
#include "common/grpc_log.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/version.h"

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

// The command line as given (ParseCommandLine checks and resolves it).
struct Flags {
  std::string server;
  std::string token_file;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
  std::string devices;
  std::string soc = "Ascend910B2";
  std::string soc_map;
  std::string msprof = "msprof";
  std::string npu_smi;
  std::string python = "python3";
  std::string lock_dir = "/run/npuperf/locks";
  std::string work_dir = AgentOptions().work_dir.string();
  std::string metrics_listen = "127.0.0.1:9465";
  std::vector<std::string> labels;
  RunAsFlags run_as;
  std::string cgroup = "auto";
  int64_t pids_max = kDefaultJobPids;
  int64_t memory_max = 0;
  std::string sandbox = "none";
  std::string device_node_dir = "/dev";
  std::vector<std::string> sandbox_writable;
  std::string host;  // empty: the host name
};

// What main wires together.
struct Config {
  std::string server;
  std::string token;
  ChannelTls tls;
  std::string lock_dir;
  std::string metrics_listen;
  AgentOptions options;
  JobRunnerOptions job_options;
  std::unique_ptr<CgroupTree> cgroups;  // null: no job cgroups (the fallback)
  JobLimits limits;
};

void DefineFlags(CLI::App& app, Flags& f) {
  // --server and --devices are required, checked in Resolve: CLI11 checks
  // required options before unknown ones, so `--bogus` would be reported as
  // a missing --server instead of by its own name.
  app.add_option("--server", f.server, "npuperf-server HOST:PORT (required)");
  app.add_option("--token-file", f.token_file, "file holding this agent's bearer token");
  app.add_option("--host", f.host,
                 "the host name to register as (default: this host's name); an agent token's "
                 "name must be this name");
  app.add_option("--tls-ca", f.tls_ca, "CA certificate (PEM) of a TLS server (env NPUPERF_TLS_CA)")
      ->envname("NPUPERF_TLS_CA")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-cert", f.tls_cert,
                 "this agent's client certificate (PEM) for mTLS (env NPUPERF_TLS_CERT)")
      ->envname("NPUPERF_TLS_CERT");
  app.add_option("--tls-key", f.tls_key,
                 "private key (PEM, mode 600) of --tls-cert (env NPUPERF_TLS_KEY)")
      ->envname("NPUPERF_TLS_KEY");
  app.add_option("--devices", f.devices, "physical device ids, e.g. 0-7 (required)");
  auto* soc_opt = app.add_option("--soc", f.soc, "SoC of every device")->capture_default_str();
  app.add_option("--soc-map", f.soc_map,
                 "per-device SoC, e.g. 0-3=Ascend910B2,4-7=Ascend950PR_9589")
      ->excludes(soc_opt);
  app.add_option("--msprof", f.msprof, "msprof binary (e.g. build/sim-bin/msprof)")
      ->capture_default_str();
  app.add_option("--python", f.python, "interpreter for *.py runners")->capture_default_str();
  app.add_option("--lock-dir", f.lock_dir, "lock directory, or a path template with {id}")
      ->capture_default_str();
  app.add_option("--npu-smi", f.npu_smi,
                 "npu-smi to read chip health, clock, temperature and power before a device is "
                 "offered and around every job (e.g. /usr/local/sbin/npu-smi, or "
                 "build/sim-bin/npu-smi; default: none)");
  app.add_option("--work-dir", f.work_dir, "bundle cache, scratch and result spool")
      ->capture_default_str();
  app.add_option("--metrics-listen", f.metrics_listen, "Prometheus HOST:PORT (port 0: pick one)")
      ->capture_default_str();
  app.add_option("--label", f.labels, "host label key=value (repeatable)");
  app.add_option("--run-as-pool", f.run_as.pool,
                 "one unprivileged user per device for runners and msprof, e.g. npuperf-run0..7 "
                 "or a,b,c (agent must be root)")
      ->envname("NPUPERF_RUN_AS_POOL");
  app.add_option(
         "--run-as", f.run_as.user,
         "run runners and msprof as this unprivileged user (one device; agent must be root)")
      ->envname("NPUPERF_RUN_AS");
  app.add_flag("--run-as-self", f.run_as.self,
               "run runners as the agent's own user (a single-user workstation, tests, the demo)");
  app.add_option("--cgroup", f.cgroup,
                 "job cgroups: auto (the agent's delegated cgroup v2), none (subreaper fallback), "
                 "or a delegated cgroup v2 directory")
      ->capture_default_str();
  app.add_option("--job-pids-max", f.pids_max, "processes and threads of one job (0: no limit)")
      ->capture_default_str();
  app.add_option("--job-memory-max", f.memory_max, "bytes of memory of one job (cgroup; 0: none)")
      ->capture_default_str();
  app.add_option(
         "--sandbox", f.sandbox,
         "bwrap: jobs in bubblewrap (read-only host, private /tmp, only their device's nodes)")
      ->check(CLI::IsMember({"none", "bwrap"}))
      ->capture_default_str();
  app.add_option("--device-node-dir", f.device_node_dir,
                 "where the NPU device nodes are (msprof-sim: MSPROF_SIM_DEVICE_NODES)")
      ->capture_default_str();
  app.add_option("--sandbox-writable", f.sandbox_writable,
                 "another directory writable inside the sandbox (repeatable)");
}

// --sandbox: bwrap must run, here, before any job needs it.
absl::Status ResolveSandbox(const Flags& f, Config* c) {
  if (f.sandbox != "bwrap") return absl::OkStatus();
  SandboxOptions sandbox;
  sandbox.device_node_dir = std::filesystem::absolute(f.device_node_dir).string();
  for (const auto& w : f.sandbox_writable) {
    sandbox.writable.push_back(std::filesystem::absolute(w).string());
  }
  const std::string version = VersionOf(sandbox.bwrap);
  if (version.empty()) {
    return absl::FailedPreconditionError(
        "--sandbox bwrap: bwrap --version failed (apt-get install bubblewrap)");
  }
  LogInfo("agent", absl::StrCat("jobs run in a sandbox (", version, "), device nodes under ",
                                sandbox.device_node_dir));
  c->job_options.sandbox = std::move(sandbox);
  return absl::OkStatus();
}

// --cgroup into the jobs' containment (the run users already resolved).
absl::Status ResolveContainment(const Flags& f, Config* c) {
  std::unique_ptr<CgroupTree> tree;
  std::string dir = f.cgroup, why;
  if (f.cgroup == "auto") {
    auto found = DelegatedCgroup(&why);
    dir = found.value_or("");
  } else if (f.cgroup == "none") {
    dir = "";
    why = "--cgroup none";
  }
  if (!dir.empty()) {
    auto opened = CgroupTree::Open(dir);
    if (!opened.ok()) return opened.status();
    tree = *std::move(opened);
    LogInfo("agent",
            absl::StrCat("job cgroups under ", dir, (tree->pids() ? "" : " (no pids controller)"),
                         (tree->memory() ? "" : " (no memory controller)")));
  } else {
    LogInfo("agent",
            absl::StrCat("no job cgroups (", why, "): jobs are contained by a subreaper keeper",
                         c->job_options.run_users.empty() ? "" : " and their run uid"));
  }
  c->limits = JobLimits{f.pids_max, f.memory_max};
  // Without pids.max the run uid's RLIMIT_NPROC bounds a fork bomb.
  if (tree == nullptr || !tree->pids()) c->job_options.nproc_limit = f.pids_max;
  c->cgroups = std::move(tree);
  return absl::OkStatus();
}

// --run-as-pool / --run-as / --run-as-self into the run user of each device.
absl::Status ResolveAccounts(const Flags& f, Config* c) {
  auto users = ResolveRunUsers(f.run_as, c->options.devices, ::geteuid());
  if (!users.ok()) return users.status();
  c->job_options.run_users = *std::move(users);
  if (f.run_as.self) {
    LogWarning("agent",
               "--run-as-self: runners run as the agent's own user and can read its "
               "token, spool and bundle cache; use --run-as-pool on a shared host");
  }
  for (const auto& [device, user] : c->job_options.run_users) {
    LogInfo("agent",
            absl::StrCat("device ", device, ": runners as ", user.name, " (uid ", user.uid, ")"));
  }
  return absl::OkStatus();
}

// --devices, --soc / --soc-map and --label into options.
absl::Status ParseDevices(const Flags& f, AgentOptions* options) {
  auto ids = ParseDeviceRange(f.devices);
  if (!ids.ok())
    return absl::InvalidArgumentError(absl::StrCat("--devices: ", ids.status().message()));
  options->devices = *ids;
  if (!f.soc_map.empty()) {
    auto map = ParseDeviceMap(f.soc_map);
    if (!map.ok())
      return absl::InvalidArgumentError(absl::StrCat("--soc-map: ", map.status().message()));
    for (int d : options->devices) {
      if (!map->contains(d)) {
        return absl::InvalidArgumentError(absl::StrCat("--soc-map names no SoC for device ", d));
      }
      options->socs[d] = map->at(d);
    }
  } else {
    for (int d : options->devices) options->socs[d] = f.soc;
  }
  for (const auto& l : f.labels) {
    std::vector<std::string> kv = absl::StrSplit(l, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || kv[0].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--label '", l, "': want key=value"));
    }
    options->labels[kv[0]] = kv[1];
  }
  return absl::OkStatus();
}

// The checked flags, with absolute paths, this host's identity and the job
// runner's options.
absl::StatusOr<Config> Resolve(const Flags& f) {
  Config c;
  for (const auto& [flag, value] : {std::pair{"--server", &f.server}, {"--devices", &f.devices}}) {
    if (value->empty()) return absl::InvalidArgumentError(absl::StrCat(flag, " is required"));
  }
  if (auto s = ParseDevices(f, &c.options); !s.ok()) return s;
  if (!f.token_file.empty()) {
    if (auto s = CheckTokenFile(f.token_file, ::geteuid()); !s.ok()) return s;
    c.token = ReadFirstLine(f.token_file);
    if (c.token.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--token-file ", f.token_file, " holds no token"));
    }
  }
  // Children run in per-job directories: every path handed down must be absolute.
  c.options.work_dir = std::filesystem::absolute(f.work_dir);
  const std::string msprof = f.msprof.find('/') != std::string::npos
                                 ? std::filesystem::absolute(f.msprof).string()
                                 : f.msprof;
  c.lock_dir = std::filesystem::absolute(f.lock_dir).string();
  c.options.host = f.host.empty() ? HostName() : f.host;
  c.options.boot_id = ReadFirstLine("/proc/sys/kernel/random/boot_id");
  absl::BitGen gen;
  c.options.instance_id = absl::StrFormat("%016x", absl::Uniform<uint64_t>(gen));
  // Stable across restarts, different for each agent installation on the host.
  c.options.slot =
      Sha256Hex(std::filesystem::weakly_canonical(c.options.work_dir).string()).substr(0, 32);
  c.job_options.msprof = msprof;
  if (!f.npu_smi.empty()) {
    c.options.npu_smi = f.npu_smi.find('/') != std::string::npos
                            ? std::filesystem::absolute(f.npu_smi).string()
                            : f.npu_smi;
    c.job_options.npu_smi = c.options.npu_smi;
    c.job_options.npu_smi_scratch = c.options.work_dir / "npu-smi";
  }
  c.job_options.python = f.python;
  c.job_options.agent_env = CurrentEnvironment();
  c.job_options.host = c.options.host;
  c.job_options.agent_version = c.options.version;
  c.job_options.msprof_version = VersionOf(msprof);
  // Refuse to start rather than lease jobs that would all fail, or run them as the agent.
  if (auto s = ResolveAccounts(f, &c); !s.ok()) return s;
  if (auto s = PrepareWorkDir(c.options.work_dir, ::geteuid()); !s.ok()) return s;
  if (auto s = ResolveContainment(f, &c); !s.ok()) return s;
  if (auto s = ResolveSandbox(f, &c); !s.ok()) return s;
  c.server = f.server;
  auto tls = LoadChannelTls({f.tls_ca, f.tls_cert, f.tls_key}, ::geteuid());
  if (!tls.ok()) return tls.status();
  c.tls = *std::move(tls);
  c.metrics_listen = f.metrics_listen;
  return c;
}

// Parses and resolves the command line into config; the exit code when main
// must stop instead (--help, a bad flag).
std::optional<int> ParseCommandLine(int argc, char** argv, Config* config) {
  Flags flags;
  CLI::App app{"npuperf-agent: leases profiling jobs for this host's NPU devices and runs msprof"};
  app.set_version_flag("--version", VersionLine("npuperf-agent"));
  DefineFlags(app, flags);
  AddGeneratedDocsFlags(app, "npuperf-agent", 8, VersionLine("npuperf-agent"), kDaemonManFooter,
                        std::cout);       // hidden: --completion, --man-page
  AddEnvironmentAndConfig(app, "agent");  // NPUPERF_SERVER ..., --config / NPUPERF_AGENT_CONFIG
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a bad flag 2 (not CLI11's own 105..114),
    // CLI11's message naming it on stderr.
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto resolved = Resolve(flags);
  if (!resolved.ok()) return Fail(std::string(resolved.status().message()));
  *config = *std::move(resolved);
  return std::nullopt;
}

}  // namespace
}  // namespace npuperf::agent

int main(int argc, char** argv) {
  using namespace npuperf;
  using namespace npuperf::agent;
  UseUtf8PathNames();  // bundles may hold non-ASCII names (libarchive reads LC_CTYPE)
  // Debian's Abseil is built without NDEBUG, so every Mutex lock also fed its deadlock
  // detector (a lock graph and stack traces; about 3 % of the server's CPU in fleet_bench,
  // issue 36). The tests keep it on, where it finds lock-order inversions.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  RouteGrpcLogs();  // gRPC's own lines in the agent's log format, escaped
  HardenAgentProcess();
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Config config;
  if (auto exit_code = ParseCommandLine(argc, argv, &config)) return *exit_code;

  RealClock clock;
  auto registry = std::make_shared<prometheus::Registry>();
  AgentMetrics metrics(*registry);
  FlockDeviceLocker locker(config.lock_dir);
  SubprocessRunner runner(clock);
  auto channel = ServerChannel::Connect(config.server, config.token, config.tls, clock);
  Containment containment(std::move(config.cgroups), config.job_options.run_users, config.limits,
                          clock);
  Agent agent(*channel, locker, runner, metrics, clock, config.options, config.job_options,
              &containment);
  auto http = HttpEndpoint::Start(config.metrics_listen, registry, [&agent, &clock] {
    return DecideHealth(agent.Health(), clock.MonotonicNow());
  });
  if (!http.ok()) {
    return Fail(
        absl::StrCat("--metrics-listen ", config.metrics_listen, ": ", http.status().message()));
  }
  const std::string& listen = config.metrics_listen;
  const std::string& msprof_version = config.job_options.msprof_version;
  LogInfo("agent",
          absl::StrCat("metrics on ", listen.substr(0, listen.rfind(':')), ":", (*http)->port(),
                       " (/metrics, /healthz), devices ", FormatDeviceRange(config.options.devices),
                       ", server ", config.server, ", msprof ", config.job_options.msprof,
                       msprof_version.empty() ? "" : " (" + msprof_version + ")"));
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
