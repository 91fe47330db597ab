#include "agent/run_as.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace npuperf::agent {
namespace fs = std::filesystem;
namespace {

// "npuperf-run0..7" -> its names; false when item is no range.
bool ExpandRange(absl::string_view item, std::vector<std::string>* out) {
  const size_t dots = item.find("..");
  if (dots == absl::string_view::npos) return false;
  absl::string_view head = item.substr(0, dots);
  size_t digits = head.size();
  while (digits > 0 && absl::ascii_isdigit(head[digits - 1])) --digits;
  int from = 0, to = 0;
  if (digits == 0 || digits == head.size() || !absl::SimpleAtoi(head.substr(digits), &from) ||
      !absl::SimpleAtoi(item.substr(dots + 2), &to) || to < from || to - from > 4096) {
    out->clear();
    return true;
  }
  for (int i = from; i <= to; ++i) out->push_back(absl::StrCat(head.substr(0, digits), i));
  return true;
}

// Which flag ResolveRunUsers reads, and the names it lists.
absl::StatusOr<std::vector<std::string>> FlagNames(const RunAsFlags& flags,
                                                   const std::vector<int>& devices,
                                                   std::string* flag) {
  const int given = !flags.user.empty() + !flags.pool.empty() + flags.self;
  if (given != 1) {
    return absl::InvalidArgumentError(
        given == 0 ? "runners need an account of their own: give --run-as-pool USERS (one "
                     "unprivileged user per device, e.g. npuperf-run0..7), --run-as USER (one "
                     "device), or --run-as-self (runners as the agent's own user, for a "
                     "single-user workstation)"
                   : "--run-as, --run-as-pool and --run-as-self exclude each other");
  }
  if (!flags.user.empty()) {
    *flag = "--run-as";
    if (devices.size() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--run-as ", flags.user, ": ", devices.size(),
                       " devices would share one uid; use --run-as-pool with one user per device"));
    }
    return std::vector<std::string>{flags.user};
  }
  *flag = flags.self ? "--run-as-self" : "--run-as-pool";
  if (flags.self) return std::vector<std::string>{};
  auto names = ExpandUserPool(flags.pool);
  if (!names.ok()) return names.status();
  if (names->size() < devices.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--run-as-pool ", flags.pool, " has ",
                                                   names->size(), " users for ", devices.size(),
                                                   " devices; give one user per device"));
  }
  return names;
}

}  // namespace

absl::StatusOr<RunAsUser> LookupUser(const std::string& user) {
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

absl::StatusOr<RunAsUser> ResolveRunAs(const std::string& user, uid_t agent_euid) {
  if (agent_euid != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--run-as ", user, ": the agent runs as uid ", agent_euid,
                     ", not root, so it cannot start runners as another user"));
  }
  return LookupUser(user);
}

absl::StatusOr<std::vector<std::string>> ExpandUserPool(const std::string& spec) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (absl::string_view raw : absl::StrSplit(spec, ',')) {
    const absl::string_view item = absl::StripAsciiWhitespace(raw);
    std::vector<std::string> expanded;
    if (!ExpandRange(item, &expanded)) {
      if (!item.empty()) expanded.emplace_back(item);
    }
    if (expanded.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--run-as-pool item '", item,
                       "': want a user name or NAME<a>..<b>, e.g. npuperf-run0..7"));
    }
    for (auto& name : expanded) {
      if (!seen.insert(name).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("--run-as-pool names user ", name, " twice"));
      }
      names.push_back(std::move(name));
    }
  }
  return names;
}

absl::StatusOr<std::map<int, RunAsUser>> ResolveRunUsers(const RunAsFlags& flags,
                                                         const std::vector<int>& devices,
                                                         uid_t agent_euid,
                                                         const UserLookup& lookup) {
  std::string flag;
  auto names = FlagNames(flags, devices, &flag);
  if (!names.ok()) return names.status();
  std::map<int, RunAsUser> out;
  if (flags.self) return out;
  if (agent_euid != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, ": the agent runs as uid ", agent_euid,
                     ", not root, so it cannot start runners as other users"));
  }
  std::map<uid_t, std::string> uids;
  for (size_t i = 0; i < devices.size(); ++i) {
    auto user = lookup((*names)[i]);
    if (!user.ok()) return user.status();
    if (user->uid == 0 || user->uid == agent_euid) {
      return absl::FailedPreconditionError(
          absl::StrCat(flag, ": user ", user->name, " is uid ", user->uid,
                       ", the agent's own account; runners need unprivileged users of their own"));
    }
    if (auto [it, fresh] = uids.emplace(user->uid, user->name); !fresh) {
      return absl::FailedPreconditionError(absl::StrCat(flag, ": users ", it->second, " and ",
                                                        user->name, " share uid ", user->uid,
                                                        "; concurrent jobs must not share one"));
    }
    out[devices[i]] = *std::move(user);
  }
  return out;
}

void ApplyRunAsEnv(const RunAsUser& user, std::map<std::string, std::string>* env) {
  (*env)["HOME"] = user.home;
  (*env)["USER"] = user.name;
  (*env)["LOGNAME"] = user.name;
}

absl::Status ChownTree(const fs::path& root, uid_t uid, gid_t gid) {
  auto chown = [&](const fs::path& p) -> absl::Status {
    if (::lchown(p.c_str(), uid, gid) != 0) {
      return absl::InternalError(
          absl::StrCat("chown ", p.string(), " to uid ", uid, ": ", std::strerror(errno)));
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
