#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"

namespace npuperf::agent {

// The verified operator bundles of this host, by content:
//
//   <dir>/<sha256>.tar      one bundle, exactly as the server sent it
//
// A cached tar is used only while it still hashes to its name (a corrupt entry is
// fetched again); a hit refreshes its mtime. Storing a new tar trims the cache to
// limit_bytes by deleting the least recently used tars, never the one just stored.
// Thread-safe: concurrent Gets of one bundle each write their own temporary file and
// rename it into place (the copies are identical, the last rename wins).
class BundleCache {
 public:
  // Downloads the tar of one bundle (ServerChannel::DownloadBundle in the agent).
  using Fetch = std::function<absl::StatusOr<std::string>(const std::string& sha256)>;

  // clock: the time a cache hit is stamped with (its mtime orders the trim).
  BundleCache(std::filesystem::path dir, int64_t limit_bytes, Clock& clock);

  // The tar of bundle sha256: the cached copy, else fetch's, which is checked against
  // sha256 (DATA_LOSS when it does not match) and stored. A failing fetch's status is
  // returned as is.
  absl::StatusOr<std::string> Get(const std::string& sha256, const Fetch& fetch);

 private:
  // The cached tar when it still matches sha256; empty otherwise.
  std::string ReadVerified(const std::filesystem::path& path, const std::string& sha256);
  // Writes tar to path atomically, then trims the cache.
  void Store(const std::filesystem::path& path, const std::string& tar);
  // Deletes least recently used tars until the cache fits limit_bytes_; keeps `keep`.
  void Trim(const std::filesystem::path& keep);

  const std::filesystem::path dir_;
  const int64_t limit_bytes_;
  Clock& clock_;
};

}  // namespace npuperf::agent
