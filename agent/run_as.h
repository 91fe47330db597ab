#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::agent {

// An unprivileged account that runners and msprof run as (--run-as USER):
// children switch to it after fork and before exec (setgroups to its
// supplementary groups, setgid, setuid), so operator code never runs as the
// agent's own (root) account.
struct RunAsUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, as initgroups(3) would set
  std::string home;
};

// Looks `user` up in the passwd and group databases. Errors (FAILED_PRECONDITION,
// the message naming the user): unknown user; `agent_euid` is not 0, so the
// agent cannot switch users. Thread-safe.
absl::StatusOr<RunAsUser> ResolveRunAs(const std::string& user, uid_t agent_euid);

// HOME, USER and LOGNAME of `user`, replacing the agent's own in `env`.
void ApplyRunAsEnv(const RunAsUser& user, std::map<std::string, std::string>* env);

// Gives `root` and everything below it (links themselves, never their targets)
// to the user and its primary group.
absl::Status ChownTree(const std::filesystem::path& root, const RunAsUser& user);

}  // namespace npuperf::agent
