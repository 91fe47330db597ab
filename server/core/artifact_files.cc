#include "server/core/artifact_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"

namespace npuperf::server {
namespace fs = std::filesystem;
namespace {

absl::Status Unavailable(const fs::path& path, const std::string& what) {
  LogError("artifacts", absl::StrCat(what, " ", path.string()));
  return absl::UnavailableError(absl::StrCat("artifact directory ", path.string(), ": ", what));
}

// fsync of a directory, so a rename into it is durable.
absl::Status SyncDir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Unavailable(dir, std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? absl::OkStatus() : Unavailable(dir, std::strerror(err));
}

}  // namespace

absl::StatusOr<ArtifactFiles> ArtifactFiles::Open(const fs::path& dir) {
  std::error_code ec;
  for (const fs::path& d : {dir, dir / "sha256", dir / "tmp"}) {
    if (fs::create_directories(d, ec); ec) return Unavailable(d, ec.message());
    if (!fs::is_directory(d, ec)) return Unavailable(d, "not a directory");
    fs::permissions(d, fs::perms::owner_all, ec);
  }
  ArtifactFiles files(dir);
  auto probe = files.Begin(std::string(64, '0'));
  if (!probe.ok()) return Unavailable(dir / "tmp", "cannot create files in it");
  files.Abandon(*probe);
  return files;
}

absl::StatusOr<ArtifactFiles::Pending> ArtifactFiles::Begin(const std::string& sha256) const {
  absl::BitGen gen;
  fs::path path = dir_ / "tmp" / absl::StrFormat("%s.%016x", sha256, absl::Uniform<uint64_t>(gen));
  auto file = BundleFile::CreateAt(path);
  if (!file.ok()) return file.status();
  return Pending{std::move(path), *std::move(file)};
}

void ArtifactFiles::Abandon(const Pending& pending) const {
  std::error_code ec;
  fs::remove(pending.path, ec);
}

absl::Status ArtifactFiles::Commit(Pending pending, const std::string& sha256) const {
  const fs::path target = PathOf(sha256);
  std::error_code ec;
  absl::Status s = pending.file.Sync();
  if (s.ok()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) s = Unavailable(target.parent_path(), ec.message());
  }
  if (s.ok()) {
    fs::rename(pending.path, target, ec);
    if (ec) s = Unavailable(target, ec.message());
  }
  if (!s.ok()) {
    Abandon(pending);
    return s;
  }
  return SyncDir(target.parent_path());
}

fs::path ArtifactFiles::PathOf(const std::string& sha256) const {
  return dir_ / "sha256" / sha256.substr(0, 2) / sha256;
}

bool ArtifactFiles::Exists(const std::string& sha256) const {
  std::error_code ec;
  return fs::is_regular_file(PathOf(sha256), ec);
}

absl::StatusOr<BundleFile> ArtifactFiles::Read(const std::string& sha256) const {
  return BundleFile::OpenForRead(PathOf(sha256));
}

absl::Status ArtifactFiles::Remove(const std::string& sha256) const {
  std::error_code ec;
  fs::remove(PathOf(sha256), ec);
  if (ec) return Unavailable(PathOf(sha256), ec.message());
  return absl::OkStatus();
}

}  // namespace npuperf::server
