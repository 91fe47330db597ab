#include "client/git_range.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/bundle_tar.h"

extern char** environ;

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;

// Closes what it holds.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string FirstLine(absl::string_view text) {
  std::string line(absl::StripAsciiWhitespace(text.substr(0, text.find('\n'))));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

// Reads both pipes until both close, the limit or the deadline. Returns false
// on the deadline.
bool Drain(Clock& clock, int out_fd, int err_fd, size_t max_output, int timeout_ms,
           std::string* out, std::string* err, bool* too_long) {
  const auto deadline = clock.MonotonicNow() + std::chrono::milliseconds(timeout_ms);
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  char buf[65536];
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.MonotonicNow());
    if (left.count() <= 0) return false;
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        fds[i].fd = -1;
        continue;
      }
      std::string* sink = i == 0 ? out : err;
      const size_t cap = i == 0 ? max_output : 4096;
      if (sink->size() + static_cast<size_t>(n) > cap) {
        if (i == 0) *too_long = true;
        sink->append(buf, cap - std::min(cap, sink->size()));
        if (i == 0) return true;  // the caller kills git
      } else {
        sink->append(buf, static_cast<size_t>(n));
      }
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> GitRepository::Run(const std::vector<std::string>& args,
                                               size_t max_output, int timeout_ms) {
  std::vector<std::string> argv = {"git", "-C", repo_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return absl::InternalError("pipe failed");
  }
  Fd out_r{out_pipe[0]}, err_r{err_pipe[0]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  // Its own process group, so that a kill reaches what git started too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, "git", &actions, &attr, cargv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("cannot run git: ", std::strerror(rc)));
  std::string out, err;
  bool too_long = false;
  const bool in_time =
      Drain(clock_, out_r.fd, err_r.fd, max_output, timeout_ms, &out, &err, &too_long);
  if (!in_time || too_long) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string what = absl::StrCat("git ", args.empty() ? "" : args.front());
  if (!in_time) {
    return absl::DeadlineExceededError(
        absl::StrCat(what, " took longer than ", timeout_ms / 1000, " s"));
  }
  if (too_long) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, " printed more than ", max_output, " bytes"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " failed", err.empty() ? "" : absl::StrCat(": ", FirstLine(err))));
  }
  return out;
}

// The full hash of a commit, or INVALID_ARGUMENT naming the flag.
absl::StatusOr<std::string> GitRepository::CommitOf(const std::string& flag,
                                                    const std::string& rev) {
  if (rev.empty() || rev.front() == '-' || rev.size() > 256) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": '", rev, "' is not a revision"));
  }
  absl::StatusOr<std::string> out =
      Run({"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
  if (!out.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": no commit '", rev, "' in ", repo_.string()));
  }
  return std::string(absl::StripAsciiWhitespace(*out));
}

absl::StatusOr<std::vector<GitRevision>> GitRepository::FirstParentRange(const std::string& good,
                                                                         const std::string& bad,
                                                                         int max_commits) {
  absl::StatusOr<std::string> top = Run({"rev-parse", "--show-toplevel"});
  if (!top.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repo: ", repo_.string(), " is not a git work tree"));
  }
  absl::StatusOr<std::string> g = CommitOf("--good", good);
  if (!g.ok()) return g.status();
  absl::StatusOr<std::string> b = CommitOf("--bad", bad);
  if (!b.ok()) return b.status();
  if (*g == *b) return absl::InvalidArgumentError("--good and --bad name the same commit");
  if (!Run({"merge-base", "--is-ancestor", *g, *b}).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--good: ", good, " is not an ancestor of --bad ", bad, " (the range is good..bad)"));
  }
  const std::string range = absl::StrCat(*g, "..", *b);
  absl::StatusOr<std::string> count = Run({"rev-list", "--count", "--first-parent", range});
  if (!count.ok()) return count.status();
  int64_t n = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*count), &n)) {
    return absl::InternalError("git rev-list --count printed no number");
  }
  if (n > max_commits) {
    return absl::InvalidArgumentError(absl::StrCat("--good/--bad: ", n, " commits in ", good, "..",
                                                   bad, ", at most ", max_commits,
                                                   ": narrow the range"));
  }
  absl::StatusOr<std::string> log =
      Run({"log", "--first-parent", "--reverse", "--format=%H%x00%s%x00%an <%ae>%x00", range});
  if (!log.ok()) return log.status();
  absl::StatusOr<std::string> first = Run({"log", "-1", "--format=%H%x00%s%x00%an <%ae>%x00", *g});
  if (!first.ok()) return first.status();
  std::vector<GitRevision> out;
  for (const std::string* text : {&*first, &*log}) {
    std::vector<std::string> f = absl::StrSplit(*text, '\0');
    for (size_t i = 0; i + 2 < f.size(); i += 3) {
      out.push_back({std::string(absl::StripAsciiWhitespace(f[i])), f[i + 1], f[i + 2]});
    }
  }
  if (static_cast<int64_t>(out.size()) != n + 1 || out.front().hash != *g ||
      out.back().hash != *b) {
    return absl::InternalError("git log did not list the range git rev-list counted");
  }
  return out;
}

