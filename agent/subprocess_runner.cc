#include "agent/subprocess_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace npuperf::agent {
namespace {

using std::chrono::milliseconds;

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

// Where a child failed before its program ran (reported through a pipe).
enum class ChildStage : int { kExec = 0, kChdir = 1, kSwitchUser = 2 };

ExitStatus FromWaitStatus(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}

// Everything the child needs, prepared before fork: after it, only
// async-signal-safe calls until execve. Not copyable (argv and envp point into
// the strings it owns).
struct ExecPlan {
  explicit ExecPlan(const ProfilerSpec& spec)
      : program(Resolve(spec.argv[0], spec.env)), args(spec.argv) {
    for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
  }
  ExecPlan(const ExecPlan&) = delete;
  ExecPlan& operator=(const ExecPlan&) = delete;

  // Opens the child's stdin (/dev/null), stdout and stderr files and the pipe
  // that reports a failure before execve.
  absl::Status OpenFiles(const ProfilerSpec& spec) {
    out = ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    err = ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || err < 0 || in < 0 || ::pipe2(exec_error, O_CLOEXEC) != 0) {
      for (int fd : {out, err, in}) {
        if (fd >= 0) ::close(fd);
      }
      return absl::InternalError(absl::StrCat("cannot prepare the output files of ", program));
    }
    return absl::OkStatus();
  }

  // After fork, in the parent: the descriptors only the child uses.
  void CloseChildEnds() {
    for (int fd : {out, err, in, exec_error[1]}) ::close(fd);
  }

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

// In the child: reports why it could not get to its program and ends it.
[[noreturn]] void FailChild(const ExecPlan& plan, ChildStage stage) {
  const int report[2] = {static_cast<int>(stage), errno};
  (void)!::write(plan.exec_error[1], report, sizeof(report));
  ::_exit(127);
}

// The child between fork and execve: own process group, the account switch,
// the parent-death signal, stdio, cwd. Never returns; a step that fails is
// reported through the pipe with its errno.
[[noreturn]] void ExecChild(const ProfilerSpec& spec, const ExecPlan& plan, pid_t parent) {
  // Own process group, so timeouts and cancellation reach every descendant.
  ::setpgid(0, 0);
  if (spec.run_as) {
    const RunAsUser& u = *spec.run_as;
    if (::setgroups(u.groups.size(), u.groups.data()) != 0 || ::setgid(u.gid) != 0 ||
        ::setuid(u.uid) != 0) {
      FailChild(plan, ChildStage::kSwitchUser);
    }
  }
  // The child dies with the agent (SIGKILL included): no orphaned profiler
  // keeps a device busy behind a lock that the kernel already released.
  // Set after setuid, which clears it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(plan.in, STDIN_FILENO);
  ::dup2(plan.out, STDOUT_FILENO);
  ::dup2(plan.err, STDERR_FILENO);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) FailChild(plan, ChildStage::kChdir);
  ::execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  FailChild(plan, ChildStage::kExec);
}

// The error of a child that reported `report` = {ChildStage, errno} before execve.
absl::Status StartError(const ProfilerSpec& spec, const std::string& program, const int report[2]) {
  const char* why = std::strerror(report[1]);
  switch (static_cast<ChildStage>(report[0])) {
    case ChildStage::kSwitchUser:
      return absl::FailedPreconditionError(
          absl::StrCat("cannot start ", program, " as user ", spec.run_as->name, " (uid ",
                       spec.run_as->uid, "): setgroups/setgid/setuid: ", why));
    case ChildStage::kChdir:
      return absl::FailedPreconditionError(
          absl::StrCat("cannot start ", program, ": chdir ", spec.cwd, ": ", why));
    case ChildStage::kExec: break;
  }
  return absl::FailedPreconditionError(absl::StrCat("cannot start ", program, ": ", why));
}

class Subprocess final : public ProfilerProcess {
 public:
  Subprocess(pid_t pid, int pidfd, Clock& clock) : pid_(pid), pidfd_(pidfd), clock_(clock) {}
  ~Subprocess() override {
    if (!reaped()) Terminate(milliseconds(2000));
    if (pidfd_ >= 0) ::close(pidfd_);
  }
  int pid() const override { return pid_; }

  ExitStatus Wait(Clock::MonotonicTime deadline) override {
    while (true) {
      if (auto done = TryReap()) return *done;
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock_.MonotonicNow());
      if (left.count() <= 0) return ExitStatus{.timed_out = true};
      const int slice = static_cast<int>(std::min<int64_t>(left.count(), 100));
      if (pidfd_ >= 0) {
        pollfd p{pidfd_, POLLIN, 0};
        ::poll(&p, 1, slice);
      } else {
        clock_.SleepFor(milliseconds(std::min(slice, 10)));
      }
    }
  }

  ExitStatus Terminate(milliseconds grace) override {
    if (auto done = TryReap()) {
      ::kill(-pid_, SIGKILL);  // stragglers left in the group
      return *done;
    }
    ::kill(-pid_, SIGTERM);
    ExitStatus s = Wait(clock_.MonotonicNow() + grace);
    ::kill(-pid_, SIGKILL);
    if (s.timed_out) s = Wait(clock_.MonotonicNow() + std::chrono::seconds(30));
    return s;
  }

 private:
  bool reaped() {
    absl::MutexLock lock(&mu_);
    return reaped_;
  }

  std::optional<ExitStatus> TryReap() {
    absl::MutexLock lock(&mu_);
    if (reaped_) return status_;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = FromWaitStatus(status);
      return status_;
    }
    return std::nullopt;
  }

  const pid_t pid_;
  const int pidfd_;
  Clock& clock_;
  absl::Mutex mu_;
  bool reaped_ ABSL_GUARDED_BY(mu_) = false;
  ExitStatus status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::string ExitStatus::ToString() const {
  if (timed_out) return "timed out";
  if (signal != 0) return absl::StrCat("killed by signal ", signal, " (", strsignal(signal), ")");
  return absl::StrCat("exit code ", exit_code);
}

absl::StatusOr<std::unique_ptr<ProfilerProcess>> SubprocessRunner::Start(const ProfilerSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty argv");
  ExecPlan plan(spec);
  if (auto s = plan.OpenFiles(spec); !s.ok()) return s;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) ExecChild(spec, plan, parent);
  plan.CloseChildEnds();
  if (pid < 0) {
    ::close(plan.exec_error[0]);
    return absl::ResourceExhaustedError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  ::setpgid(pid, pid);  // also from the parent: no race with an early kill(-pid)
  int report[2] = {0, 0};
  const ssize_t n = ::read(plan.exec_error[0], report, sizeof(report));
  ::close(plan.exec_error[0]);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  auto process = std::make_unique<Subprocess>(pid, pidfd, clock_);
  if (n == sizeof(report)) {
    process->Wait(clock_.MonotonicNow() + std::chrono::seconds(5));
    return StartError(spec, plan.program, report);
  }
  return process;
}

}  // namespace npuperf::agent
