#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/metrics.h"
#include "agent/npu_smi.h"
#include "agent/profiler_runner.h"
#include "agent/run_as.h"
#include "agent/sandbox.h"
#include "common/clock.h"
#include "evidence/discovery.h"
#include "evidence/launch.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// What the job runner needs from the host (set once by main.cc).
struct JobRunnerOptions {
  std::string msprof = "msprof";                 // msprof binary (or build/sim-bin/msprof)
  std::string python = "python3";                // interpreter for *.py runners
  std::map<std::string, std::string> agent_env;  // filtered by the allow-list
  std::string host;
  std::string agent_version;
  std::string msprof_version;
  std::string cann_version;
  std::string driver_version;
  // The unprivileged account of each device's runners and msprof (--run-as-pool,
  // resolved by main.cc: one uid per device); needs the agent to run as root.
  // A job on a device without one fails. Default: none (children run as the
  // agent's own user, --run-as-self).
  std::map<int, RunAsUser> run_users;
  // RLIMIT_NPROC of every child that runs as a run user: the bound of a fork
  // bomb where no cgroup holds pids.max (the uid is the job's alone). Default: 0 (none).
  int64_t nproc_limit = 0;
  // --sandbox bwrap: every child runs inside bubblewrap (agent/sandbox.h).
  // Default: none.
  std::optional<SandboxOptions> sandbox = std::nullopt;
  // npu-smi (--npu-smi), read right before and right after the profiled runs
  // of a job: the readings are the round's covariates (fingerprint
  // device_before / device_after); a chip that reads critical fails the
  // attempt (retryable: another device takes it). Default: none.
  std::string npu_smi = "";
  // Where its output goes. Default: <tmp>/npuperf-npu-smi.
  std::filesystem::path npu_smi_scratch = "";
};

// Where the wall time of one attempt went, in seconds (filled by Run; the
// agent adds bundle and spool time, logs them and exports
// npuperf_agent_job_phase_seconds).
struct JobTimings {
  double preflight = 0;  // selector preflight runs of the runner
  double warm_up = 0;    // warm-up runs of the runner (no msprof)
  double msprof = 0;     // msprof runs: metric groups, sample, task-time
  int msprof_runs = 0;
  double parse = 0;  // msprof output -> evidence (and the golden join)
};

// One attempt of one job.
struct JobContext {
  v1::JobAssignment job;
  std::filesystem::path operator_dir;  // unpacked bundle (read-only for us)
  std::filesystem::path session_dir;   // fresh per attempt; collection.log lives here
  std::function<void(const v1::JobProgress&)> progress;
  const std::atomic<bool>* cancel = nullptr;  // set by a cancellation or lost lease
  JobTimings* timings = nullptr;              // optional: where the time went
  // The attempt's scratch directory (holds operator_dir and session_dir): given
  // to the device's run user, mode 0700. Default: none.
  std::filesystem::path job_dir = {};
  // The job's cgroup (ProfilerSpec::cgroup_procs_fd). Default: none.
  int cgroup_procs_fd = -1;
  std::string cgroup = "";
};

// Runs the profiling protocol of one job (one operator x case): warm-ups,
// then the measured runs of its mode, then evidence. Standard: seven metric
// runs and the sample run per repeat. Quick: task-time runs. Compare: the
// standard runs plus the golden ratio of the case (GOLDEN_PERF_REPORT.json of
// the operator directory joined with its case manifest before any run).
// Timeline: one instruction-profiled run and its export (RunTimeline). With
// JobRunnerOptions::run_users every child runs as the device's user under a
// keeper (ProfilerSpec::contain), the job directory is chowned to it (0700),
// and the agent's own reads and writes inside it are checked as that user
// (FsIdentity). Errors: CANCELLED when
// stopped; FAILED_PRECONDITION / INVALID_ARGUMENT for failures a retry cannot
// fix (no runner, selector ignored, target kernel absent); anything else is
// retryable. Every child run appends argv, exit status and output tails to
// <session>/collection.log (never the environment). The job's timeout
// (params.timeout_seconds) and the cancellation poll run on the injected clock.
// Thread-safe: Run may be called from several job threads at once (the agent
// shares one instance); nothing but the injected parts is shared between runs.
class JobRunner {
 public:
  // metrics may be null (tests).
  JobRunner(ProfilerRunner& runner, Clock& clock, JobRunnerOptions options,
            AgentMetrics* metrics = nullptr);

  absl::StatusOr<v1::Evidence> Run(const JobContext& ctx);

  // Discovery (issue 15): the runner once under msprof task-time (after the
  // case-selector preflight, no warm-up) into <session>/discovery, and the
  // candidate table of what it launched (evidence::DiscoverCandidates: count,
  // task type, total us, launches, exact name, incidental reason), with the
  // same session, run-user, timeout and cancellation handling as Run.
  // FAILED_PRECONDITION when the capture holds no kernel row. The attempt
  // calls it for a PROFILE_MODE_DISCOVER job (docs/evidence.md "Discovery").
  absl::StatusOr<evidence::Discovery> Discover(const JobContext& ctx);

