#include "agent/subprocess_runner.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf::agent {
namespace {

using Clock = std::chrono::steady_clock;

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

class Subprocess final : public ProfilerProcess {
 public:
  Subprocess(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}
  ~Subprocess() override {
    if (!reaped_) Terminate(std::chrono::milliseconds(2000));
    if (pidfd_ >= 0) ::close(pidfd_);
  }
  int pid() const override { return pid_; }

  ExitStatus Wait(Clock::time_point deadline) override {
    while (true) {
      if (auto done = TryReap()) return *done;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return ExitStatus{.timed_out = true};
      const int slice = static_cast<int>(std::min<int64_t>(left.count(), 100));
      if (pidfd_ >= 0) {
        pollfd p{pidfd_, POLLIN, 0};
        ::poll(&p, 1, slice);
      } else {
        ::usleep(static_cast<useconds_t>(std::min(slice, 10)) * 1000);
      }
    }
  }

  ExitStatus Terminate(std::chrono::milliseconds grace) override {
    if (auto done = TryReap()) {
      ::kill(-pid_, SIGKILL);  // stragglers left in the group
      return *done;
    }
    ::kill(-pid_, SIGTERM);
    ExitStatus s = Wait(Clock::now() + grace);
    ::kill(-pid_, SIGKILL);
    if (s.timed_out) s = Wait(Clock::now() + std::chrono::seconds(30));
    return s;
  }

 private:
  std::optional<ExitStatus> TryReap() {
    std::lock_guard<std::mutex> lock(mu_);
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
  std::mutex mu_;
  bool reaped_ = false;
  ExitStatus status_;
};

}  // namespace

std::string ExitStatus::ToString() const {
  if (timed_out) return "timed out";
  if (signal != 0) return absl::StrCat("killed by signal ", signal, " (", strsignal(signal), ")");
  return absl::StrCat("exit code ", exit_code);
}

absl::StatusOr<std::unique_ptr<ProfilerProcess>> SubprocessRunner::Start(const ProfilerSpec& spec) {
  if (spec.argv.empty()) return absl::InvalidArgumentError("empty argv");
  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls until execve.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string program = Resolve(spec.argv[0], spec.env);
  const int out = ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int err = ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int exec_error[2];
  if (out < 0 || err < 0 || in < 0 || ::pipe2(exec_error, O_CLOEXEC) != 0) {
    for (int fd : {out, err, in}) if (fd >= 0) ::close(fd);
    return absl::InternalError(absl::StrCat("cannot prepare the output files of ", program));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Reports why the child could not get to its program and ends it.
    auto fail = [&](ChildStage stage) {
      const int report[2] = {static_cast<int>(stage), errno};
      (void)!::write(exec_error[1], report, sizeof(report));
      ::_exit(127);
    };
    // Own process group, so timeouts and cancellation reach every descendant.
    ::setpgid(0, 0);
    if (spec.run_as) {
      const RunAsUser& u = *spec.run_as;
      if (::setgroups(u.groups.size(), u.groups.data()) != 0 || ::setgid(u.gid) != 0 ||
          ::setuid(u.uid) != 0) {
        fail(ChildStage::kSwitchUser);
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
    ::dup2(in, STDIN_FILENO);
    ::dup2(out, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) fail(ChildStage::kChdir);
    ::execve(program.c_str(), argv.data(), envp.data());
    fail(ChildStage::kExec);
  }
  for (int fd : {out, err, in, exec_error[1]}) ::close(fd);
  if (pid < 0) {
    ::close(exec_error[0]);
    return absl::ResourceExhaustedError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  ::setpgid(pid, pid);  // also from the parent: no race with an early kill(-pid)
  int report[2] = {0, 0};
  const ssize_t n = ::read(exec_error[0], report, sizeof(report));
  ::close(exec_error[0]);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  auto process = std::unique_ptr<ProfilerProcess>(new Subprocess(pid, pidfd));
  if (n == sizeof(report)) {
    process->Wait(Clock::now() + std::chrono::seconds(5));
    const char* why = std::strerror(report[1]);
    switch (static_cast<ChildStage>(report[0])) {
      case ChildStage::kSwitchUser:
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot start ", program, " as user ", spec.run_as->name, " (uid ", spec.run_as->uid,
            "): setgroups/setgid/setuid: ", why));
      case ChildStage::kChdir:
        return absl::FailedPreconditionError(absl::StrCat("cannot start ", program, ": chdir ",
                                                          spec.cwd, ": ", why));
      case ChildStage::kExec:
        break;
    }
    return absl::FailedPreconditionError(absl::StrCat("cannot start ", program, ": ", why));
  }
  return process;
}

}  // namespace npuperf::agent
