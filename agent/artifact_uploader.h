#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "agent/server_channel.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// The raw output of a job kept for the server (keep_raw_output; issue 19),
// beside the attempt's scratch directory:
//
//   <jobs_dir>/<job>-<attempt>/raw.tar.gz       the session directory (the
//                                               PROF trees, logs), gzip tar
//   <jobs_dir>/<job>-<attempt>/artifact.header  its ArtifactHeader (written
//                                               last, by rename): ready
//
// Prepare packs and writes both once the result is spooled; UploadReady (the
// reporter's pass) sends every ready artifact whose result has left the
// spool (the server stores the round first), streaming the file in chunks.
// An upload that succeeds, or that the server refuses for good, removes the
// header (and, when it succeeded, the tar); one the server cannot take now is
// retried after a backoff of its own. Thread-safe for one Prepare caller per
// job and one UploadReady caller (the reporter thread).
class ArtifactUploader {
 public:
  static constexpr const char* kTarName = "raw.tar.gz";
  static constexpr const char* kHeaderName = "artifact.header";

  ArtifactUploader(ServerChannel& channel, std::filesystem::path jobs_dir, Clock& clock);

  // Packs job_dir/session into job_dir/raw.tar.gz and writes the header for
  // the attempt a (as agent_id held its lease). Errors are returned (the
  // caller logs them; the raw tree stays on disk either way).
  absl::Status Prepare(const std::filesystem::path& job_dir, const v1::JobAssignment& a,
                       const std::string& agent_id);

  // Uploads every ready artifact whose (job, attempt) is not in spooled.
  void UploadReady(const std::set<std::pair<int64_t, int32_t>>& spooled,
                   const std::atomic<bool>& stop);

 private:
  // Sends one; true when it is done with (uploaded or refused for good).
  bool UploadOne(const std::filesystem::path& job_dir, const v1::ArtifactHeader& header);

  ServerChannel& channel_;
  const std::filesystem::path jobs_dir_;
  Clock& clock_;
  // Retry times of artifacts the server could not take, by job directory
  // (the reporter thread only).
  std::map<std::string, std::pair<Backoff, Clock::MonotonicTime>> retries_;
};

}  // namespace npuperf::agent
