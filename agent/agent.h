#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/agent_options.h"
#include "agent/artifact_uploader.h"
#include "agent/attempt.h"
#include "agent/bundle_cache.h"
#include "agent/containment.h"
#include "agent/device_lock.h"
#include "agent/health.h"
#include "agent/job_runner.h"
#include "agent/metrics.h"
#include "agent/npu_smi.h"
#include "agent/result_spool.h"
#include "agent/server_channel.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// The agent's main loop: register -> session -> lease -> lock -> run -> spool
// -> report, with the work directory laid out as:
//
//   <work_dir>/bundles/<sha256>.tar      verified operator bundles (BundleCache)
//   <work_dir>/jobs/<job>-<attempt>/<operator>/ unpacked operator directory
//   <work_dir>/jobs/<job>-<attempt>/session/  msprof output, collection.log
//   <work_dir>/jobs/<job>-<attempt>/raw.tar.gz, artifact.header  the session
//                                        kept for the server (keep_raw_output;
//                                        ArtifactUploader)
//   <work_dir>/spool/*.result            results not yet acknowledged (ResultSpool)
//
// Threads: Run's own (registration, again with the running jobs whenever the
// session or a lease poll fails, and the lease loop: lock every free device,
// offer them in one long-poll, start the assigned job); the session thread (one
// AgentSession stream at a time: heartbeats out, directives and cancels in);
// the reporter thread (resends spooled results until acknowledged, dropping
// those the server refuses for good); one thread per running job
// (Attempt::Run); the progress sender's (ProgressSender: the attempts'
// progress, coalesced). Each running job holds its device lock from before the lease
// is granted until its result is spooled.
// Every pause is a wait on the injected clock under mu_, so Stop (and the state
// changes each pause waits for) end it at once, and a FakeClock drives them in
// tests. Thread-safe; Run blocks until stop is set.
class Agent {
 public:
  // containment: the jobs' cgroups and reclaim (main.cc's, from --cgroup and the
  // run users); null: one without cgroups for job_options.run_users.
  Agent(ServerChannel& channel, DeviceLocker& locker, ProfilerRunner& runner, AgentMetrics& metrics,
        Clock& clock, AgentOptions options, JobRunnerOptions job_options,
        Containment* containment = nullptr);
  ~Agent();

  // Runs until stop becomes true; running jobs are stopped (kShutdown) and
  // their results spooled before it returns.
  void Run(const std::atomic<bool>& stop);
  // Call after setting stop: ends the pending lease long-poll and every pause
  // at once.
  void Stop();
  // What /healthz reports (registration, session contact, jobs, spool).
  HealthInputs Health();

 private:
  // The backoff of a retry loop (registration, reports): kRetryMin..kRetryMax,
  // equal jitter, a random seed per loop.
  static Backoff RetryBackoff();

  struct RunningJob {
    std::unique_ptr<Attempt> attempt;
    std::thread thread;
  };

