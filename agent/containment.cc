#include "agent/containment.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/child_process.h"
#include "agent/constants.h"
#include "common/log.h"

namespace npuperf::agent {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes text to an existing cgroup file (created when absent: a test's
// temporary directory). FAILED_PRECONDITION naming the file.
absl::Status WriteFile(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const bool ok =
      fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int saved = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) {
    return absl::FailedPreconditionError(
        absl::StrCat("cgroup: write '", text, "' to ", path, ": ", std::strerror(saved)));
  }
  return absl::OkStatus();
}

bool HasWord(const std::string& text, absl::string_view word) {
  for (absl::string_view w : absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

CgroupTree::Job::~Job() {
  if (procs_fd >= 0) ::close(procs_fd);
}

absl::StatusOr<std::unique_ptr<CgroupTree>> CgroupTree::Open(const std::string& root) {
  const std::string supervisor = root + "/supervisor";
  if (::mkdir(supervisor.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cgroup: mkdir ", supervisor, ": ", std::strerror(errno)));
  }
  if (auto s = WriteFile(supervisor + "/cgroup.procs", absl::StrCat(::getpid(), "\n")); !s.ok()) {
    return s;
  }
  const std::string offered = ReadText(root + "/cgroup.controllers");
  const bool memory = HasWord(offered, "memory"), pids = HasWord(offered, "pids");
  std::string enable;
  if (memory) enable += "+memory ";
  if (pids) enable += "+pids";
  if (!enable.empty()) {
    if (auto s = WriteFile(root + "/cgroup.subtree_control", enable); !s.ok()) return s;
  }
  return std::unique_ptr<CgroupTree>(new CgroupTree(root, memory, pids));
}

absl::StatusOr<std::unique_ptr<CgroupTree::Job>> CgroupTree::Create(const std::string& name,
                                                                    const JobLimits& limits) {
  auto job = std::make_unique<Job>();
  job->dir = root_ + "/" + name;
  if (::mkdir(job->dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("cgroup: mkdir ", job->dir, ": ", std::strerror(errno)));
  }
  if (pids_ && limits.pids_max > 0) {
    if (auto s = WriteFile(job->dir + "/pids.max", absl::StrCat(limits.pids_max, "\n")); !s.ok()) {
      return s;
    }
  }
  if (memory_ && limits.memory_max > 0) {
    const std::string max = absl::StrCat(limits.memory_max, "\n");
    if (auto s = WriteFile(job->dir + "/memory.max", max); !s.ok()) return s;
    // Past the limit the job is killed, not swapped into slowness.
    if (auto s = WriteFile(job->dir + "/memory.swap.max", "0\n"); !s.ok()) return s;
  }
  const std::string procs = job->dir + "/cgroup.procs";
  job->procs_fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (job->procs_fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cgroup: open ", procs, ": ", std::strerror(errno)));
  }
  return job;
}

void CgroupTree::Kill(const Job& job) {
  if (WriteFile(job.dir + "/cgroup.kill", "1\n").ok()) return;
  // Before Linux 5.14: every listed process, again until the cgroup is empty.
  for (absl::string_view line :
       absl::StrSplit(ReadText(job.dir + "/cgroup.procs"), '\n', absl::SkipEmpty())) {
    int pid = 0;
    if (absl::SimpleAtoi(line, &pid) && pid > 1) ::kill(pid, SIGKILL);
  }
}

bool CgroupTree::Empty(const Job& job) {
  for (absl::string_view line :
       absl::StrSplit(ReadText(job.dir + "/cgroup.events"), '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "populated ")) return absl::StripAsciiWhitespace(line) == "0";
  }
  return false;
}

bool CgroupTree::Remove(const Job& job) { return ::rmdir(job.dir.c_str()) == 0; }

std::optional<std::string> DelegatedCgroup(std::string* why) {
  struct statfs fs {};
  if (::statfs("/sys/fs/cgroup", &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
    *why = "/sys/fs/cgroup is not a cgroup v2 (unified) hierarchy";
    return std::nullopt;
  }
  std::string own;
  for (absl::string_view line : absl::StrSplit(ReadText("/proc/self/cgroup"), '\n')) {
    if (absl::ConsumePrefix(&line, "0::")) own = std::string(line);
  }
  if (own.empty() || own == "/") {
    *why = "the agent runs in the root cgroup (not a delegated subtree)";
    return std::nullopt;
  }
  const std::string dir = "/sys/fs/cgroup" + own;
  if (::access((dir + "/cgroup.subtree_control").c_str(), W_OK) != 0) {
    *why = absl::StrCat(dir, " is not delegated to the agent (Delegate=yes in its unit)");
    return std::nullopt;
  }
  return dir;
}

Containment::Containment(std::unique_ptr<CgroupTree> cgroups, std::map<int, RunAsUser> users,
                         JobLimits limits, Clock& clock)
    : cgroups_(std::move(cgroups)), users_(std::move(users)), limits_(limits), clock_(clock) {}

const RunAsUser* Containment::user(int device) const {
  auto it = users_.find(device);
  return it == users_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::unique_ptr<CgroupTree::Job>> Containment::Enter(const std::string& name) {
  if (cgroups_ == nullptr) return std::unique_ptr<CgroupTree::Job>();
  return cgroups_->Create(name, limits_);
}

int Containment::KillRound(int device, const CgroupTree::Job* job) {
  int left = 0;
  if (job != nullptr) {
    CgroupTree::Kill(*job);
    const auto until = clock_.MonotonicNow() + kReclaimTry;
    while (!CgroupTree::Empty(*job) && clock_.MonotonicNow() < until) {
      clock_.SleepFor(std::chrono::milliseconds(20));
    }
    if (!CgroupTree::Empty(*job)) left = 1;
  }
  if (const RunAsUser* u = user(device)) {
    const int alive = SweepUid(*u);
    left = alive < 0 ? -1 : left + alive;
  }
  return left;
}

void Containment::Reclaim(int device, std::unique_ptr<CgroupTree::Job> job) {
  if (job == nullptr && user(device) == nullptr) return;
  int round = 1;
  for (;; ++round) {
    const int left = KillRound(device, job.get());
    if (left == 0) break;
    LogWarning("agent",
               absl::StrCat("device ", device, ": after kill round ", round, ", ",
                            left < 0 ? "cannot verify that no" : absl::StrCat(left),
                            " process(es) of the last job ", left < 0 ? "is left" : "still alive",
                            "; the device stays held"));
    clock_.SleepFor(kReclaimRetry);
  }
  LogInfo("agent", absl::StrCat("device ", device, ": no process of the last job is left (",
                                job != nullptr ? "cgroup empty" : "run uid swept", ", ", round,
                                " kill round", round == 1 ? "" : "s", ")"));
  if (job != nullptr && !CgroupTree::Remove(*job)) {
    LogWarning("agent", absl::StrCat("cgroup ", job->dir, ": rmdir: ", std::strerror(errno)));
  }
}

}  // namespace npuperf::agent
