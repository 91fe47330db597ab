#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/artifact_uploader.h"
#include "agent/bundle_cache.h"
#include "agent/containment.h"
#include "agent/device_lock.h"
#include "agent/job_runner.h"
#include "agent/metrics.h"
#include "agent/progress_sender.h"
#include "agent/result_spool.h"
#include "agent/server_channel.h"
#include "common/clock.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// Why a running attempt was asked to stop. Each one cancels the job runner;
// they differ in what becomes of the result (Attempt::Run).
enum class StopReason {
  kNone,
  kCancelled,  // the collection was cancelled: reported CANCELLED
  kLeaseLost,  // the server no longer holds the lease: the result is dropped
  kShutdown,   // the agent is stopping: reported INTERRUPTED (retryable)
};

// The parts every attempt uses. Owned by the Agent; they outlive its attempts.
struct AttemptServices {
  ServerChannel& channel;
  JobRunner& job_runner;
  BundleCache& bundles;
  ResultSpool& spool;
  // The job's cgroup and the kill-and-verify before its device is free again.
  Containment& containment;
  AgentMetrics& metrics;
  Clock& clock;
  // <work_dir>/jobs: an attempt's scratch is <jobs_dir>/<job>-<attempt>/.
  std::filesystem::path jobs_dir;
  // The agent's current id (it may change when the agent registers again).
  std::function<std::string()> agent_id;
  // Packs the raw output of a succeeded attempt that keeps it
  // (keep_raw_output) for the server.
  ArtifactUploader& artifacts;
  // Sends the attempts' progress, coalesced, off their threads.
  ProgressSender& progress;
};

// One attempt of one leased job, end to end: a fresh scratch directory, the
// bundle (from the cache or downloaded) unpacked under the operator's own name
// (runners may import siblings by it), the job runner, the result built from
// the evidence or the error and the stop reason, the result made durable in
// the spool (or dropped when the lease was lost), every process of the job
// killed and verified gone (Containment::Reclaim), the device lock released,
// and the attempt's metrics and summary log line. Progress goes to the server
// through the ProgressSender (coalesced; the last report before the result
// synchronously); a progress reply that says the lease is gone or the
// collection was cancelled stops the attempt.
// Thread-safe: Run on the job's own thread; Stop and assignment from any thread.
class Attempt {
 public:
  Attempt(const AttemptServices& services, v1::JobAssignment assignment);

  const v1::JobAssignment& assignment() const { return assignment_; }

  // Asks the attempt to stop; the job runner notices within kCancelPoll. The
  // first reason wins (and is logged), except kShutdown, which replaces any
  // earlier one silently. detail: the server's reason of a kCancelled.
  void Stop(StopReason reason, const std::string& detail = "");

  // Runs the attempt on the calling thread and returns when its result is
  // spooled (or dropped); `lease` is released just before.
  void Run(std::unique_ptr<DeviceLease> lease);

 private:
  struct Times;

  // The bundle unpacked into dest (the operator directory).
  absl::StatusOr<std::filesystem::path> PrepareBundle(const std::filesystem::path& dest);
  // Bundle, then the job runner (JobRunner::Discover for a discovery job,
  // else Run); times get both phases. The result's evidence, or its
  // discovery, is set; nothing else.
  absl::StatusOr<v1::ReportResultRequest> Measure(const std::filesystem::path& dir,
                                                  const CgroupTree::Job* cgroup, Times* times);
  // Spools the result unless the lease was lost; returns the jobs_total label.
  std::string Keep(const v1::ReportResultRequest& result, StopReason reason);
  // now: sent on this thread before returning (the report just before the
  // result); otherwise coalesced by the ProgressSender.
  void SendProgress(const v1::JobProgress& progress, bool now = false);
  void SendPhase(v1::JobPhase phase, const std::string& detail = "", bool now = false);
  // A progress reply: a stale or foreign lease, or a cancel, stops the attempt.
  void OnProgressAnswer(const absl::StatusOr<v1::ReportProgressResponse>& resp);
  // The reason and its text as reported ("lease lost", "cancelled: <detail>").
  StopReason stop_reason(std::string* text);

  const AttemptServices& services_;
  const v1::JobAssignment assignment_;
  // The bundle's download failed as the server went away or was unreachable
  // (ServerWentAway): the attempt is reported INTERRUPTED. The job's thread
  // only.
  bool bundle_unreachable_ = false;
  // Set by Stop; polled by the job runner.
  std::atomic<bool> cancel_{false};
  absl::Mutex mu_;
  StopReason reason_ ABSL_GUARDED_BY(mu_) = StopReason::kNone;
  std::string detail_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::agent
