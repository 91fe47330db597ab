#include "agent/run_as.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace npuperf::agent {
namespace fs = std::filesystem;

absl::StatusOr<RunAsUser> ResolveRunAs(const std::string& user, uid_t agent_euid) {
  if (agent_euid != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--run-as ", user, ": the agent runs as uid ", agent_euid,
                     ", not root, so it cannot start runners as another user"));
  }
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  const int e = ::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("--run-as ", user, ": unknown user",
                     e != 0 ? absl::StrCat(" (", std::strerror(e), ")") : ""));
  }
  RunAsUser out;
  out.name = user;
  out.uid = pw.pw_uid;
  out.gid = pw.pw_gid;
  out.home = pw.pw_dir != nullptr ? pw.pw_dir : "/";
  int n = 32;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  while (::getgrouplist(user.c_str(), out.gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n) + 1);
    n = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<size_t>(n));
  out.groups = std::move(groups);
  return out;
}

void ApplyRunAsEnv(const RunAsUser& user, std::map<std::string, std::string>* env) {
  (*env)["HOME"] = user.home;
  (*env)["USER"] = user.name;
  (*env)["LOGNAME"] = user.name;
}

absl::Status ChownTree(const fs::path& root, const RunAsUser& user) {
  auto chown = [&](const fs::path& p) -> absl::Status {
    if (::lchown(p.c_str(), user.uid, user.gid) != 0) {
      return absl::InternalError(
          absl::StrCat("chown ", p.string(), " to ", user.name, ": ", std::strerror(errno)));
    }
    return absl::OkStatus();
  };
  if (auto s = chown(root); !s.ok()) return s;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (auto s = chown(it->path()); !s.ok()) return s;
  }
  if (ec) return absl::InternalError(absl::StrCat("walk ", root.string(), ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace npuperf::agent
