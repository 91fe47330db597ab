#include "server/core/artifacts.h"

#include <algorithm>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/bundle_tar.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/constants.h"
#include "server/core/job_rules.h"

namespace npuperf::server {
namespace {

// Sweep passes delete at most this many rows each.
constexpr int32_t kSweepBatch = 500;
constexpr size_t kMaxArtifactNameBytes = 128;

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxArtifactNameBytes || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

v1::RoundArtifact ToRoundArtifact(const ArtifactRecord& r) {
  v1::RoundArtifact a;
  a.set_name(r.name);
  a.set_sha256(r.sha256);
  a.set_size_bytes(r.size_bytes);
  *a.mutable_created_at() = google::protobuf::util::TimeUtil::MillisecondsToTimestamp(r.created_ms);
  return a;
}

Artifacts::Artifacts(Store& store, Clock& clock, ServerMetrics& metrics, ArtifactOptions options)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(std::move(options)),
      slots_(options_.max_uploads, options_.max_uploads_per_agent) {
  if (options_.dir.empty()) return;
  auto files = ArtifactFiles::Open(options_.dir);
  if (files.ok()) {
    files_ = *std::move(files);
  } else {
    status_ = files.status();
  }
}

absl::StatusOr<ArtifactTarget> Artifacts::Admit(const NewArtifact& a) {
  if (!files_) {
    return absl::FailedPreconditionError(
        "this server keeps no artifacts (start it with --artifact-dir)");
  }
  if (!ValidName(a.name)) {
    return InvalidArgumentWithFields(
        {{"header.name", "1..128 bytes of [A-Za-z0-9._-], not starting with a dot"}});
  }
  if (auto s = CheckUploadHeader(a.sha256, a.size_bytes, options_.max_bytes, "artifact",
                                 "--max-artifact-mib");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<ArtifactTarget> t = store_.CheckArtifact(a);
  if (auto why = AgentRefusalOf(t.status())) {
    metrics_.CountAgentRefusal("UploadArtifact", AgentRefusalName(*why));
  } else if (absl::IsResourceExhausted(t.status())) {
    metrics_.refused.Add({{"reason", "artifact_quota"}}).Increment();
  }
  return t;
}

absl::Status Artifacts::Receive(const NewArtifact& a, const ReadMessage& read) {
  auto pending = files_->Begin(a.sha256);
  if (!pending.ok()) return pending.status();
  v1::UploadArtifactRequest msg;
  auto next = [&](std::string* chunk) -> absl::StatusOr<bool> {
    if (!read(&msg)) return false;
    if (!msg.has_chunk()) return InvalidArgumentWithFields({{"chunk", "expected artifact bytes"}});
    *chunk = std::move(*msg.mutable_chunk());
    return true;
  };
  absl::Status s = ReceiveChunks(next, a.sha256, a.size_bytes, pending->file);
  if (s.ok()) {
    s = VerifyRawArchiveFd(pending->file.fd(), options_.max_bytes * kMaxArtifactUnpackedFactor);
    if (!s.ok()) s = InvalidArgumentWithFields({{"chunk", std::string(s.message())}});
  }
  if (!s.ok()) {
    files_->Abandon(*pending);
    return s;
  }
  return files_->Commit(*std::move(pending), a.sha256);
}

absl::StatusOr<v1::UploadArtifactResponse> Artifacts::Upload(const v1::ArtifactHeader& header,
                                                             const ReadMessage& read) {
  NewArtifact a;
  a.agent_id = header.agent_id();
  a.ref = {header.job_id(), header.attempt(), header.fencing_token(), header.lease_secret()};
  a.name = header.name();
  a.sha256 = header.sha256();
  a.size_bytes = header.size_bytes();
  a.quota_bytes = options_.quota_bytes;
  a.team_quota_bytes = TeamArtifactQuotas(options_.teams);
  a.now_ms = NowMs();
  absl::StatusOr<ArtifactTarget> t = Admit(a);
  if (!t.ok()) return t.status();
  const bool have_file = files_->Exists(a.sha256);
  if (!t->already_present || !have_file) {
    auto slot = slots_.Acquire(a.agent_id);
    if (!slot.ok()) {
      metrics_.refused.Add({{"reason", "upload_busy"}}).Increment();
      return slot.status();
    }
    metrics_.uploads_in_flight.Increment();
    absl::Cleanup done = [this] { metrics_.uploads_in_flight.Decrement(); };
    if (auto s = Receive(a, read); !s.ok()) return s;
  }
  t = store_.AttachArtifact(a);
  if (!t.ok()) {
    // Refused after all (a concurrent attach took the quota): the file goes
    // unless another round references the same bytes.
    auto referenced = store_.ArtifactReferenced(a.sha256);
    if (referenced.ok() && !*referenced) (void)files_->Remove(a.sha256);
    if (absl::IsResourceExhausted(t.status())) {
      metrics_.refused.Add({{"reason", "artifact_quota"}}).Increment();
    }
    return t.status();
  }
  if (!t->already_present) metrics_.artifact_bytes_stored.Increment(a.size_bytes);
  v1::UploadArtifactResponse resp;
  resp.set_round_id(t->round_id);
  resp.set_already_present(t->already_present);
  *resp.mutable_artifact() =
      ToRoundArtifact({t->round_id, t->team, a.name, a.sha256, a.size_bytes, t->created_ms});
  return resp;
}

absl::Status Artifacts::Download(const std::string& team, const v1::DownloadArtifactRequest& req,
                                 const Bundles::DownloadSink& emit) {
  if (req.round_id() <= 0) return InvalidArgumentWithFields({{"round_id", "must be a round id"}});
  if (!IsSha256Hex(req.sha256())) {
    return InvalidArgumentWithFields({{"sha256", "must be 64 lowercase hex digits"}});
  }
  auto listed = store_.ListArtifacts(team, req.round_id());
  if (!listed.ok()) return listed.status();
  const bool found = std::any_of(listed->begin(), listed->end(),
                                 [&](const ArtifactRecord& r) { return r.sha256 == req.sha256(); });
  if (!found || !files_) {
    return absl::NotFoundError(
        absl::StrCat("round ", req.round_id(), " has no artifact ", req.sha256()));
  }
  auto file = files_->Read(req.sha256());
  if (!file.ok()) {
    return absl::Status(file.status().code(),
                        absl::StrCat("artifact ", req.sha256(), " of round ", req.round_id(), ": ",
                                     file.status().message()));
  }
  int64_t size = file->size();
  for (int64_t off = 0; off < file->size(); off += static_cast<int64_t>(kBundleChunkBytes)) {
    auto piece = file->Read(off, static_cast<int64_t>(kBundleChunkBytes));
    if (!piece.ok()) return piece.status();
    if (!emit(size, *piece)) return absl::CancelledError("client went away");
    size = 0;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Artifacts::SweepPass(const ArtifactSweepPass& pass) {
  int64_t deleted = 0;
  for (;;) {
    auto swept = store_.SweepArtifacts(pass.created_before_ms, kSweepBatch, pass.scope);
    if (!swept.ok()) return swept.status();
    int64_t bytes = 0;
    for (const ArtifactRecord& r : swept->deleted) bytes += r.size_bytes;
    for (const std::string& sha : swept->unreferenced) {
      if (auto s = files_->Remove(sha); !s.ok()) LogError("artifacts", std::string(s.message()));
    }
    const auto n = static_cast<int64_t>(swept->deleted.size());
    metrics_.artifacts_swept.Increment(static_cast<double>(n));
    metrics_.artifact_bytes_swept.Increment(static_cast<double>(bytes));
    deleted += n;
    if (n < kSweepBatch) break;
  }
  return deleted;
}

absl::StatusOr<int64_t> Artifacts::Sweep() {
  if (!files_) return 0;
  int64_t deleted = 0;
  for (const ArtifactSweepPass& pass :
       PlanArtifactSweep(options_.retention, options_.teams, NowMs())) {
    auto n = SweepPass(pass);
    if (!n.ok()) return n.status();
    deleted += *n;
  }
  if (deleted > 0) LogInfo("artifacts", absl::StrCat("sweep: ", deleted, " artifacts deleted"));
  return deleted;
}

}  // namespace npuperf::server
