#include "agent/host_setup.h"

#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npuperf::agent {
namespace fs = std::filesystem;

namespace {

absl::Status PrepareDir(const fs::path& dir, mode_t mode, uid_t owner) {
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("mkdir ", dir.string(), ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(dir.string(), " is not a directory"));
  }
  if (st.st_uid != owner) {
    return absl::FailedPreconditionError(absl::StrCat(dir.string(), " belongs to uid ", st.st_uid,
                                                      ", not to the agent's uid ", owner));
  }
  if (::chmod(dir.c_str(), mode) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("chmod ", dir.string(), ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PrepareWorkDir(const fs::path& work_dir, uid_t owner) {
  std::error_code ec;
  fs::create_directories(work_dir.parent_path(), ec);
  if (auto s = PrepareDir(work_dir, 0711, owner); !s.ok()) return s;
  for (const auto& [name, mode] : {std::pair{"jobs", 0711}, {"bundles", 0700}, {"spool", 0700}}) {
    if (auto s = PrepareDir(work_dir / name, static_cast<mode_t>(mode), owner); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckPrivateFile(const std::string& flag, const std::string& path, uid_t owner) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(flag, " ", path, ": ", std::strerror(errno)));
  }
  if (st.st_uid != owner || (st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s %s: owned by uid %d with mode %04o; it must be readable by the agent's user (uid %d) "
        "only, since whoever reads it can act as this agent: chown it and chmod 600",
        flag, path, st.st_uid, st.st_mode & 07777, owner));
  }
  return absl::OkStatus();
}

absl::Status CheckTokenFile(const std::string& path, uid_t owner) {
  return CheckPrivateFile("--token-file", path, owner);
}

void HardenAgentProcess() {
  ::umask(077);
  ::prctl(PR_SET_DUMPABLE, 0);
}

FsIdentity::FsIdentity(uid_t uid, gid_t gid) {
  if (::geteuid() != 0) return;
  // setfsuid returns the previous id; the gid first, while still privileged.
  saved_gid_ = static_cast<gid_t>(::setfsgid(gid));
  saved_uid_ = static_cast<uid_t>(::setfsuid(uid));
  active_ = true;
}

FsIdentity::~FsIdentity() {
  if (!active_) return;
  ::setfsuid(saved_uid_);
  ::setfsgid(saved_gid_);
}

}  // namespace npuperf::agent
