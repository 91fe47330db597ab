#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/device_lock.h"
#include "agent/health.h"
#include "agent/job_runner.h"
#include "agent/metrics.h"
#include "agent/result_spool.h"
#include "agent/server_channel.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// Configuration of one agent process (flags of npuperf-agent).
struct AgentOptions {
  // Physical device ids served. Required.
  std::vector<int> devices;
  // SoC per device. Default: Ascend910B2 for every device.
  std::map<int, std::string> socs;
  // Host labels for device constraints. Default: none.
  std::map<std::string, std::string> labels;
  // Work directory: bundle cache, per-job scratch, result spool.
  // Default: /var/lib/npuperf-agent.
  std::filesystem::path work_dir = "/var/lib/npuperf-agent";
  std::string host;
  std::string boot_id;
  std::string instance_id;
  std::string version = "0.1.0";
};

// The agent's main loop (register -> session -> lease -> lock -> run ->
// spool -> report), with the work directory laid out as:
//
//   <work_dir>/bundles/<sha256>.tar      verified operator bundles (cache)
//   <work_dir>/jobs/<job>-<attempt>/<operator>/ unpacked operator directory
//   <work_dir>/jobs/<job>-<attempt>/session/  msprof output, collection.log
//   <work_dir>/spool/*.result            results not yet acknowledged
//
// Each running job holds its device lock from before the lease is granted
// until its result is spooled. Thread-safe; Run blocks until stop is set.
class Agent {
 public:
  Agent(ServerChannel& channel, DeviceLocker& locker, ProfilerRunner& runner,
        AgentMetrics& metrics, AgentOptions options, JobRunnerOptions job_options);
  ~Agent();

  // Runs until stop becomes true; running jobs are cancelled and their
  // results spooled before it returns.
  void Run(const std::atomic<bool>& stop);
  // Call after setting stop: ends a pending lease long-poll at once.
  void Stop();
  // What /healthz reports (registration, session contact, jobs, spool).
  HealthInputs Health();

 private:
  struct RunningJob {
    v1::JobAssignment assignment;
    std::atomic<bool> cancel{false};
    std::string cancel_reason;
    std::thread thread;
  };

  // Where one attempt's wall time went (seconds): the job runner's phases
  // plus the agent's own bundle and spool work.
  struct AttemptTimes {
    double bundle = 0;
    JobTimings job;
    double spool = 0;
    // The attempt's time in none of the phases above.
    double Other(double total) const;
    // "12.34 s (bundle 0.01, preflight 0.20, ..., other 0.05)"
    std::string Summary(double total) const;
    void Observe(AgentMetrics& metrics, double total) const;
  };

  bool Register(const std::atomic<bool>& stop);
  void SessionLoop(const std::atomic<bool>& stop);
  void ReporterLoop(const std::atomic<bool>& stop);
  void LeaseOnce(const std::atomic<bool>& stop);
  void StartJob(const v1::JobAssignment& a, std::unique_ptr<DeviceLease> lease);
  void RunJob(RunningJob* job, std::unique_ptr<DeviceLease> lease);
  void SendProgress(RunningJob* job, const v1::JobProgress& p);
  // The result of a finished attempt; outcome is the jobs_total label.
  v1::ReportResultRequest BuildResult(const RunningJob& job, absl::StatusOr<v1::Evidence> evidence,
                                      std::string* outcome);
  absl::StatusOr<std::filesystem::path> PrepareBundle(const v1::JobAssignment& a,
                                                      const std::filesystem::path& dest);
  void CancelJob(int64_t job_id, const std::string& reason);
  void ApplyDirectives(const google::protobuf::RepeatedPtrField<v1::JobDirective>& directives);
  v1::Heartbeat BuildHeartbeat();
  std::vector<v1::RunningJob> RunningJobs();
  void ReapFinished();

  ServerChannel& channel_;
  DeviceLocker& locker_;
  AgentMetrics& metrics_;
  const AgentOptions options_;
  JobRunner job_runner_;
  ResultSpool spool_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::string agent_id_;                             // guarded by mu_
  std::atomic<int> heartbeat_ms_{1000};
  std::atomic<bool> need_register_{true};
  bool spool_dirty_ = false;                         // guarded by mu_
  std::map<int64_t, std::unique_ptr<RunningJob>> running_;  // guarded by mu_
  std::vector<std::unique_ptr<RunningJob>> finished_;      // guarded by mu_
  std::map<int, v1::DeviceState> device_states_;           // guarded by mu_
  // Last registration or session message from the server.
  std::optional<std::chrono::steady_clock::time_point> last_contact_;  // guarded by mu_
};

}  // namespace npuperf::agent
