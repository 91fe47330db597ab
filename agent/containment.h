#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/run_as.h"
#include "common/clock.h"

namespace npuperf::agent {

// Per-job limits (--job-pids-max, --job-memory-max).
struct JobLimits {
  int64_t pids_max = 0;    // processes and threads of one job; 0: none
  int64_t memory_max = 0;  // bytes of one job (cgroup only); 0: none
};

// The cgroup v2 subtree delegated to the agent (--cgroup): the agent moves
// itself into <root>/supervisor (a cgroup with processes may not hand
// controllers down), enables the memory and pids controllers that <root>
// offers for its children, and gives each job <root>/job-<job>-<attempt>.
// Every write is a plain file write under `root`, so tests run it against a
// temporary directory. Thread-safe (each job has its own directory).
class CgroupTree {
 public:
  // Moves the calling process into <root>/supervisor and enables the
  // controllers. FAILED_PRECONDITION naming the file that could not be written.
  static absl::StatusOr<std::unique_ptr<CgroupTree>> Open(const std::string& root);

  // One job's cgroup: created with its limits, killed and removed by Reclaim.
  struct Job {
    std::string dir;
    int procs_fd = -1;  // cgroup.procs, open for the job's children
    ~Job();
  };
  // mkdir <root>/<name>, pids.max and memory.max where the controller is on,
  // cgroup.procs opened. FAILED_PRECONDITION naming the file on failure.
  absl::StatusOr<std::unique_ptr<Job>> Create(const std::string& name, const JobLimits& limits);
  // cgroup.kill (or, without it, SIGKILL to every pid in cgroup.procs).
  static void Kill(const Job& job);
  // "populated 0" in cgroup.events: no process left in the cgroup.
  static bool Empty(const Job& job);
  // rmdir; false when the kernel still holds it.
  static bool Remove(const Job& job);

  const std::string& root() const { return root_; }
  bool memory() const { return memory_; }
  bool pids() const { return pids_; }

 private:
  CgroupTree(std::string root, bool memory, bool pids)
      : root_(std::move(root)), memory_(memory), pids_(pids) {}
  const std::string root_;
  const bool memory_;
  const bool pids_;
};

// The cgroup v2 directory of the calling process when --cgroup auto can use
// it: a pure cgroup v2 host (cgroup2 at /sys/fs/cgroup), a cgroup other than
// the root one, and the agent may write its cgroup.subtree_control (systemd's
// Delegate=yes). Else nullopt and *why says which of those failed.
std::optional<std::string> DelegatedCgroup(std::string* why);

// What a job leaves behind is removed before its device is offered again:
// with a cgroup, cgroup.kill until cgroup.events says it is empty; with a
// per-device user, SIGKILL to every process of that uid until none is left
// (SweepUid). Without either the keeper (ProfilerSpec::contain) is the only
// guarantee. Thread-safe.
class Containment {
 public:
  // cgroups may be null (no delegated cgroup: the fallback); users: the run
  // user of each device (empty: runners run as the agent's own user).
  Containment(std::unique_ptr<CgroupTree> cgroups, std::map<int, RunAsUser> users, JobLimits limits,
              Clock& clock);

  // The job's cgroup, or null without a cgroup tree. Errors: Create's.
  absl::StatusOr<std::unique_ptr<CgroupTree::Job>> Enter(const std::string& name);
  // Kills what is left of the job on device and returns once it is verified
  // gone (retrying every kReclaimRetry, a warning logged each time), removing
  // its cgroup. Blocks; never gives up: a device whose last job cannot be
  // reclaimed stays held.
  void Reclaim(int device, std::unique_ptr<CgroupTree::Job> job);

  const JobLimits& limits() const { return limits_; }
  bool has_cgroups() const { return cgroups_ != nullptr; }
  // The run user of device; nullptr when runners run as the agent's user.
  const RunAsUser* user(int device) const;

 private:
  // How many processes of the job are left after one kill round; -1 unknown.
  int KillRound(int device, const CgroupTree::Job* job);

  const std::unique_ptr<CgroupTree> cgroups_;
  const std::map<int, RunAsUser> users_;
  const JobLimits limits_;
  Clock& clock_;
};

}  // namespace npuperf::agent
