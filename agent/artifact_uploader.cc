#include "agent/artifact_uploader.h"

#include <fstream>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "agent/constants.h"
#include "common/bundle_tar.h"
#include "common/log.h"
#include "common/sha256.h"

namespace npuperf::agent {
namespace fs = std::filesystem;
namespace {

// sha256 hex of a file, read in pieces.
absl::StatusOr<std::string> HashFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path.string(), ": cannot be read"));
  Sha256 hash;
  std::string buf(64 * 1024, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) hash.Update(std::string_view(buf.data(), in.gcount()));
  }
  return hash.HexDigest();
}

absl::Status WriteAtomically(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return absl::InternalError(absl::StrCat("write ", tmp.string()));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("rename ", path.string(), ": ", ec.message()));
  return absl::OkStatus();
}

// Refusals a resend cannot change.
bool RefusedForGood(const absl::Status& s) {
  return absl::IsInvalidArgument(s) || absl::IsPermissionDenied(s) ||
         absl::IsFailedPrecondition(s) || absl::IsNotFound(s) || absl::IsResourceExhausted(s);
}

}  // namespace

ArtifactUploader::ArtifactUploader(ServerChannel& channel, fs::path jobs_dir, Clock& clock)
    : channel_(channel), jobs_dir_(std::move(jobs_dir)), clock_(clock) {}

absl::Status ArtifactUploader::Prepare(const fs::path& job_dir, const v1::JobAssignment& a,
                                       const std::string& agent_id) {
  const fs::path tar = job_dir / kTarName;
  auto entries = PackRawArchive(job_dir / "session", tar);
  if (!entries.ok()) return entries.status();
  auto sha = HashFile(tar);
  if (!sha.ok()) return sha.status();
  std::error_code ec;
  const auto size = static_cast<int64_t>(fs::file_size(tar, ec));
  if (ec) return absl::InternalError(absl::StrCat(tar.string(), ": ", ec.message()));
  v1::ArtifactHeader h;
  h.set_agent_id(agent_id);
  h.set_job_id(a.job_id());
  h.set_attempt(a.attempt());
  h.set_fencing_token(a.fencing_token());
  h.set_lease_secret(a.lease_secret());
  h.set_name(kTarName);
  h.set_size_bytes(size);
  h.set_sha256(*sha);
  return WriteAtomically(job_dir / kHeaderName, h.SerializeAsString());
}

bool ArtifactUploader::UploadOne(const fs::path& job_dir, const v1::ArtifactHeader& header) {
  auto resp = channel_.UploadArtifact(header, job_dir / kTarName);
  std::error_code ec;
  if (resp.ok()) {
    LogInfo("agent", absl::StrCat("job ", header.job_id(), ": raw output (", header.size_bytes(),
                                  " bytes) stored for round ", resp->round_id(),
                                  resp->already_present() ? " (already there)" : ""));
    fs::remove(job_dir / kTarName, ec);
    return true;
  }
  if (RefusedForGood(resp.status())) {
    LogError("agent", absl::StrCat("job ", header.job_id(), ": raw output refused: ",
                                   resp.status().ToString(), " (kept in ", job_dir.string(), ")"));
    return true;
  }
  LogWarning("agent",
             absl::StrCat("job ", header.job_id(),
                          ": raw output upload failed, retrying: ", resp.status().ToString()));
  return false;
}

void ArtifactUploader::UploadReady(const std::set<std::pair<int64_t, int32_t>>& spooled,
                                   const std::atomic<bool>& stop) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(jobs_dir_, ec); !ec && it != fs::end(it) && !stop;
       it.increment(ec)) {
    const fs::path header_path = it->path() / kHeaderName;
    if (!fs::exists(header_path)) continue;
    std::ifstream in(header_path, std::ios::binary);
    v1::ArtifactHeader header;
    if (!header.ParseFromIstream(&in)) {
      fs::remove(header_path, ec);
      continue;
    }
    if (spooled.count({header.job_id(), header.attempt()}) > 0) continue;  // round not stored yet
    const std::string key = it->path().string();
    auto retry = retries_.find(key);
    if (retry != retries_.end() && clock_.MonotonicNow() < retry->second.second) continue;
    if (UploadOne(it->path(), header)) {
      fs::remove(header_path, ec);
      retries_.erase(key);
      continue;
    }
    if (retry == retries_.end()) {
      retry = retries_
                  .emplace(key, std::make_pair(Backoff(kRetryMin, kRetryMax,
                                                       absl::Uniform<uint64_t>(absl::BitGen())),
                                               clock_.MonotonicNow()))
                  .first;
    }
    retry->second.second = clock_.MonotonicNow() + retry->second.first.Next();
  }
}

}  // namespace npuperf::agent
