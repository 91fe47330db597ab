#include "tests/chaos/fleet.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"

namespace npuperf::chaos {
namespace fs = std::filesystem;
using testing::BuildDir;
using testing::Process;

namespace {

constexpr int kHosts = 2;

std::string AgentToken(const std::string& host) { return "chaos-agent-token-" + host; }

// The --msprof of one agent: hands fault_dir/pending (if any) to this run of
// msprof-sim, moved away first so that exactly one run takes it.
std::string WrapperScript(const fs::path& fault_dir, const fs::path& sim) {
  const std::string fd = fault_dir.string();
  return absl::StrCat(
      "#!/bin/sh\n",
      "# chaos soak: one pending msprof-sim fault, taken by the first run that finds it\n",
      "for a in \"$@\"; do [ \"$a\" = --version ] && exec '", sim.string(), "' \"$@\"; done\n",
      "if mv '", fd, "/pending' '", fd, "/taken.'$$ 2>/dev/null; then\n",
      "  MSPROF_SIM_FAULT=$(cat '", fd, "/taken.'$$); export MSPROF_SIM_FAULT\n",
      "  echo \"$(date +%s%3N) $MSPROF_SIM_FAULT\" >> '", fd, "/fired.log'\n", "  rm -f '", fd,
      "/taken.'$$\n", "fi\n", "exec '", sim.string(), "' \"$@\"\n");
}

}  // namespace

Fleet::Fleet(fs::path dir, Options options) : dir_(std::move(dir)), options_(std::move(options)) {
  teams_ = {
      {"alpha", "chaos-team-alpha"}, {"beta", "chaos-team-beta"}, {"gamma", "chaos-team-gamma"}};
}

Fleet::~Fleet() { Stop(); }

fs::path Fleet::ConflictLog(const std::string& host) const { return dir_ / host / "conflicts.log"; }

bool Fleet::all_tmpfs() const {
  for (const auto& a : agents_) {
    if (!a.tmpfs) return false;
  }
  return !agents_.empty();
}

absl::Status Fleet::WriteTokens() {
  std::ofstream tokens(dir_ / "tokens");
  for (const auto& t : teams_) tokens << "team " << t.name << " " << Sha256Hex(t.token) << "\n";
  for (int h = 0; h < kHosts; ++h) {
    const std::string host = absl::StrCat("h", h);
    tokens << "agent " << host << " " << Sha256Hex(AgentToken(host)) << "\n";
    fs::create_directories(dir_ / host);
    const fs::path file = dir_ / host / "agent.token";
    std::ofstream(file) << AgentToken(host) << "\n";
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  }
  if (!tokens) return absl::InternalError("cannot write " + (dir_ / "tokens").string());
  return absl::OkStatus();
}

std::vector<std::string> Fleet::ReplicaArgv(const std::string& listen) const {
  return {(BuildDir() / "bin/npuperf-server").string(),
          "--listen",
          listen,
          "--metrics-listen",
          "127.0.0.1:0",
          "--db",
          options_.db_url,
          "--tokens-file",
          (dir_ / "tokens").string(),
          "--lease-ttl-ms",
          std::to_string(options_.lease_ttl_ms),
          "--heartbeat-ms",
          std::to_string(options_.heartbeat_ms),
          "--reaper-ms",
          "500"};
}

absl::Status Fleet::StartReplica(int i) {
  Replica& r = replicas_[i];
  const std::string listen = r.address.empty() ? "127.0.0.1:0" : r.address;
  const fs::path log = dir_ / absl::StrCat("server", i, ".", r.incarnation++, ".log");
  auto p = Process::Start(ReplicaArgv(listen), log);
  if (!p.ok()) return p.status();
  auto line = (*p)->WaitForLine("listening on", std::chrono::seconds(60));
  if (!line.ok()) return line.status();
  if (r.address.empty()) r.address = testing::AddressAfter(*line, "listening on");
  r.metrics_address = testing::AddressAfter(*line, "metrics");
  r.process = *std::move(p);
  return absl::OkStatus();
}

void Fleet::KillReplica(int i) {
  if (replicas_[i].process != nullptr) replicas_[i].process->Kill();
  replicas_[i].process.reset();
}

bool Fleet::WaitReplicaHealthy(int i, std::chrono::seconds timeout) {
  const auto deadline = testing::WallClock().MonotonicNow() + timeout;
  while (testing::WallClock().MonotonicNow() < deadline) {
    auto r = testing::HttpGetResponse(replicas_[i].metrics_address, "/healthz");
    if (r.ok() && r->status == 200) return true;
    testing::WallClock().SleepFor(std::chrono::milliseconds(50));
  }
  return false;
}

absl::Status Fleet::PrepareAgent(int i) {
  AgentSlot& a = agents_[i];
  a.host = absl::StrCat("h", i % kHosts);
  a.first_device = (i / kHosts) * options_.devices_per_agent;
  a.last_device = a.first_device + options_.devices_per_agent - 1;
  a.replica = i % 2;
  a.work_dir = dir_ / absl::StrCat("agent", i) / "work";
  a.fault_dir = dir_ / absl::StrCat("agent", i) / "faults";
  fs::create_directories(a.work_dir);
  fs::create_directories(a.fault_dir);
  if (options_.tmpfs_mib > 0) {
    const std::string data = absl::StrCat("size=", options_.tmpfs_mib, "m,mode=0711");
    if (::mount("tmpfs", a.work_dir.c_str(), "tmpfs", 0, data.c_str()) == 0) {
      a.tmpfs = true;
    } else {
      std::fprintf(stderr,
                   "chaos: WARNING: cannot mount a tmpfs on %s (%s): the full-disk fault is "
                   "not injected on this agent (run as root with CAP_SYS_ADMIN)\n",
                   a.work_dir.c_str(), std::strerror(errno));
    }
  }
  const fs::path wrapper = a.fault_dir / "msprof";
  std::ofstream(wrapper) << WrapperScript(a.fault_dir, BuildDir() / "sim-bin/msprof");
  fs::permissions(wrapper, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  return absl::OkStatus();
}

absl::Status Fleet::StartAgent(int i) {
  AgentSlot& a = agents_[i];
  const fs::path host_dir = dir_ / a.host;
  const std::map<std::string, std::string> env = {
      {"MSPROF_SIM_STATE_DIR", (host_dir / "sim-state").string()},
      {"MSPROF_SIM_CONFLICT_LOG", ConflictLog(a.host).string()}};
  const std::vector<std::string> argv = {(BuildDir() / "bin/npuperf-agent").string(),
                                         "--server",
                                         replicas_[a.replica].address,
                                         "--host",
                                         a.host,
                                         "--token-file",
                                         (host_dir / "agent.token").string(),
                                         "--devices",
                                         absl::StrCat(a.first_device, "-", a.last_device),
                                         "--msprof",
                                         (a.fault_dir / "msprof").string(),
                                         "--lock-dir",
                                         (host_dir / "locks").string(),
                                         "--work-dir",
                                         a.work_dir.string(),
                                         "--metrics-listen",
                                         "127.0.0.1:0",
                                         "--run-as-self"};
  const fs::path log = dir_ / absl::StrCat("agent", i, ".", a.incarnation++, ".log");
  auto p = Process::Start(argv, log, env);
  if (!p.ok()) return p.status();
  a.process = *std::move(p);
  a.paused = false;
  return absl::OkStatus();
}

void Fleet::KillAgent(int i) {
  AgentSlot& a = agents_[i];
  if (a.process == nullptr) return;
  if (a.paused) ::kill(a.process->pid(), SIGCONT);  // reaped either way
  a.process->Kill();
  a.process.reset();
  a.paused = false;
}

void Fleet::PauseAgent(int i) {
  AgentSlot& a = agents_[i];
  if (a.process == nullptr || a.paused) return;
  ::kill(a.process->pid(), SIGSTOP);
  a.paused = true;
}

void Fleet::ResumeAgent(int i) {
  AgentSlot& a = agents_[i];
  if (a.process == nullptr || !a.paused) return;
  ::kill(a.process->pid(), SIGCONT);
  a.paused = false;
}

absl::Status Fleet::Start() {
  fs::create_directories(dir_);
  if (auto s = WriteTokens(); !s.ok()) return s;
  replicas_.resize(2);
  for (int i = 0; i < 2; ++i) {
    if (auto s = StartReplica(i); !s.ok()) return s;
  }
  agents_.resize(options_.agents);
  for (int i = 0; i < options_.agents; ++i) {
    if (auto s = PrepareAgent(i); !s.ok()) return s;
    if (auto s = StartAgent(i); !s.ok()) return s;
  }
  for (auto& a : agents_) {
    auto line = a.process->WaitForLine("registered as", std::chrono::seconds(60));
    if (!line.ok()) return line.status();
  }
  return absl::OkStatus();
}

void Fleet::Stop() {
  for (auto& a : agents_) {
    if (a.process == nullptr) continue;
    if (a.paused) ::kill(a.process->pid(), SIGCONT);
    a.process->Stop(std::chrono::seconds(20));
    a.process.reset();
  }
  for (auto& r : replicas_) {
    if (r.process != nullptr) r.process->Stop(std::chrono::seconds(20));
    r.process.reset();
  }
  for (auto& a : agents_) {
    if (a.tmpfs && ::umount2(a.work_dir.c_str(), MNT_DETACH) == 0) a.tmpfs = false;
  }
}

}  // namespace npuperf::chaos
