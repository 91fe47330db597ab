#include "agent/child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf::agent {
namespace {

// Resolves argv[0] against PATH from the child's environment.
std::string Resolve(const std::string& program, const std::map<std::string, std::string>& env) {
  if (program.find('/') != std::string::npos) return program;
  auto it = env.find("PATH");
  const std::string path = it == env.end() ? "/usr/local/bin:/usr/bin:/bin" : it->second;
  for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
    std::string candidate = absl::StrCat(dir, "/", program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return program;
}

// --- Below: only async-signal-safe code (it runs between fork and execve). ---

// Reports why the child could not get to its program and ends it.
[[noreturn]] void Fail(const ExecPlan& plan, ChildStage stage) {
  const int report[2] = {static_cast<int>(stage), errno};
  (void)!::write(plan.exec_error[1], report, sizeof(report));
  ::_exit(127);
}

// Closes every descriptor from `from` up, except `keep` (-1: none).
void CloseFrom(int from, int keep) {
  auto close_range = [](unsigned lo, unsigned hi) {
    if (lo > hi) return;
    if (::close_range(lo, hi, 0) == 0) return;
    for (unsigned fd = lo; fd <= hi && fd < 65536; ++fd) ::close(static_cast<int>(fd));
  };
  if (keep < from) {
    close_range(static_cast<unsigned>(from), UINT_MAX);
    return;
  }
  close_range(static_cast<unsigned>(from), static_cast<unsigned>(keep) - 1);
  close_range(static_cast<unsigned>(keep) + 1, UINT_MAX);
}

// Parses the decimal at s into *out; the position after it.
const char* ParseInt(const char* s, const char* end, long* out) {
  bool neg = false;
  if (s < end && *s == '-') neg = true, ++s;
  long v = 0;
  while (s < end && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  *out = neg ? -v : v;
  return s;
}

// State, parent and process group of pid from /proc/<pid>/stat; false when
// gone or hidden.
bool ReadStat(const char* pid_text, long* ppid, long* pgrp, char* state = nullptr) {
  char path[64] = "/proc/";
  size_t n = 6;
  for (const char* c = pid_text; *c != '\0' && n < sizeof(path) - 6; ++c) path[n++] = *c;
  for (const char* c = "/stat"; *c != '\0'; ++c) path[n++] = *c;
  path[n] = '\0';
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t len = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  if (len <= 0) return false;
  const char* end = buf + len;
  const char* p = end;
  while (p > buf && p[-1] != ')') --p;  // after the last ')': " S ppid pgrp ..."
  if (p == buf || p + 3 >= end) return false;
  if (state != nullptr) *state = p[1];
  p += 3;
  p = ParseInt(p, end, ppid);
  if (p >= end) return false;
  ParseInt(p + 1, end, pgrp);
  return true;
}

// Calls visit(proc_fd, name, pid) for every process directory of /proc
// (getdents64 on a stack buffer: no allocation, safe after fork).
template <typename F>
void ForEachProcess(F&& visit) {
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  alignas(dirent64) char buf[8192];
  ssize_t n;
  while ((n = ::getdents64(dir, buf, sizeof(buf))) > 0) {
    for (ssize_t off = 0; off < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
      long pid = 0;
      ParseInt(d->d_name, d->d_name + 20, &pid);
      visit(dir, d->d_name, static_cast<pid_t>(pid));
    }
  }
  ::close(dir);
}

// Sends sig to every child of `self` (found by walking /proc); with
// `outside_group_only`, only to those that left self's process group. The
// number signalled.
int SignalChildren(pid_t self, int sig, bool outside_group_only) {
  int count = 0;
  ForEachProcess([&](int, const char* name, pid_t pid) {
    long ppid = 0, pgrp = 0;
    if (!ReadStat(name, &ppid, &pgrp) || ppid != self) return;
    if (outside_group_only && pgrp == self) return;
    if (::kill(pid, sig) == 0) ++count;
  });
  return count;
}

// Processes of uid other than the caller that are still alive (not zombies),
// found by walking /proc (a process sees its own uid's entries even where
// /proc hides other users').
int CountAliveOfUid(uid_t uid) {
  const pid_t self = ::getpid();
  int count = 0;
  ForEachProcess([&](int dir, const char* name, pid_t pid) {
    struct stat st;
    long ppid = 0, pgrp = 0;
    if (pid == self || ::fstatat(dir, name, &st, 0) != 0 || st.st_uid != uid) return;
    char state = 0;
    if (ReadStat(name, &ppid, &pgrp, &state) && state != 'Z' && state != 'X') ++count;
  });
  return count;
}

// The body of a sweep helper: as uid, SIGKILL to every process of the uid
// (kill(-1) reaches exactly the processes the uid may signal, even where /proc
// hides them), then the number still alive as the exit code (at most 100).
[[noreturn]] void Sweep(const RunAsUser& u) {
  if (::setgroups(0, nullptr) != 0 || ::setgid(u.gid) != 0 || ::setuid(u.uid) != 0) ::_exit(255);
  if (::kill(-1, SIGKILL) != 0) ::_exit(errno == ESRCH ? 0 : 254);
  const int alive = CountAliveOfUid(u.uid);
  ::_exit(alive > 100 ? 100 : alive);
}

// Ends the keeper the way the program ended.
[[noreturn]] void ExitLike(int status) {
  if (WIFSIGNALED(status)) {
    const rlimit none{0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    ::signal(WTERMSIG(status), SIG_DFL);
    sigset_t all;
    sigfillset(&all);
    ::sigprocmask(SIG_UNBLOCK, &all, nullptr);
    ::kill(::getpid(), WTERMSIG(status));
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}

// The program's side: account, limits, parent-death signal, signals, stdio,
// descriptors, cwd, execve.
[[noreturn]] void ExecProgram(const ExecPlan& plan, pid_t parent) {
  const ProfilerSpec& spec = plan.spec;
  for (const auto& [resource, value] : spec.rlimits) {
    const rlimit limit{value, value};
    if (::setrlimit(resource, &limit) != 0) Fail(plan, ChildStage::kLimits);
  }
  if (spec.run_as) {
    const RunAsUser& u = *spec.run_as;
    if (::setgroups(u.groups.size(), u.groups.data()) != 0 || ::setgid(u.gid) != 0 ||
        ::setuid(u.uid) != 0) {
      Fail(plan, ChildStage::kSwitchUser);
    }
  }
  // The child dies with its parent (SIGKILL included): no orphaned profiler
  // keeps a device busy behind a lock that the kernel already released. Set
  // after setuid, which clears it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(plan.in, STDIN_FILENO);
  ::dup2(plan.out, STDOUT_FILENO);
  ::dup2(plan.err, STDERR_FILENO);
  // Nothing of the agent's reaches the program: not a descriptor opened
  // without O_CLOEXEC, nor one another thread opened while it forked.
  CloseFrom(3, plan.exec_error[1]);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) Fail(plan, ChildStage::kChdir);
  ::execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  Fail(plan, ChildStage::kExec);
}

// The keeper: subreaper of the program and all it starts; see ProfilerSpec::contain.
[[noreturn]] void Keep(const ExecPlan& plan, pid_t parent) {
  const pid_t self = ::getpid();
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);
  const pid_t program = ::fork();
  if (program < 0) Fail(plan, ChildStage::kKeeperFork);
  if (program == 0) ExecProgram(plan, self);
  CloseFrom(0, -1);  // the keeper needs none of them; exec_error closes when the program execs
  sigset_t wake;
  sigemptyset(&wake);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, kKeeperKillSignal}) sigaddset(&wake, sig);
  int status = 0;
  bool program_done = false, killing = false;
  while (true) {
    int st = 0;
    pid_t p;
    while ((p = ::waitpid(-1, &st, WNOHANG)) > 0) {
      if (p == program) status = st, program_done = true;
    }
    if (p < 0 && errno == ECHILD) ExitLike(status);
    if (program_done || killing) {
      if (SignalChildren(self, SIGKILL, false) == 0 && plan.spec.run_as && ::fork() == 0) {
        Sweep(*plan.spec.run_as);  // children /proc does not show us; reaped with the others
      }
    }
    const timespec poll{0, 20'000'000};
    const int sig = ::sigtimedwait(&wake, nullptr, program_done || killing ? &poll : nullptr);
    if (sig == kKeeperKillSignal) killing = true;
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) SignalChildren(self, SIGTERM, true);
  }
}

}  // namespace

