#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "server/core/bundle_upload.h"

namespace npuperf::server {

// The artifact directory (--artifact-dir; docs/storage.md, "Artifacts"): the
// bytes of every artifact, content-addressed, beside the metadata rows the
// Store keeps (Store::AttachArtifact). Layout:
//
//   <dir>/sha256/<ab>/<sha256>     one artifact (ab: the first two hex digits)
//   <dir>/tmp/<sha256>.<random>    an upload in progress
//
// An upload is written to tmp/, fsynced, renamed into sha256/<ab>/ and the
// directory fsynced, so a file under sha256/ is always complete and its name
// is the hash of its bytes: the tree can live on a network filesystem shared
// by the replicas or be synced to object storage as is. Two replicas storing
// the same bytes rename identical files over each other. Thread-safe (no
// state but the path).
class ArtifactFiles {
 public:
  // Creates dir, dir/sha256 and dir/tmp (0700) when missing and checks that
  // a file can be made in tmp/; UNAVAILABLE naming the path otherwise. Files
  // left in tmp/ by a crash mid-upload are not touched (another replica may
  // be writing there): docs/storage.md says when to delete them.
  static absl::StatusOr<ArtifactFiles> Open(const std::filesystem::path& dir);

  // A new file in tmp/ for the upload of sha256, and its path.
  struct Pending {
    std::filesystem::path path;
    BundleFile file;
  };
  absl::StatusOr<Pending> Begin(const std::string& sha256) const;
  // fsync, rename into place, fsync the directory. The caller checked the
  // bytes hash to sha256. On failure the temporary file is removed.
  absl::Status Commit(Pending pending, const std::string& sha256) const;
  // Removes a pending upload that will not be committed.
  void Abandon(const Pending& pending) const;

  // Where the bytes of sha256 live (whether or not they exist).
  std::filesystem::path PathOf(const std::string& sha256) const;
  bool Exists(const std::string& sha256) const;
  // The stored bytes, read-only; NOT_FOUND when the file is gone.
  absl::StatusOr<BundleFile> Read(const std::string& sha256) const;
  // Deletes the file of sha256 (absent: fine).
  absl::Status Remove(const std::string& sha256) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  explicit ArtifactFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

}  // namespace npuperf::server