 private:
  // Run's parts: the job directory given to the device's user; the protocol
  // (with the agent's file access already that user's).
  static absl::Status GiveJobDir(const JobContext& ctx, const RunAsUser& user);
  // Run's and Discover's prelude: the job's inputs checked, its session created and, with
  // run_users, its directory given to the device's user and the agent's file access that
  // user's while `body` runs.
  template <typename Body>
  auto InJobSession(const JobContext& ctx, Body body) -> decltype(body());
  // The job's deadline (params.timeout_seconds from now) and its runner's command line.
  Clock::MonotonicTime JobDeadline(const JobContext& ctx) const {
    return clock_.MonotonicNow() + std::chrono::seconds(ctx.job.params().timeout_seconds());
  }
  absl::StatusOr<std::vector<std::string>> JobApp(const JobContext& ctx) const;
  absl::StatusOr<v1::Evidence> RunAsJob(const JobContext& ctx);
  struct Child {
    std::vector<std::string> argv;
    std::map<std::string, std::string> env;
    std::string label;              // file stem for stdout/stderr under session_dir
    std::string msprof_group = "";  // for msprof runs: metric group, "Sample" or "TaskTime"
  };
  // Runs one child to completion (or timeout / cancellation).
  absl::Status RunChild(const JobContext& ctx, const Child& child, Clock::MonotonicTime deadline,
                        std::string* stdout_text);
  // RunChild's stages: the spec of a child; its wait, polling ctx.cancel every
  // kCancelPoll and terminating it when cancelled or past the deadline; its
  // msprof_runs count; its collection.log entry.
  ProfilerSpec SpecFor(const JobContext& ctx, const Child& child, const std::string& out,
                       const std::string& err) const;
  ExitStatus AwaitChild(const JobContext& ctx, ProfilerProcess& process,
                        Clock::MonotonicTime deadline, bool* cancelled);
  void CountMsprofRun(const Child& child, bool cancelled, bool timed_out, const ExitStatus& status);
  static void AppendLog(const JobContext& ctx, const Child& child, bool cancelled,
                        const ExitStatus& status, const std::filesystem::path& out,
                        const std::string& stderr_tail);
  absl::Status Preflight(const JobContext& ctx, const std::vector<std::string>& base_app,
                         Clock::MonotonicTime deadline);
  absl::Status WarmUp(const JobContext& ctx, const std::vector<std::string>& app,
                      Clock::MonotonicTime deadline);
  // golden_us: the case's golden per-iteration E2E time (compare mode).
  // launch: which of the target's launches in each run (JobAssignment.launch).
  absl::StatusOr<v1::Evidence> RunStandard(const JobContext& ctx,
                                           const std::vector<std::string>& app,
                                           Clock::MonotonicTime deadline,
                                           std::optional<double> golden_us,
                                           const evidence::LaunchSelector& launch);
  // Compare mode: the golden per-iteration E2E time of the job's case, from the
  // operator directory's GOLDEN_PERF_REPORT.json joined with its case manifest;
  // nullopt without a golden JSON. FAILED_PRECONDITION when the join fails.
  static absl::StatusOr<std::optional<double>> GoldenForCase(const JobContext& ctx);
  absl::StatusOr<v1::Evidence> RunQuick(const JobContext& ctx, const std::vector<std::string>& app,
                                        Clock::MonotonicTime deadline,
                                        const evidence::LaunchSelector& launch);
  // Timeline mode (timeline_run.cc): one msprof run with --instr-profiling=on,
  // its export with the BIU section, and the timeline evidence of the
  // target's window (Evidence.timeline, the document as evidence_json, no
  // durations). FAILED_PRECONDITION when the capture lacks its device's
  // biu_perf.db or the target's window is not found exactly once.
  absl::StatusOr<v1::Evidence> RunTimeline(const JobContext& ctx,
                                           const std::vector<std::string>& app,
                                           Clock::MonotonicTime deadline);
  // Adds a finished child's wall time to ctx.timings by kind.
  static void Account(const JobContext& ctx, const Child& child,
                      Clock::MonotonicTime::duration took);
  void AddParseTime(const JobContext& ctx, Clock::MonotonicTime started);
  void Report(const JobContext& ctx, v1::JobPhase phase, int step, int steps,
              const std::string& detail, int repeat = 0, int repeats = 0);
  void FillFingerprint(const JobContext& ctx, const std::vector<std::string>& app,
                       v1::Evidence* e) const;

  // The chip before the profiled runs: a critical one ends the attempt
  // (UNAVAILABLE); a warning or a low clock becomes an evidence warning.
  absl::StatusOr<v1::DeviceReading> ChipBefore(const JobContext& ctx);
  // The chip after them, attached with `before` to the fingerprint; a chip
  // gone critical meanwhile ends the attempt (UNAVAILABLE).
  absl::Status ChipAfter(const JobContext& ctx, v1::DeviceReading before, v1::Evidence* e);

  ProfilerRunner& runner_;
  Clock& clock_;
  const JobRunnerOptions options_;
  NpuSmiProbe chip_probe_;
  AgentMetrics* metrics_;
};

}  // namespace npuperf::agent
