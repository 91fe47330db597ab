#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// Durable outbox of finished attempts (mesos TaskStatusUpdateManager): a
// result is written here (fsync'd, then atomically renamed) before it is
// reported, resent until acknowledged, and replayed after a restart.
//
//   <dir>/<job_id>-<attempt>-<update_uuid>.result   one ReportResultRequest
//
// Thread-safe.
class ResultSpool {
 public:
  explicit ResultSpool(std::filesystem::path dir);

  absl::Status Put(const v1::ReportResultRequest& result);
  // Every pending result, oldest job first.
  absl::StatusOr<std::vector<v1::ReportResultRequest>> Pending();
  // Drops an acknowledged (or hopelessly stale) result.
  void Remove(const v1::ReportResultRequest& result);
  size_t Depth();

 private:
  std::filesystem::path PathOf(const v1::ReportResultRequest& r) const;

  const std::filesystem::path dir_;
  // Serializes the directory operations (a Put's rename against a Pending scan).
  absl::Mutex mu_;
};

}  // namespace npuperf::agent
