#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/profiler_runner.h"

namespace npuperf::agent {

// Where a child failed before its program ran (reported through a pipe).
enum class ChildStage : int {
  kExec = 0,
  kChdir = 1,
  kSwitchUser = 2,
  kCgroup = 3,
  kLimits = 4,
  kKeeperFork = 5,
};

// Everything a child needs, prepared before fork: after it, only
// async-signal-safe calls until execve (the agent is multi-threaded). Not
// copyable (argv and envp point into the strings it owns).
struct ExecPlan {
  explicit ExecPlan(const ProfilerSpec& spec);
  ExecPlan(const ExecPlan&) = delete;
  ExecPlan& operator=(const ExecPlan&) = delete;
  ~ExecPlan();

  // Opens the child's stdin (/dev/null), stdout and stderr files and the pipe
  // that reports a failure before execve.
  absl::Status Open();
  // After fork, in the parent: the descriptors only the child uses.
  void CloseChildEnds();

  const ProfilerSpec& spec;
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> env_strings;
  std::vector<char*> envp;
  std::vector<char*> argv;
  int out = -1;
  int err = -1;
  int in = -1;
  int exec_error[2] = {-1, -1};
};

// The child after fork: joins the cgroup, then either becomes the program
// (own process group, account switch, limits, parent-death signal, stdio,
// every other descriptor closed, cwd, execve) or, with spec.contain, the
// keeper of a grandchild that does so. Never returns; a step that fails is
// reported through plan.exec_error with its errno. `parent`: the agent's pid.
[[noreturn]] void RunChild(const ExecPlan& plan, pid_t parent);

// SIGKILLs every process of user's uid from a short-lived child that switches
// to it (kill(-1)), then returns how many of them are still alive (zombies
// count as gone), at most 100; -1 when the helper could not run. Blocks until
// the helper exits (milliseconds). The agent must be root.
int SweepUid(const RunAsUser& user);

// The signal that makes a keeper kill every descendant at once (Terminate
// after its grace). SIGTERM to a keeper is forwarded to descendants that left
// its process group.
inline constexpr int kKeeperKillSignal = SIGUSR1;

}  // namespace npuperf::agent