ExecPlan::ExecPlan(const ProfilerSpec& s)
    : spec(s), program(Resolve(s.argv[0], s.env)), args(s.argv) {
  for (const auto& [k, v] : s.env) env_strings.push_back(k + "=" + v);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
}

ExecPlan::~ExecPlan() {
  for (int fd : {out, err, in, exec_error[0], exec_error[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

absl::Status ExecPlan::Open() {
  // O_NOFOLLOW: a runner cannot turn its output file into a link to one of the agent's.
  constexpr int kFlags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW;
  out = ::open(spec.stdout_path.c_str(), kFlags, 0600);
  err = ::open(spec.stderr_path.c_str(), kFlags, 0600);
  in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || err < 0 || in < 0 || ::pipe2(exec_error, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("cannot prepare the output files of ", program));
  }
  return absl::OkStatus();
}

void ExecPlan::CloseChildEnds() {
  for (int* fd : {&out, &err, &in, &exec_error[1]}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

int SweepUid(const RunAsUser& user) {
  const pid_t helper = ::fork();
  if (helper < 0) return -1;
  if (helper == 0) Sweep(user);
  int status = 0;
  while (::waitpid(helper, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 100) return -1;
  return WEXITSTATUS(status);
}

void RunChild(const ExecPlan& plan, pid_t parent) {
  // Own process group, so timeouts and cancellation reach every descendant.
  ::setpgid(0, 0);
  if (plan.spec.cgroup_procs_fd >= 0 && ::write(plan.spec.cgroup_procs_fd, "0", 1) != 1) {
    Fail(plan, ChildStage::kCgroup);
  }
  if (plan.spec.contain) Keep(plan, parent);
  ExecProgram(plan, parent);
}

}  // namespace npuperf::agent