absl::StatusOr<std::string> GitRepository::PathInRepo(const fs::path& op_dir) {
  std::error_code ec;
  if (!fs::is_directory(op_dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(op_dir.string(), ": not a directory"));
  }
  absl::StatusOr<std::string> top = Run({"rev-parse", "--show-toplevel"});
  if (!top.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--repo: ", repo_.string(), " is not a git work tree"));
  }
  const fs::path root = fs::canonical(std::string(absl::StripAsciiWhitespace(*top)), ec);
  const fs::path dir = fs::canonical(op_dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(op_dir.string(), ": ", ec.message()));
  const fs::path rel = dir.lexically_relative(root);
  if (rel.empty() || rel == "." || *rel.begin() == "..") {
    return absl::InvalidArgumentError(absl::StrCat(
        op_dir.string(), ": not an operator directory inside the repository ", root.string()));
  }
  return rel.generic_string();
}

absl::Status GitRepository::CheckCommitted(const std::vector<std::string>& paths) {
  std::vector<std::string> args = {"status", "--porcelain=v1", "-z", "--untracked-files=all", "--"};
  args.insert(args.end(), paths.begin(), paths.end());
  absl::StatusOr<std::string> out = Run(args);
  if (!out.ok()) return out.status();
  std::vector<std::string> files;
  size_t more = 0;
  for (absl::string_view e : absl::StrSplit(*out, '\0', absl::SkipEmpty())) {
    if (e.size() < 4) continue;
    if (files.size() < 10) {
      files.emplace_back(e.substr(3));
    } else {
      ++more;
    }
  }
  if (files.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("uncommitted changes in the operator directories (", absl::StrJoin(files, ", "),
                   more ? absl::StrCat(" and ", more, " more") : "",
                   "): a bisection measures committed revisions only; commit or stash them"));
}

absl::StatusOr<std::string> GitRepository::PackAtRevision(const std::string& revision,
                                                          const std::string& path_in_repo,
                                                          const fs::path& scratch,
                                                          int64_t max_bytes) {
  absl::StatusOr<std::string> tree =
      Run({"ls-tree", "-d", "--name-only", revision, "--", path_in_repo});
  if (!tree.ok()) return tree.status();
  if (absl::StripAsciiWhitespace(*tree).empty()) {
    return absl::NotFoundError(
        absl::StrCat(path_in_repo, " does not exist at ", revision.substr(0, 12)));
  }
  absl::StatusOr<std::string> tar = Run({"archive", "--format=tar", revision, "--", path_in_repo},
                                        static_cast<size_t>(max_bytes) + (1 << 20));
  if (!tar.ok()) return tar.status();
  std::error_code ec;
  std::string templ = (scratch / "npuperf-bisect-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot make a directory in ", scratch.string()));
  }
  const fs::path dir = templ;
  absl::Status unpacked = UnpackBundle(*tar, dir, max_bytes);
  absl::StatusOr<std::string> bundle =
      unpacked.ok() ? PackBundle(dir / path_in_repo, max_bytes) : unpacked;
  fs::remove_all(dir, ec);
  if (!bundle.ok()) {
    return absl::Status(bundle.status().code(),
                        absl::StrCat(path_in_repo, " at ", revision.substr(0, 12), ": ",
                                     bundle.status().message()));
  }
  return bundle;
}

absl::StatusOr<std::vector<std::string>> GitRepository::ChangedFiles(
    const std::string& from, const std::string& to, const std::string& path_in_repo) {
  absl::StatusOr<std::string> out =
      Run({"diff", "--name-only", "-z", from, to, "--", path_in_repo});
  if (!out.ok()) return out.status();
  std::vector<std::string> files;
  for (absl::string_view f : absl::StrSplit(*out, '\0', absl::SkipEmpty())) {
    if (files.size() == 100) break;
    files.emplace_back(f);
  }
  return files;
}

}  // namespace npuperf::client