  bool Register(const std::atomic<bool>& stop);
  v1::RegisterAgentRequest RegistrationRequest();
  void SessionLoop(const std::atomic<bool>& stop);
  void OnSessionResponse(const v1::AgentSessionResponse& response);
  void ReporterLoop(const std::atomic<bool>& stop);
  // What one report did: the result left the spool (acknowledged, or refused
  // for good: INVALID_ARGUMENT, PERMISSION_DENIED, FAILED_PRECONDITION,
  // NOT_FOUND), the server could not take it now (any other refusal: retried
  // after a backoff of its own), or could not be reached (UNAVAILABLE,
  // DEADLINE_EXCEEDED, CANCELLED, UNAUTHENTICATED).
  enum class ReportOutcome { kDone, kRetryLater, kUnreachable };
  struct ReportPass {
    bool unreachable = false;  // every result waits for the reporter's backoff
    std::optional<Clock::MonotonicTime> next_retry;  // the earliest retry time due
  };
  // A result the server could not take: when to send it again.
  struct ResultRetry {
    Backoff backoff;
    Clock::MonotonicTime next;
  };
  // Sends the spooled results in job order, skipping those whose retry time
  // has not come: one refused or failing result never holds the others back;
  // only an unreachable server ends the pass.
  ReportPass ReportPending(const std::atomic<bool>& stop, Backoff& backoff);
  ReportOutcome ReportOne(const v1::ReportResultRequest& result);
  // The (job, attempt) of every result still in the spool: their raw output
  // waits until the server has stored the round.
  std::set<std::pair<int64_t, int32_t>> SpooledAttempts();
  void LeaseOnce(const std::atomic<bool>& stop);
  // Locks every device not in use and returns the lease request offering them
  // (held receives the locks); updates the device states and gauges.
  v1::LeaseJobRequest LockFreeDevices(std::map<int, std::unique_ptr<DeviceLease>>* held);
  // npu-smi readings of the devices not running a job (none without
  // --npu-smi), at most kChipProbeInterval old; kept for the heartbeats and
  // the chip gauges. Runs npu-smi: call without mu_.
  std::map<int, v1::DeviceReading> ReadIdleChips();
  // Device d as the server is told (state, why unhealthy, last reading).
  // REQUIRES: mu_ held.
  void FillDeviceInfo(int d, v1::DeviceInfo* info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartJob(const v1::JobAssignment& a, std::unique_ptr<DeviceLease> lease);
  // Starts an assignment on its device's lock from `held` (taken out); an
  // assignment for a device not held is logged and left to expire.
  void StartAssigned(const v1::JobAssignment& a, std::map<int, std::unique_ptr<DeviceLease>>* held);
  // The job's thread, after Attempt::Run: wakes the reporter, moves the job to
  // finished_ for ReapFinished.
  void FinishJob(int64_t job_id);
  // Stops every running job (kShutdown) and waits for their threads.
  void StopAllJobs();
  void CancelJob(int64_t job_id, StopReason reason, const std::string& detail = "");
  void ApplyDirectives(const google::protobuf::RepeatedPtrField<v1::JobDirective>& directives);
  v1::Heartbeat BuildHeartbeat();
  std::vector<v1::RunningJob> RunningJobs();
  void ReapFinished();
  // Ends every pause whose condition now holds (after stop was set).
  void WakePauses();
  bool NeedsRegister();
  void SetNeedsRegister();
  std::string agent_id();

  ServerChannel& channel_;
  DeviceLocker& locker_;
  AgentMetrics& metrics_;
  Clock& clock_;
  const AgentOptions options_;
  NpuSmiProbe chip_probe_;
  JobRunner job_runner_;
  ResultSpool spool_;
  BundleCache bundles_;
  ArtifactUploader artifacts_;
  std::unique_ptr<Containment> own_containment_;
  Containment& containment_;
  // Declared after the channel and before services_: it outlives no part it
  // sends through, and every attempt's last report was sent or forgotten
  // before StopAllJobs returned.
  ProgressSender progress_;
  const AttemptServices services_;
  // Retry times of spooled results by update uuid (the reporter thread only).
  std::map<std::string, ResultRetry> retries_;

  absl::Mutex mu_;
  std::string agent_id_ ABSL_GUARDED_BY(mu_);
  // Heartbeat period the server asked for.
  int heartbeat_ms_ ABSL_GUARDED_BY(mu_) = 1000;
  // Until the first registration, and again after a session or lease poll failed.
  bool need_register_ ABSL_GUARDED_BY(mu_) = true;
  // A result was spooled since the reporter last looked.
  bool spool_dirty_ ABSL_GUARDED_BY(mu_) = false;
  std::map<int64_t, std::unique_ptr<RunningJob>> running_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<RunningJob>> finished_ ABSL_GUARDED_BY(mu_);
  std::map<int, v1::DeviceState> device_states_ ABSL_GUARDED_BY(mu_);
  // Why a device is unhealthy (npu-smi's critical status, a lock error).
  std::map<int, std::string> device_details_ ABSL_GUARDED_BY(mu_);
  std::map<int, v1::DeviceReading> device_readings_ ABSL_GUARDED_BY(mu_);
  // Last registration or session message from the server.
  std::optional<Clock::MonotonicTime> last_contact_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::agent
