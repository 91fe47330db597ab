// A bisection's revisions from the user's git repository (issue 34,
// docs/comparisons.md "Bisection"): the first-parent commits from a good to a
// bad revision, and each operator directory packed as it was at a revision,
// straight from git's objects (`git archive`), so nothing is checked out into
// the user's tree and an uncommitted change is never measured by mistake.
//
// git runs as a child process without a shell (argv only), with its output
// bounded and a deadline per call; every error names the flag it came from
// (`--repo`, `--good`, `--bad`, an OPDIR).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"

namespace npuperf::client {

struct GitRevision {
  std::string hash;     // full object name
  std::string subject;  // first line of the message
  std::string author;   // "Name <mail>"
};

// One repository on disk; every call runs git there (Clock: the deadlines).
class GitRepository {
 public:
  GitRepository(std::filesystem::path repo, Clock& clock) : repo_(std::move(repo)), clock_(clock) {}

  const std::filesystem::path& path() const { return repo_; }

  // The output of `git -C repo ARGS...` (stdout), at most max_output bytes,
  // within timeout_ms. Exit != 0: FAILED_PRECONDITION with git's first
  // stderr line; git missing: UNAVAILABLE; too slow: DEADLINE_EXCEEDED; too
  // much output: RESOURCE_EXHAUSTED (git is killed in both cases).
  absl::StatusOr<std::string> Run(const std::vector<std::string>& args,
                                  size_t max_output = 16 << 20, int timeout_ms = 60000);

  // good, then every first-parent commit up to and including bad, oldest
  // first. INVALID_ARGUMENT naming the flag: --repo not a git work tree, a
  // revision that is not a commit, good not an ancestor of bad (or equal),
  // more than max_commits commits (counted before anything is listed).
  absl::StatusOr<std::vector<GitRevision>> FirstParentRange(const std::string& good,
                                                            const std::string& bad,
                                                            int max_commits);

  // The operator directory's path inside the repository (relative to its
  // top, "/"-separated). INVALID_ARGUMENT naming the directory when it is
  // outside the repository or not a directory.
  absl::StatusOr<std::string> PathInRepo(const std::filesystem::path& op_dir);

  // FAILED_PRECONDITION listing up to ten files when any of the paths
  // (inside the repository) has uncommitted or untracked changes: a
  // bisection measures committed revisions only.
  absl::Status CheckCommitted(const std::vector<std::string>& paths_in_repo);

  // The bundle (common/bundle_tar.h, the same bytes PackBundle makes of a
  // checkout) of `path_in_repo` at `revision`, unpacked from `git archive`
  // into a temporary directory under `scratch` and packed again. NOT_FOUND
  // when the directory does not exist at that revision.
  absl::StatusOr<std::string> PackAtRevision(const std::string& revision,
                                             const std::string& path_in_repo,
                                             const std::filesystem::path& scratch,
                                             int64_t max_bytes);

  // The files under path_in_repo that differ between two revisions (git
  // diff --name-only), at most 100.
  absl::StatusOr<std::vector<std::string>> ChangedFiles(const std::string& from,
                                                        const std::string& to,
                                                        const std::string& path_in_repo);

 private:
  absl::StatusOr<std::string> CommitOf(const std::string& flag, const std::string& rev);

  std::filesystem::path repo_;
  Clock& clock_;
};

}  // namespace npuperf::client
