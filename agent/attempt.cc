#include "agent/attempt.h"

#include <unistd.h>

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/constants.h"
#include "agent/discovery_report.h"
#include "common/bundle_tar.h"
#include "common/log.h"

namespace npuperf::agent {
namespace fs = std::filesystem;

namespace {

std::string NewUuid() {
  absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

// A stop reason as logs and failure reasons spell it.
std::string StopText(StopReason reason, const std::string& detail) {
  switch (reason) {
    case StopReason::kCancelled: return "cancelled: " + detail;
    case StopReason::kLeaseLost: return "lease lost";
    case StopReason::kShutdown: return "agent shutting down";
    case StopReason::kNone: break;
  }
  return "";
}

// The npuperf_agent_jobs_total label of a spooled result.
const char* OutcomeLabel(v1::AttemptOutcome outcome) {
  switch (outcome) {
    case v1::ATTEMPT_OUTCOME_SUCCEEDED: return "succeeded";
    case v1::ATTEMPT_OUTCOME_INTERRUPTED: return "interrupted";
    case v1::ATTEMPT_OUTCOME_CANCELLED: return "cancelled";
    default: return "failed";
  }
}

// The result of a finished attempt, all but its agent id: the evidence (or
// discovery) measured, else why it stopped (reason, spelled reason_text),
// else the job runner's error.
// server_unreachable: the bundle could not be fetched because the server
// was unreachable or going away (a restart, a network fault). That says
// nothing of the job: the attempt is INTERRUPTED, as when the agent stops,
// and the server queues it again (within its lost-attempt limit) instead of
// spending the job's retries on it.
v1::ReportResultRequest BuildResult(const v1::JobAssignment& a,
                                    absl::StatusOr<v1::ReportResultRequest> evidence,
                                    StopReason reason, const std::string& reason_text,
                                    bool server_unreachable) {
  v1::ReportResultRequest result;
  if (evidence.ok()) result = *std::move(evidence);
  result.set_job_id(a.job_id());
  result.set_attempt(a.attempt());
  result.set_fencing_token(a.fencing_token());
  result.set_lease_secret(a.lease_secret());  // spooled with it: a resend presents it too
  result.set_update_uuid(NewUuid());
  if (evidence.ok()) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  } else if (reason == StopReason::kShutdown) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_INTERRUPTED);
    result.set_failure_reason("the agent stopped during the job");
    result.set_retryable(true);
  } else if (reason != StopReason::kNone) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_CANCELLED);
    result.set_failure_reason(reason_text);
  } else if (server_unreachable) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_INTERRUPTED);
    result.set_failure_reason(
        absl::StrCat("the server was unreachable for the bundle: ", evidence.status().message()));
    result.set_retryable(true);
  } else {
    const absl::Status& s = evidence.status();
    result.set_outcome(v1::ATTEMPT_OUTCOME_FAILED);
    result.set_failure_reason(std::string(s.message()));
    result.set_retryable(!absl::IsFailedPrecondition(s) && !absl::IsInvalidArgument(s));
  }
  return result;
}

}  // namespace

// Where one attempt's wall time went (seconds): the job runner's phases plus
// the attempt's own bundle and spool work.
struct Attempt::Times {
  double bundle = 0;
  JobTimings job;
  double spool = 0;

  // The attempt's time in none of the phases above.
  double Other(double total) const {
    return std::max(0.0,
                    total - bundle - job.preflight - job.warm_up - job.msprof - job.parse - spool);
  }
  // "12.34 s (bundle 0.01, preflight 0.20, ..., other 0.05)"
  std::string Summary(double total) const {
    return absl::StrFormat(
        "%.2f s (bundle %.2f, preflight %.2f, warm-up %.2f, msprof %.2f in %d runs, parse %.2f, "
        "spool %.2f, other %.2f)",
        total, bundle, job.preflight, job.warm_up, job.msprof, job.msprof_runs, job.parse, spool,
        Other(total));
  }
  void Observe(AgentMetrics& metrics, double total) const {
    metrics.ObservePhase("bundle", bundle);
    metrics.ObservePhase("preflight", job.preflight);
    metrics.ObservePhase("warm_up", job.warm_up);
    metrics.ObservePhase("msprof", job.msprof);
    metrics.ObservePhase("parse", job.parse);
    metrics.ObservePhase("spool", spool);
    metrics.ObservePhase("other", Other(total));
  }
};

