#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::agent {

// An unprivileged account that runners and msprof run as: children switch to
// it after fork and before exec (setgroups to its supplementary groups,
// setgid, setuid), so operator code never runs as the agent's own account.
struct RunAsUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups, as initgroups(3) would set
  std::string home;
};

// How runners get their account: exactly one of the three (main.cc's flags).
struct RunAsFlags {
  std::string user;   // --run-as USER: one account, for an agent that serves one device
  std::string pool;   // --run-as-pool SPEC: one account per device (ExpandUserPool)
  bool self = false;  // --run-as-self: the agent's own account (a single-user workstation)
};

// Looks `user` up in the passwd and group databases. FAILED_PRECONDITION
// naming the user when it is unknown. Thread-safe.
absl::StatusOr<RunAsUser> LookupUser(const std::string& user);
using UserLookup = std::function<absl::StatusOr<RunAsUser>(const std::string&)>;

// LookupUser, refused (FAILED_PRECONDITION, naming the user) when `agent_euid`
// is not 0: only root can start children as another user.
absl::StatusOr<RunAsUser> ResolveRunAs(const std::string& user, uid_t agent_euid);

// The names of a pool: comma-separated items, each a user name or a range
// NAME<a>..<b> ("npuperf-run0..7" is npuperf-run0, ..., npuperf-run7).
// INVALID_ARGUMENT naming the item when one is malformed or a name repeats.
absl::StatusOr<std::vector<std::string>> ExpandUserPool(const std::string& spec);

// The account of each device: devices[i] gets the pool's i-th user (--run-as:
// its one user). Empty for --run-as-self. FAILED_PRECONDITION / INVALID_ARGUMENT
// naming the flag when none or more than one of the flags is given, --run-as
// is given for more than one device, the pool has fewer users than devices, a
// user is unknown, is root or the agent's own uid, two devices would share a
// uid, or the agent is not root.
absl::StatusOr<std::map<int, RunAsUser>> ResolveRunUsers(const RunAsFlags& flags,
                                                         const std::vector<int>& devices,
                                                         uid_t agent_euid,
                                                         const UserLookup& lookup = LookupUser);

// HOME, USER and LOGNAME of `user`, replacing the agent's own in `env`.
void ApplyRunAsEnv(const RunAsUser& user, std::map<std::string, std::string>* env);

// Gives `root` and everything below it (links themselves, never their targets)
// to uid:gid.
absl::Status ChownTree(const std::filesystem::path& root, uid_t uid, gid_t gid);
inline absl::Status ChownTree(const std::filesystem::path& root, const RunAsUser& user) {
  return ChownTree(root, user.uid, user.gid);
}

}  // namespace npuperf::agent
