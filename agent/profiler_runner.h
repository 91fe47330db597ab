#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/run_as.h"
#include "common/clock.h"

namespace npuperf::agent {

// One child process to run (a runner, or msprof running a runner).
struct ProfilerSpec {
  std::vector<std::string> argv;           // argv[0] is looked up on PATH of env
  std::map<std::string, std::string> env;  // the complete environment
  std::string cwd;
  std::string stdout_path;  // appended to
  std::string stderr_path;  // appended to
  // Account the child switches to before exec (cwd must be reachable by it).
  // Default: none (the agent's own).
  std::optional<RunAsUser> run_as = std::nullopt;
  // Runs the program under a keeper: a child that stays the agent's own account,
  // is the subreaper of everything the program starts (a setsid daemon or a
  // double-forked child comes back to it), kills every descendant still alive
  // when the program exits (or on Terminate), and exits only when none is
  // left, with the program's exit status. Default: false (the program itself
  // is the child, in its own process group).
  bool contain = false;
  // An open cgroup.procs of a cgroup v2 directory (owned by the caller, kept
  // open until Start returns) that the child joins before anything else, so
  // does everything it starts; `cgroup` names it in errors. Default: -1 (the
  // agent's own cgroup).
  int cgroup_procs_fd = -1;
  std::string cgroup = "";
  // setrlimit(resource, {value, value}) in the child before exec, e.g.
  // RLIMIT_NPROC where no pids controller is available. Default: none.
  std::vector<std::pair<int, uint64_t>> rlimits = {};
};

// How a child ended.
struct ExitStatus {
  bool timed_out = false;  // Wait's deadline passed; the child still runs
  int exit_code = -1;      // when it exited
  int signal = 0;          // when a signal killed it
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  std::string ToString() const;
};

// A started child in its own process group. Destroying it terminates the
// group (RAII: no orphan survives its handle; with ProfilerSpec::contain no
// descendant at all). Not thread-safe except
// Terminate, which may be called from another thread while Wait blocks.
class ProfilerProcess {
 public:
  virtual ~ProfilerProcess() = default;
  virtual int pid() const = 0;
  // Waits until the child exits or the deadline (on the runner's Clock) passes.
  virtual ExitStatus Wait(Clock::MonotonicTime deadline) = 0;
  // SIGTERM to the group, SIGKILL after grace (with a keeper: to every
  // descendant); returns when the child is reaped.
  virtual ExitStatus Terminate(std::chrono::milliseconds grace) = 0;
};

// Starts children (style.md §4, seam 4). Thread-safe.
class ProfilerRunner {
 public:
  virtual ~ProfilerRunner() = default;
  virtual absl::StatusOr<std::unique_ptr<ProfilerProcess>> Start(const ProfilerSpec& spec) = 0;
};

}  // namespace npuperf::agent