Attempt::Attempt(const AttemptServices& services, v1::JobAssignment assignment)
    : services_(services), assignment_(std::move(assignment)) {}

void Attempt::Stop(StopReason reason, const std::string& detail) {
  absl::MutexLock lock(&mu_);
  if (reason == StopReason::kShutdown) {
    reason_ = reason;
    cancel_ = true;
    return;
  }
  if (cancel_) return;
  reason_ = reason;
  detail_ = detail;
  cancel_ = true;
  LogInfo("agent", absl::StrCat("job ", assignment_.job_id(), ": stopping (",
                                StopText(reason, detail), ")"));
}

StopReason Attempt::stop_reason(std::string* text) {
  absl::MutexLock lock(&mu_);
  *text = StopText(reason_, detail_);
  return reason_;
}

void Attempt::Run(std::unique_ptr<DeviceLease> lease) {
  Clock& clock = services_.clock;
  const auto started = clock.MonotonicNow();
  const v1::JobAssignment& a = assignment_;
  const fs::path dir = services_.jobs_dir / absl::StrCat(a.job_id(), "-", a.attempt());
  std::error_code ec;
  fs::remove_all(dir, ec);
  SendPhase(v1::JOB_PHASE_PREPARING);
  Times times;
  auto cgroup = services_.containment.Enter(absl::StrCat("job-", a.job_id(), "-", a.attempt()));
  absl::StatusOr<v1::ReportResultRequest> evidence =
      cgroup.ok() ? Measure(dir, cgroup->get(), &times)
                  : absl::UnavailableError(absl::StrCat("job cgroup: ", cgroup.status().message()));
  if (evidence.ok()) {
    SendPhase(
        v1::JOB_PHASE_UPLOADING,
        absl::StrCat("measured: ", times.Summary(SecondsBetween(started, clock.MonotonicNow()))),
        /*now=*/true);
  } else {
    services_.progress.Forget(a.job_id(), a.attempt());  // a waiting report says nothing now
  }
  const bool ok = evidence.ok();
  std::string reason_text;
  const StopReason reason = stop_reason(&reason_text);
  v1::ReportResultRequest result =
      BuildResult(a, std::move(evidence), reason, reason_text, bundle_unreachable_);
  result.set_agent_id(services_.agent_id());
  const auto spool_started = clock.MonotonicNow();
  const std::string outcome = Keep(result, reason);
  times.spool = SecondsBetween(spool_started, clock.MonotonicNow());
  // A report a heartbeat has not taken yet says nothing the result does not.
  services_.progress.Forget(a.job_id(), a.attempt());
  // Nothing of the job may outlive it: not a daemon, not a fork bomb, not a
  // writer into its scratch directory.
  services_.containment.Reclaim(a.device_id(), cgroup.ok() ? *std::move(cgroup) : nullptr);
  if (!a.params().keep_raw_output()) {
    fs::remove_all(dir, ec);
  } else if (services_.containment.user(a.device_id()) != nullptr) {
    // Kept output is the agent's again: the device's next job has the same uid.
    (void)ChownTree(dir, ::geteuid(), ::getegid());
  }
  const double total = SecondsBetween(started, clock.MonotonicNow());
  services_.metrics.jobs.Add({{"outcome", outcome}}).Increment();
  services_.metrics.job_duration_seconds.Observe(total);
  times.Observe(services_.metrics, total);
  LogInfo("agent", absl::StrCat("job ", a.job_id(), " attempt ", a.attempt(), " ", outcome, " in ",
                                times.Summary(total),
                                ok ? "" : absl::StrCat(": ", result.failure_reason())));
  lease.reset();  // the device is free once the result is durable
  if (a.params().keep_raw_output() && result.has_evidence() &&
      result.outcome() == v1::ATTEMPT_OUTCOME_SUCCEEDED && outcome != "lease_lost") {
    if (auto s = services_.artifacts.Prepare(dir, a, result.agent_id()); !s.ok()) {
      LogError("agent", absl::StrCat("job ", a.job_id(), ": cannot pack raw output: ", s.ToString(),
                                     " (kept in ", dir.string(), ")"));
    }
  }
}

