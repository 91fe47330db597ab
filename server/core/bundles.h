#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "npuperf/v1/collection_service.pb.h"
#include "server/core/bundle_upload.h"
#include "server/core/metrics.h"
#include "server/store/store.h"

namespace npuperf::server {

// Limits of bundle storage (SchedulerOptions::bundles; flags of
// npuperf-server, docs/operations.md). Every field has its default.
struct BundleOptions {
  // Bytes of bundles one team may store (each bundle it uploaded counts in
  // full, shared content or not); 0: no quota. Default: 2 GiB.
  int64_t quota_bytes = int64_t{2} << 30;
  // A team's bundle no queued or running collection and no pinned baseline
  // needs is deleted once unused (not uploaded, not submitted) this long.
  // Default: 7 days.
  std::chrono::hours retention{24 * 7};
  // Uploads in progress at once, in total and per team. Default: 8 and 2.
  int max_uploads = 8;
  int max_uploads_per_team = 2;
  // Where uploads are written while they arrive (unlinked files). Default:
  // empty, the system temporary directory ($TMPDIR or /tmp).
  std::filesystem::path upload_dir;
};

// Counts uploads in progress, in total and per team; a slot is held for the
// whole upload. Thread-safe.
class UploadSlots {
 public:
  UploadSlots(int max_total, int max_per_team);

  // Holds one slot until destroyed (movable).
  class Slot {
   public:
    Slot(UploadSlots* owner, std::string team) : owner_(owner), team_(std::move(team)) {}
    Slot(Slot&& other) noexcept : owner_(other.owner_), team_(std::move(other.team_)) {
      other.owner_ = nullptr;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;
    ~Slot();

   private:
    UploadSlots* owner_;
    std::string team_;
  };

  // A slot for team; RESOURCE_EXHAUSTED naming the limit when team or the
  // server has every slot in use.
  absl::StatusOr<Slot> Acquire(const std::string& team);
  int in_use();

 private:
  void Release(const std::string& team);

  const int max_total_;
  const int max_per_team_;
  absl::Mutex mu_;
  int total_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> per_team_ ABSL_GUARDED_BY(mu_);
};

// Whether agent_id may download bundle sha256 for job_id: only the lease
// holder of a live job (LEASED or RUNNING), and only its operator's bundle
// (PERMISSION_DENIED otherwise, naming neither the bundle's owner nor
// whether it exists); NOT_FOUND when that bundle is not stored. Pure.
absl::Status CheckBundleDownload(const JobBundle& job, const std::string& agent_id, int64_t job_id,
                                 const std::string& sha256);

// The server's bundles: uploads streamed to disk, checked, admitted against
// the concurrency limits and the team's quota and stored for the team;
// downloads for lease holders only; the collector. Every timestamp comes
// from the clock. Thread-safe; store, clock and metrics must outlive it.
class Bundles {
 public:
  Bundles(Store& store, Clock& clock, ServerMetrics& metrics, BundleOptions options,
          int64_t max_bundle_bytes);

  // Receives (ReceiveBundle, up to max_bundle_bytes), checks and stores one
  // UploadBundle stream for team. RESOURCE_EXHAUSTED, nothing stored, when
  // every upload slot of the team or server is taken or the bundle would
  // pass the team's quota. already_present is true only when team itself
  // had uploaded these bytes.
  absl::StatusOr<v1::UploadBundleResponse> Upload(const std::string& team,
                                                  const ReadUploadMessage& read);

  // Called with each piece of a download: the total size (with the first
  // piece, else 0) and at most kBundleChunkBytes of content; false when the
  // receiver went away.
  using DownloadSink = std::function<bool(int64_t size_bytes, const std::string& piece)>;
  // Streams the bundle of job_id to agent_id (CheckBundleDownload decides).
  absl::Status Download(const std::string& agent_id, int64_t job_id, const std::string& sha256,
                        const DownloadSink& emit);

  // One collector pass (the reaper's): CollectBundles with the retention.
  absl::StatusOr<BundleCollection> Collect();

 private:
  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }
  // Refuses a bundle the team does not own yet that would pass its quota
  // (checked again when it is stored).
  absl::Status AdmitForQuota(const std::string& team, const v1::BundleHeader& header);

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  const BundleOptions options_;
  const int64_t max_bundle_bytes_;
  UploadSlots slots_;
};

}  // namespace npuperf::server
