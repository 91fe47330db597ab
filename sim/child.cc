#include "sim/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace npuperf::sim {
namespace {

volatile sig_atomic_t g_child_pid = 0;

void Forward(int sig) {
  if (g_child_pid > 0) ::kill(g_child_pid, sig);
}

std::vector<std::string> BuildEnv(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    std::string key = entry.substr(0, entry.find('='));
    if (extra.count(key) == 0) env.push_back(entry);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

absl::StatusOr<int> RunChild(const std::vector<std::string>& argv,
                             const std::map<std::string, std::string>& extra_env) {
  if (argv.empty()) return absl::InvalidArgumentError("empty application command");
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BuildEnv(extra_env);
  std::vector<char*> argp = Pointers(args);
  std::vector<char*> envp = Pointers(env);
  int err_pipe[2];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return absl::InternalError("pipe2 failed");
  pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    ::close(err_pipe[0]);
    ::execvpe(argp[0], argp.data(), envp.data());
    int e = errno;
    ssize_t ignored = ::write(err_pipe[1], &e, sizeof(e));
    (void)ignored;
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  g_child_pid = pid;
  struct sigaction sa {};
  sa.sa_handler = Forward;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  int exec_errno = 0;
  ssize_t n = ::read(err_pipe[0], &exec_errno, sizeof(exec_errno));
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child_pid = 0;
  sa.sa_handler = SIG_DFL;  // a hung export must stay killable by SIGTERM
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  if (n == sizeof(exec_errno)) {
    return absl::NotFoundError(
        absl::StrCat("cannot run '", argv[0], "': ", std::strerror(exec_errno)));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

}  // namespace npuperf::sim
