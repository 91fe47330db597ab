#include "agent/subprocess_runner.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/child_process.h"
#include "agent/constants.h"

namespace npuperf::agent {
namespace {

using std::chrono::milliseconds;

ExitStatus FromWaitStatus(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
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
    case ChildStage::kCgroup:
      return absl::FailedPreconditionError(
          absl::StrCat("cannot start ", program, ": join cgroup ", spec.cgroup, ": ", why));
    case ChildStage::kLimits:
      return absl::FailedPreconditionError(
          absl::StrCat("cannot start ", program, ": setrlimit: ", why));
    case ChildStage::kKeeperFork:
      return absl::ResourceExhaustedError(absl::StrCat("cannot start ", program, ": fork: ", why));
    case ChildStage::kExec: break;
  }
  return absl::FailedPreconditionError(absl::StrCat("cannot start ", program, ": ", why));
}

class Subprocess final : public ProfilerProcess {
 public:
  Subprocess(pid_t pid, int pidfd, bool keeper, Clock& clock)
      : pid_(pid), pidfd_(pidfd), keeper_(keeper), clock_(clock) {}
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

  // A keeper exits only when every descendant is gone, so once it is reaped
  // there is nothing left to kill; a plain child may leave its group behind.
  ExitStatus Terminate(milliseconds grace) override {
    if (auto done = TryReap()) {
      if (!keeper_) ::kill(-pid_, SIGKILL);  // stragglers left in the group
      return *done;
    }
    ::kill(-pid_, SIGTERM);
    ExitStatus s = Wait(clock_.MonotonicNow() + grace);
    if (keeper_ && s.timed_out) {
      ::kill(pid_, kKeeperKillSignal);
      s = Wait(clock_.MonotonicNow() + kKeeperKillWait);
    }
    if (!keeper_ || s.timed_out) ::kill(-pid_, SIGKILL);
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
  const bool keeper_;
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
  if (auto s = plan.Open(); !s.ok()) return s;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) RunChild(plan, parent);
  plan.CloseChildEnds();
  if (pid < 0) return absl::ResourceExhaustedError(absl::StrCat("fork: ", std::strerror(errno)));
  ::setpgid(pid, pid);  // also from the parent: no race with an early kill(-pid)
  int report[2] = {0, 0};
  const ssize_t n = ::read(plan.exec_error[0], report, sizeof(report));
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  auto process = std::make_unique<Subprocess>(pid, pidfd, spec.contain, clock_);
  if (n == sizeof(report)) {
    process->Wait(clock_.MonotonicNow() + std::chrono::seconds(5));
    return StartError(spec, plan.program, report);
  }
  return process;
}

}  // namespace npuperf::agent
