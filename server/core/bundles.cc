#include "server/core/bundles.h"

#include <algorithm>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/core/constants.h"

namespace npuperf::server {

UploadSlots::UploadSlots(int max_total, int max_per_team)
    : max_total_(max_total), max_per_team_(max_per_team) {}

UploadSlots::Slot::~Slot() {
  if (owner_ != nullptr) owner_->Release(team_);
}

absl::StatusOr<UploadSlots::Slot> UploadSlots::Acquire(const std::string& team) {
  absl::MutexLock lock(&mu_);
  int& mine = per_team_[team];
  if (mine >= max_per_team_) {
    if (mine == 0) per_team_.erase(team);
    return absl::ResourceExhaustedError(
        absl::StrCat("team ", team, " has ", max_per_team_,
                     " uploads in progress, its limit (--max-uploads-per-team); retry when one "
                     "finishes"));
  }
  if (total_ >= max_total_) {
    if (mine == 0) per_team_.erase(team);
    return absl::ResourceExhaustedError(
        absl::StrCat("the server has ", max_total_,
                     " uploads in progress, its limit (--max-uploads); retry "
                     "later"));
  }
  ++mine;
  ++total_;
  return Slot(this, team);
}

int UploadSlots::in_use() {
  absl::MutexLock lock(&mu_);
  return total_;
}

void UploadSlots::Release(const std::string& team) {
  absl::MutexLock lock(&mu_);
  --total_;
  if (--per_team_[team] <= 0) per_team_.erase(team);
}

absl::Status CheckBundleDownload(const JobBundle& job, const std::string& agent_id, int64_t job_id,
                                 const std::string& sha256) {
  const bool live = job.state == v1::JOB_STATE_LEASED || job.state == v1::JOB_STATE_RUNNING;
  if (!live || agent_id.empty() || job.agent_id != agent_id) {
    return absl::PermissionDeniedError(absl::StrCat("bundle downloads need a live lease: job ",
                                                    job_id, " is not leased to agent ",
                                                    agent_id.empty() ? "(none given)" : agent_id));
  }
  if (job.bundle_sha256 != sha256) {
    return absl::PermissionDeniedError(
        absl::StrCat("job ", job_id, " does not use bundle ", sha256));
  }
  if (!job.stored) {
    return absl::NotFoundError(
        absl::StrCat("bundle ", sha256, " of job ", job_id, " is no longer stored"));
  }
  return absl::OkStatus();
}

Bundles::Bundles(Store& store, Clock& clock, ServerMetrics& metrics, BundleOptions options,
                 int64_t max_bundle_bytes)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(std::move(options)),
      max_bundle_bytes_(max_bundle_bytes),
      slots_(options_.max_uploads, options_.max_uploads_per_team) {}

absl::Status Bundles::AdmitForQuota(const std::string& team, const v1::BundleHeader& header) {
  if (options_.quota_bytes <= 0) return absl::OkStatus();
  auto owned = store_.UseBundle(team, header.sha256(), NowMs());
  if (!owned.ok() || *owned) return owned.status();
  auto used = store_.BundleBytes(team);
  if (!used.ok()) return used.status();
  if (*used + header.size_bytes() <= options_.quota_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "team ", team, " stores ", *used, " bytes of bundles; this one (", header.size_bytes(),
      " bytes) would pass its quota of ", options_.quota_bytes, " bytes (--bundle-quota-mib)"));
}

absl::StatusOr<v1::UploadBundleResponse> Bundles::Upload(const std::string& team,
                                                         const ReadUploadMessage& read) {
  auto slot = slots_.Acquire(team);
  if (!slot.ok()) {
    metrics_.refused.Add({{"reason", "upload_busy"}}).Increment();
    return slot.status();
  }
  metrics_.uploads_in_flight.Increment();
  absl::Cleanup done = [this] { metrics_.uploads_in_flight.Decrement(); };
  const std::filesystem::path dir =
      options_.upload_dir.empty() ? std::filesystem::temp_directory_path() : options_.upload_dir;
  auto bundle = ReceiveBundle(read, max_bundle_bytes_, dir,
                              [&](const v1::BundleHeader& h) { return AdmitForQuota(team, h); });
  if (!bundle.ok()) {
    if (absl::IsResourceExhausted(bundle.status())) {
      metrics_.refused.Add({{"reason", "bundle_quota"}}).Increment();
    }
    return bundle.status();
  }
  NewBundle b;
  b.team = team;
  b.name = bundle->header.name();
  b.sha256 = bundle->header.sha256();
  b.size_bytes = bundle->header.size_bytes();
  b.quota_bytes = options_.quota_bytes;
  b.now_ms = NowMs();
  b.read = [&bundle](int64_t offset, int64_t max) { return bundle->content.Read(offset, max); };
  absl::StatusOr<bool> existed = store_.StoreBundle(b);
  if (absl::IsResourceExhausted(existed.status())) {
    metrics_.refused.Add({{"reason", "bundle_quota"}}).Increment();
  }
  if (!existed.ok()) return existed.status();
  v1::UploadBundleResponse resp;
  resp.set_sha256(bundle->header.sha256());
  resp.set_size_bytes(bundle->header.size_bytes());
  resp.set_already_present(*existed);
  return resp;
}

absl::Status Bundles::Download(const std::string& agent_id, int64_t job_id,
                               const std::string& sha256, const DownloadSink& emit) {
  auto job = store_.GetJobBundle(job_id);
  if (absl::IsNotFound(job.status())) job = JobBundle();  // refused below like a foreign job
  if (!job.ok()) return job.status();
  if (auto s = CheckBundleDownload(*job, agent_id, job_id, sha256); !s.ok()) {
    metrics_.refused.Add({{"reason", "bundle_download"}}).Increment();
    return s;
  }
  int64_t size = job->size_bytes;
  for (int32_t i = 0; i < job->chunks; ++i) {
    auto chunk = store_.GetBundleChunk(sha256, i);
    if (!chunk.ok()) return chunk.status();
    for (size_t off = 0; off < chunk->size(); off += kBundleChunkBytes) {
      if (!emit(size, chunk->substr(off, kBundleChunkBytes))) {
        return absl::CancelledError("agent went away");
      }
      size = 0;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BundleCollection> Bundles::Collect() {
  const auto cutoff = clock_.SystemNow() - options_.retention;
  auto got = store_.CollectBundles(ToUnixMillis(cutoff));
  if (!got.ok()) return got.status();
  if (got->owners_dropped > 0) {
    metrics_.bundles_deleted.Increment(static_cast<double>(got->bundles_deleted));
    metrics_.bundle_bytes_freed.Increment(static_cast<double>(got->bytes_freed));
    LogInfo("bundles",
            absl::StrCat("collector: ", got->owners_dropped, " unused team bundles dropped, ",
                         got->bundles_deleted, " contents deleted (", got->bytes_freed, " bytes)"));
  }
  return got;
}

}  // namespace npuperf::server
