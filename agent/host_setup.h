#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "absl/status/status.h"

namespace npuperf::agent {

// What keeps runners out of the agent's own files (main.cc calls these once at
// start; the job thread uses FsIdentity).

// Creates the work directory's layout (agent.h) with the modes that keep
// runners out: <work_dir> and jobs/ 0711 (a runner reaches its own job
// directory by name but lists nothing), bundles/ and spool/ 0700. Existing
// directories are chmod-ed to these modes. FAILED_PRECONDITION naming the
// directory when one is not a directory or belongs to another uid than
// `owner`.
absl::Status PrepareWorkDir(const std::filesystem::path& work_dir, uid_t owner);

// A secret file of the agent (what `flag` names: its token, its TLS private
// key) must be readable by its own user only, since whoever reads it can act
// as this agent: FAILED_PRECONDITION naming the flag when the file is missing,
// belongs to another uid than `owner` or has any group/other permission bit.
absl::Status CheckPrivateFile(const std::string& flag, const std::string& path, uid_t owner);
// CheckPrivateFile for --token-file.
absl::Status CheckTokenFile(const std::string& path, uid_t owner);

// The process-wide part: files the agent creates get no group/other bits
// (umask 077) and its /proc entries (environ, fd, maps, mem) are root's, so no
// runner can read them or attach to the agent (PR_SET_DUMPABLE 0).
void HardenAgentProcess();

// For the lifetime of the object, file access of the calling thread (only:
// Linux keeps the filesystem ids per thread) is checked as uid:gid, without
// the capabilities that bypass permissions: the agent reads and writes a job's
// directory with the rights of the job's user, so a link the runner planted
// there cannot make the agent read or write one of the agent's own files.
// Children forked meanwhile inherit it (setuid replaces it). A no-op when the
// caller is not root. Not copyable.
class FsIdentity {
 public:
  FsIdentity(uid_t uid, gid_t gid);
  ~FsIdentity();
  FsIdentity(const FsIdentity&) = delete;
  FsIdentity& operator=(const FsIdentity&) = delete;

 private:
  bool active_ = false;
  uid_t saved_uid_ = 0;
  gid_t saved_gid_ = 0;
};

}  // namespace npuperf::agent
