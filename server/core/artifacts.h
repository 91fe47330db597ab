#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/query_service.pb.h"
#include "server/core/artifact_files.h"
#include "server/core/artifact_rules.h"
#include "server/core/bundles.h"
#include "server/core/metrics.h"
#include "server/store/store.h"

namespace npuperf::server {

// Limits of artifact storage (SchedulerOptions::artifacts; flags of
// npuperf-server, docs/operations.md). Every field has its default.
struct ArtifactOptions {
  // The artifact directory (ArtifactFiles). Empty: the server keeps no
  // artifacts and refuses uploads (FAILED_PRECONDITION). Default: empty;
  // npuperf-server defaults it to <db>.artifacts beside a SQLite database.
  std::filesystem::path dir;
  // Largest artifact accepted (compressed bytes). Default: 512 MiB.
  int64_t max_bytes = int64_t{512} << 20;
  // Bytes of artifacts one team may store; 0: no quota. Default: 8 GiB.
  int64_t quota_bytes = int64_t{8} << 30;
  // Artifacts older than this are deleted by the sweep, unless a pinned
  // baseline references their round; 0: kept until deleted by hand.
  // Default: 30 days.
  std::chrono::milliseconds retention{std::chrono::hours(24 * 30)};
  // Teams with a retention and quota of their own (--artifact-retention-team,
  // artifact_rules.h), replacing retention and quota_bytes for them.
  // Default: none.
  std::map<std::string, TeamArtifactPolicy> teams;
  // Artifact uploads in progress at once, in total and per agent. Default:
  // 4 and 1.
  int max_uploads = 4;
  int max_uploads_per_agent = 1;
};

// The largest unpacked size of an artifact the server accepts: this many
// times ArtifactOptions::max_bytes (msprof output compresses well).
inline constexpr int64_t kMaxArtifactUnpackedFactor = 32;

// An artifact as a round lists it.
v1::RoundArtifact ToRoundArtifact(const ArtifactRecord& r);

// The server's artifacts (issue 19): raw msprof output an agent uploads for
// the round of its succeeded attempt, kept in the artifact directory
// (ArtifactFiles) with metadata rows in the Store; team-scoped downloads;
// the retention sweep. Every timestamp comes from the clock. Thread-safe;
// store, clock and metrics must outlive it.
class Artifacts {
 public:
  // Opens options.dir (when set); status() says whether that worked.
  Artifacts(Store& store, Clock& clock, ServerMetrics& metrics, ArtifactOptions options);

  // OK when artifacts are kept, or the directory's error (the server fails
  // its start with it), or OK with enabled() false when no directory is set.
  const absl::Status& status() const { return status_; }
  bool enabled() const { return files_.has_value(); }

  // Reads the next message of an UploadArtifact stream; false at its end.
  using ReadMessage = std::function<bool(v1::UploadArtifactRequest* msg)>;
  // Receives one upload whose header (the stream's first message) names an
  // agent the caller may act for: the header is checked (name, sha256,
  // size up to max_bytes: RESOURCE_EXHAUSTED naming --max-artifact-mib), the
  // attempt and the team's quota decided (Store::CheckArtifact) before any
  // byte is read, the bytes streamed to a temporary file, hashed, checked as
  // a safe gzip tar, renamed into place and attached (Store::AttachArtifact).
  // An artifact the round already lists whose file exists is not read again
  // (already_present).
  absl::StatusOr<v1::UploadArtifactResponse> Upload(const v1::ArtifactHeader& header,
                                                    const ReadMessage& read);

  // Streams artifact req.sha256 of round req.round_id of team to emit (at
  // most kBundleChunkBytes per piece, the size with the first); NOT_FOUND
  // when team's round does not list it or its file is gone.
  absl::Status Download(const std::string& team, const v1::DownloadArtifactRequest& req,
                        const Bundles::DownloadSink& emit);

  // One retention run (the reaper's): deletes the artifacts older than
  // their team's retention (its own, else the default) that no pinned
  // baseline needs, then the files no row references any more
  // (artifact_rules.h PlanArtifactSweep). A no-op when artifacts are off.
  absl::StatusOr<int64_t> Sweep();

 private:
  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }
  // The header's checks and the store's decision (no byte read yet).
  absl::StatusOr<ArtifactTarget> Admit(const NewArtifact& a);
  // One pass of a retention run, in batches of kSweepBatch rows.
  absl::StatusOr<int64_t> SweepPass(const ArtifactSweepPass& pass);
  // Streams the rest of the upload into a file under the artifact
  // directory and renames it into place once checked.
  absl::Status Receive(const NewArtifact& a, const ReadMessage& read);

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  const ArtifactOptions options_;
  std::optional<ArtifactFiles> files_;
  absl::Status status_;
  UploadSlots slots_;
};

}  // namespace npuperf::server