absl::StatusOr<v1::ReportResultRequest> Attempt::Measure(const fs::path& dir,
                                                         const CgroupTree::Job* cgroup,
                                                         Times* times) {
  const auto bundle_started = services_.clock.MonotonicNow();
  auto op_dir = PrepareBundle(dir / assignment_.operator_name());
  times->bundle = SecondsBetween(bundle_started, services_.clock.MonotonicNow());
  if (!op_dir.ok()) {
    bundle_unreachable_ = ServerWentAway(op_dir.status());
    return op_dir.status();
  }
  auto progress = [this](const v1::JobProgress& p) { SendProgress(p); };
  JobContext ctx{assignment_, *op_dir, dir / "session", progress, &cancel_, &times->job, dir};
  if (cgroup != nullptr) {
    ctx.cgroup_procs_fd = cgroup->procs_fd;
    ctx.cgroup = cgroup->dir;
  }
  v1::ReportResultRequest measured;
  if (assignment_.params().mode() == v1::PROFILE_MODE_DISCOVER) {
    absl::StatusOr<evidence::Discovery> found = services_.job_runner.Discover(ctx);
    if (!found.ok()) return found.status();
    *measured.mutable_discovery() = DiscoveryReport(*found, ctx.session_dir);
    return measured;
  }
  absl::StatusOr<v1::Evidence> run = services_.job_runner.Run(ctx);
  if (!run.ok()) return run.status();
  *measured.mutable_evidence() = *std::move(run);
  return measured;
}

absl::StatusOr<fs::path> Attempt::PrepareBundle(const fs::path& dest) {
  auto tar = services_.bundles.Get(assignment_.bundle_sha256(), [this](const std::string& sha256) {
    return services_.channel.DownloadBundle(sha256, services_.agent_id(), assignment_.job_id(),
                                            kMaxBundleBytes);
  });
  if (!tar.ok()) return tar.status();
  if (auto s = UnpackBundle(*tar, dest, kMaxBundleBytes); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("bad bundle: ", s.message()));
  }
  return dest;
}

std::string Attempt::Keep(const v1::ReportResultRequest& result, StopReason reason) {
  if (reason == StopReason::kLeaseLost) {
    LogWarning("agent", absl::StrCat("job ", result.job_id(), ": lease lost; result dropped"));
    return "lease_lost";
  }
  if (auto s = services_.spool.Put(result); !s.ok()) {
    LogError("agent",
             absl::StrCat("job ", result.job_id(), ": cannot spool result: ", s.ToString()));
  }
  return OutcomeLabel(result.outcome());
}

void Attempt::SendPhase(v1::JobPhase phase, const std::string& detail, bool now) {
  v1::JobProgress p;
  p.set_phase(phase);
  p.set_detail(detail);
  SendProgress(p, now);
}

void Attempt::SendProgress(const v1::JobProgress& progress, bool now) {
  v1::ReportProgressRequest req;
  req.set_agent_id(services_.agent_id());
  req.set_job_id(assignment_.job_id());
  req.set_attempt(assignment_.attempt());
  req.set_fencing_token(assignment_.fencing_token());
  req.set_lease_secret(assignment_.lease_secret());
  *req.mutable_progress() = progress;
  auto answer = [this](const absl::StatusOr<v1::ReportProgressResponse>& resp) {
    OnProgressAnswer(resp);
  };
  if (now) {
    services_.progress.SendNow(req, answer);
  } else {
    services_.progress.Post(req, answer);
  }
}

void Attempt::OnProgressAnswer(const absl::StatusOr<v1::ReportProgressResponse>& resp) {
  // A stale lease, or one the server says is not ours (another agent's, or
  // a wrong secret): the result would be refused too.
  if (absl::IsFailedPrecondition(resp.status()) || absl::IsPermissionDenied(resp.status())) {
    Stop(StopReason::kLeaseLost);
  }
  if (resp.ok() && resp->cancel_requested()) Stop(StopReason::kCancelled, "collection cancelled");
}

}  // namespace npuperf::agent
