#include "agent/agent.h"

#include <algorithm>
#include <fstream>
#include <tuple>
#include <set>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/constants.h"
#include "common/backoff.h"
#include "common/bundle_tar.h"
#include "common/log.h"
#include "common/sha256.h"

namespace npuperf::agent {
namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

namespace {

constexpr char kShutdown[] = "agent shutting down";
constexpr char kLeaseLost[] = "lease lost";

std::string NewUuid() {
  absl::BitGen gen;
  return absl::StrFormat("%016x%016x", absl::Uniform<uint64_t>(gen), absl::Uniform<uint64_t>(gen));
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Statuses after which resending a result is pointless: the server refused
// it for good (stale token, unknown job, malformed).
bool Permanent(const absl::Status& s) {
  return absl::IsFailedPrecondition(s) || absl::IsNotFound(s) || absl::IsInvalidArgument(s) ||
         absl::IsPermissionDenied(s);
}

// Keeps the bundle cache under limit by deleting the least recently used
// tars (a cache hit refreshes its mtime); never the one just used.
void TrimBundleCache(const fs::path& dir, const fs::path& keep, int64_t limit) {
  std::error_code ec;
  std::vector<std::tuple<fs::file_time_type, int64_t, fs::path>> entries;
  int64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".tar") continue;
    const auto size = static_cast<int64_t>(e.file_size(ec));
    total += size;
    entries.emplace_back(e.last_write_time(ec), size, e.path());
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [when, size, path] : entries) {
    if (total <= limit) break;
    if (path == keep) continue;
    fs::remove(path, ec);
    total -= size;
  }
}

double SecondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

}  // namespace

double Agent::AttemptTimes::Other(double total) const {
  return std::max(0.0, total - bundle - job.preflight - job.warm_up - job.msprof - job.parse - spool);
}

std::string Agent::AttemptTimes::Summary(double total) const {
  return absl::StrFormat(
      "%.2f s (bundle %.2f, preflight %.2f, warm-up %.2f, msprof %.2f in %d runs, parse %.2f, "
      "spool %.2f, other %.2f)",
      total, bundle, job.preflight, job.warm_up, job.msprof, job.msprof_runs, job.parse, spool,
      Other(total));
}

void Agent::AttemptTimes::Observe(AgentMetrics& metrics, double total) const {
  metrics.ObservePhase("bundle", bundle);
  metrics.ObservePhase("preflight", job.preflight);
  metrics.ObservePhase("warm_up", job.warm_up);
  metrics.ObservePhase("msprof", job.msprof);
  metrics.ObservePhase("parse", job.parse);
  metrics.ObservePhase("spool", spool);
  metrics.ObservePhase("other", Other(total));
}

Agent::Agent(ServerChannel& channel, DeviceLocker& locker, ProfilerRunner& runner,
             AgentMetrics& metrics, AgentOptions options, JobRunnerOptions job_options)
    : channel_(channel),
      locker_(locker),
      metrics_(metrics),
      options_(std::move(options)),
      job_runner_(runner, std::move(job_options), &metrics),
      spool_(options_.work_dir / "spool") {}

Agent::~Agent() = default;

void Agent::Stop() {
  channel_.StopLeasePolls();
  std::lock_guard<std::mutex> lock(mu_);
  wake_.notify_all();
}

void Agent::Run(const std::atomic<bool>& stop) {
  std::thread session([&] { SessionLoop(stop); });
  std::thread reporter([&] { ReporterLoop(stop); });
  Backoff backoff(kRetryMin, kRetryMax, absl::Uniform<uint64_t>(absl::BitGen()));
  while (!stop) {
    if (need_register_ && !Register(stop)) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, backoff.Next(), [&] { return stop.load(); });
      continue;
    }
    backoff.Reset();
    LeaseOnce(stop);
    ReapFinished();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, job] : running_) {
      job->cancel_reason = kShutdown;
      job->cancel = true;
    }
  }
  while (true) {
    ReapFinished();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (running_.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ReapFinished();
  wake_.notify_all();
  session.join();
  reporter.join();
}

bool Agent::Register(const std::atomic<bool>& stop) {
  if (stop) return false;
  v1::RegisterAgentRequest req;
  req.set_host(options_.host);
  req.set_boot_id(options_.boot_id);
  req.set_instance_id(options_.instance_id);
  req.set_version(options_.version);
  req.add_capabilities("standard");
  req.add_capabilities("quick");
  req.add_capabilities("compare");
  req.mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int d : options_.devices) {
      auto* info = req.add_devices();
      info->set_device_id(d);
      info->set_soc(options_.socs.at(d));
      auto it = device_states_.find(d);
      info->set_state(it == device_states_.end() ? v1::DEVICE_STATE_IDLE : it->second);
    }
  }
  for (auto& j : RunningJobs()) *req.add_running_jobs() = j;
  auto resp = channel_.Register(req);
  if (!resp.ok()) {
    LogWarning("agent", absl::StrCat("register failed: ", resp.status().ToString()));
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    agent_id_ = resp->agent_id();
    last_contact_ = SteadyClock::now();
  }
  heartbeat_ms_ = std::max(100, resp->heartbeat_interval_ms());
  ApplyDirectives(resp->directives());
  need_register_ = false;
  LogInfo("agent", absl::StrCat("registered as ", resp->agent_id(), " with ", req.devices_size(),
                                " devices, ", req.running_jobs_size(), " jobs to reconcile"));
  wake_.notify_all();
  return true;
}

void Agent::SessionLoop(const std::atomic<bool>& stop) {
  Backoff backoff(kRetryMin, kRetryMax, absl::Uniform<uint64_t>(absl::BitGen()));
  while (!stop) {
    if (need_register_) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stop.load(); });
      continue;
    }
    const auto started = SteadyClock::now();
    absl::Status s = channel_.RunSession(
        [this] { return BuildHeartbeat(); },
        [this](const v1::AgentSessionResponse& r) {
          {
            std::lock_guard<std::mutex> lock(mu_);
            last_contact_ = SteadyClock::now();
          }
          ApplyDirectives(r.directives());
          for (const auto& c : r.cancels()) CancelJob(c.job_id(), "cancelled: " + c.reason());
        },
        std::chrono::milliseconds(heartbeat_ms_.load()),
        [&] { return stop.load() || need_register_.load(); });
    if (stop) break;
    if (SteadyClock::now() - started > std::chrono::seconds(10)) backoff.Reset();
    LogWarning("agent", absl::StrCat("session ended: ", s.ToString(), "; re-registering"));
    metrics_.reconnects.Increment();
    need_register_ = true;
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, backoff.Next(), [&] { return stop.load(); });
  }
}

void Agent::ReporterLoop(const std::atomic<bool>& stop) {
  Backoff backoff(kRetryMin, kRetryMax, absl::Uniform<uint64_t>(absl::BitGen()));
  while (!stop) {
    auto pending = spool_.Pending();
    bool failed = false;
    if (pending.ok()) {
      for (const auto& r : *pending) {
        if (stop) break;
        const auto report_started = SteadyClock::now();
        auto ack = channel_.ReportResult(r);
        metrics_.ObservePhase("report", SecondsSince(report_started));
        if (ack.ok() || Permanent(ack.status())) {
          if (ack.ok()) {
            LogInfo("agent", absl::StrCat("job ", r.job_id(), " attempt ", r.attempt(), " reported in ",
                                          absl::StrFormat("%.3f s", SecondsSince(report_started)),
                                          ack->round_id() > 0 ? absl::StrCat(", round ", ack->round_id()) : "",
                                          ack->duplicate() ? " (duplicate)" : ""));
          } else {
            LogWarning("agent", absl::StrCat("job ", r.job_id(), " result refused for good: ",
                                             ack.status().ToString()));
          }
          spool_.Remove(r);
          backoff.Reset();
        } else {
          failed = true;
          break;
        }
      }
    }
    metrics_.spool_depth.Set(static_cast<double>(spool_.Depth()));
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, failed ? backoff.Next() : std::chrono::milliseconds(1000),
                   [&] { return stop.load() || (!failed && spool_dirty_); });
    spool_dirty_ = false;
  }
}

void Agent::LeaseOnce(const std::atomic<bool>& stop) {
  std::map<int, std::unique_ptr<DeviceLease>> held;
  v1::LeaseJobRequest req;
  int busy = 0, external = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    req.set_agent_id(agent_id_);
    std::set<int> in_use;
    for (const auto& [id, job] : running_) in_use.insert(job->assignment.device_id());
    for (int d : options_.devices) {
      if (in_use.contains(d)) {
        device_states_[d] = v1::DEVICE_STATE_BUSY;
        ++busy;
        continue;
      }
      auto lease = locker_.TryLock(d);
      if (lease.ok()) {
        held[d] = *std::move(lease);
        device_states_[d] = v1::DEVICE_STATE_IDLE;
        auto* info = req.add_free_devices();
        info->set_device_id(d);
        info->set_soc(options_.socs.at(d));
        info->set_state(v1::DEVICE_STATE_IDLE);
      } else if (absl::IsResourceExhausted(lease.status())) {
        device_states_[d] = v1::DEVICE_STATE_EXTERNALLY_LOCKED;
        metrics_.lock_contention.Increment();
        ++external;
      } else {
        device_states_[d] = v1::DEVICE_STATE_UNHEALTHY;
        LogWarning("agent", std::string(lease.status().message()));
      }
    }
  }
  metrics_.SetDevices(static_cast<int>(held.size()), busy, external);
  if (held.empty()) {
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait_for(lock, kIdleProbe, [&] { return stop.load(); });
    return;
  }
  req.set_wait_ms(kLeaseWaitMs);
  auto resp = channel_.LeaseJob(req);
  if (!resp.ok()) {
    if (stop) return;
    LogWarning("agent", absl::StrCat("lease failed: ", resp.status().ToString()));
    need_register_ = true;
    return;
  }
  if (!resp->has_assignment()) return;
  const v1::JobAssignment& a = resp->assignment();
  auto it = held.find(a.device_id());
  if (it == held.end()) {
    LogError("agent", absl::StrCat("server assigned job ", a.job_id(), " to device ", a.device_id(),
                                   " which was not offered"));
    return;  // the lease expires and the job is retried elsewhere
  }
  StartJob(a, std::move(it->second));
}

void Agent::StartJob(const v1::JobAssignment& a, std::unique_ptr<DeviceLease> lease) {
  auto job = std::make_unique<RunningJob>();
  job->assignment = a;
  RunningJob* raw = job.get();
  std::lock_guard<std::mutex> lock(mu_);
  device_states_[a.device_id()] = v1::DEVICE_STATE_BUSY;
  running_[a.job_id()] = std::move(job);
  raw->thread = std::thread([this, raw, l = std::move(lease)]() mutable { RunJob(raw, std::move(l)); });
  LogInfo("agent", absl::StrCat("job ", a.job_id(), " attempt ", a.attempt(), " (", a.operator_name(),
                                a.case_id().empty() ? "" : "/" + a.case_id(), ") on device ",
                                a.device_id()));
}

absl::StatusOr<fs::path> Agent::PrepareBundle(const v1::JobAssignment& a, const fs::path& dest) {
  const fs::path cache = options_.work_dir / "bundles" / (a.bundle_sha256() + ".tar");
  std::string tar;
  std::error_code ec;
  if (fs::exists(cache, ec)) {
    tar = ReadFile(cache);
    if (Sha256Hex(tar) != a.bundle_sha256()) tar.clear();  // corrupt cache entry: refetch
    if (!tar.empty()) fs::last_write_time(cache, fs::file_time_type::clock::now(), ec);
  }
  if (tar.empty()) {
    auto got = channel_.DownloadBundle(a.bundle_sha256(), kMaxBundleBytes);
    if (!got.ok()) return got.status();
    if (Sha256Hex(*got) != a.bundle_sha256()) {
      return absl::DataLossError("downloaded bundle does not match its sha256");
    }
    tar = *std::move(got);
    fs::create_directories(cache.parent_path(), ec);
    const fs::path tmp = cache.string() + ".tmp" + NewUuid().substr(0, 8);
    std::ofstream(tmp, std::ios::binary) << tar;
    fs::rename(tmp, cache, ec);
    TrimBundleCache(cache.parent_path(), cache, kBundleCacheBytes);
  }
  if (auto s = UnpackBundle(tar, dest, kMaxBundleBytes); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("bad bundle: ", s.message()));
  }
  return dest;
}

v1::ReportResultRequest Agent::BuildResult(const RunningJob& job,
                                           absl::StatusOr<v1::Evidence> evidence,
                                           std::string* outcome) {
  const v1::JobAssignment& a = job.assignment;
  v1::ReportResultRequest result;
  result.set_job_id(a.job_id());
  result.set_attempt(a.attempt());
  result.set_fencing_token(a.fencing_token());
  result.set_update_uuid(NewUuid());
  if (evidence.ok()) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
    *result.mutable_evidence() = *std::move(evidence);
    *outcome = "succeeded";
  } else if (job.cancel && job.cancel_reason == kShutdown) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_INTERRUPTED);
    result.set_failure_reason("the agent stopped during the job");
    result.set_retryable(true);
    *outcome = "interrupted";
  } else if (job.cancel) {
    result.set_outcome(v1::ATTEMPT_OUTCOME_CANCELLED);
    result.set_failure_reason(job.cancel_reason);
    *outcome = "cancelled";
  } else {
    const absl::Status& s = evidence.status();
    result.set_outcome(v1::ATTEMPT_OUTCOME_FAILED);
    result.set_failure_reason(std::string(s.message()));
    result.set_retryable(!absl::IsFailedPrecondition(s) && !absl::IsInvalidArgument(s));
    *outcome = "failed";
  }
  std::lock_guard<std::mutex> lock(mu_);
  result.set_agent_id(agent_id_);
  return result;
}

void Agent::RunJob(RunningJob* job, std::unique_ptr<DeviceLease> lease) {
  const auto started = SteadyClock::now();
  const v1::JobAssignment& a = job->assignment;
  const fs::path dir = options_.work_dir / "jobs" / absl::StrCat(a.job_id(), "-", a.attempt());
  std::error_code ec;
  fs::remove_all(dir, ec);
  auto progress = [this, job](const v1::JobProgress& p) { SendProgress(job, p); };
  v1::JobProgress preparing;
  preparing.set_phase(v1::JOB_PHASE_PREPARING);
  progress(preparing);
  AttemptTimes times;
  const auto bundle_started = SteadyClock::now();
  // Keep the operator directory's own name: runners may import siblings by it.
  auto op_dir = PrepareBundle(a, dir / a.operator_name());
  times.bundle = SecondsSince(bundle_started);
  absl::StatusOr<v1::Evidence> evidence =
      op_dir.ok() ? job_runner_.Run({a, *op_dir, dir / "session", progress, &job->cancel, &times.job})
                  : absl::StatusOr<v1::Evidence>(op_dir.status());
  if (evidence.ok()) {
    v1::JobProgress uploading;
    uploading.set_phase(v1::JOB_PHASE_UPLOADING);
    uploading.set_detail(absl::StrCat("measured: ", times.Summary(SecondsSince(started))));
    progress(uploading);
  }
  const bool ok = evidence.ok();
  std::string outcome;
  v1::ReportResultRequest result = BuildResult(*job, std::move(evidence), &outcome);
  const auto spool_started = SteadyClock::now();
  if (job->cancel && job->cancel_reason == kLeaseLost) {
    LogWarning("agent", absl::StrCat("job ", a.job_id(), ": lease lost; result dropped"));
    outcome = "lease_lost";
  } else if (auto s = spool_.Put(result); !s.ok()) {
    LogError("agent", absl::StrCat("job ", a.job_id(), ": cannot spool result: ", s.ToString()));
  }
  times.spool = SecondsSince(spool_started);
  if (!a.params().keep_raw_output()) fs::remove_all(dir, ec);
  const double total = SecondsSince(started);
  metrics_.jobs.Add({{"outcome", outcome}}).Increment();
  metrics_.job_duration_seconds.Observe(total);
  times.Observe(metrics_, total);
  LogInfo("agent", absl::StrCat("job ", a.job_id(), " attempt ", a.attempt(), " ", outcome, " in ",
                                times.Summary(total), ok ? "" : absl::StrCat(": ", result.failure_reason())));
  lease.reset();  // the device is free once the result is durable
  std::lock_guard<std::mutex> lock(mu_);
  spool_dirty_ = true;
  auto it = running_.find(a.job_id());
  if (it != running_.end()) {
    finished_.push_back(std::move(it->second));
    running_.erase(it);
  }
  wake_.notify_all();
}

void Agent::SendProgress(RunningJob* job, const v1::JobProgress& p) {
  v1::ReportProgressRequest req;
  {
    std::lock_guard<std::mutex> lock(mu_);
    req.set_agent_id(agent_id_);
  }
  req.set_job_id(job->assignment.job_id());
  req.set_attempt(job->assignment.attempt());
  req.set_fencing_token(job->assignment.fencing_token());
  *req.mutable_progress() = p;
  auto resp = channel_.ReportProgress(req);
  if (absl::IsFailedPrecondition(resp.status())) CancelJob(req.job_id(), kLeaseLost);
  if (resp.ok() && resp->cancel_requested()) CancelJob(req.job_id(), "cancelled: collection cancelled");
}

void Agent::ReapFinished() {
  std::vector<std::unique_ptr<RunningJob>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done.swap(finished_);
  }
  for (auto& j : done) {
    if (j->thread.joinable()) j->thread.join();
  }
}

void Agent::CancelJob(int64_t job_id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find(job_id);
  if (it == running_.end() || it->second->cancel) return;
  it->second->cancel_reason = reason;
  it->second->cancel = true;
  LogInfo("agent", absl::StrCat("job ", job_id, ": stopping (", reason, ")"));
}

void Agent::ApplyDirectives(const google::protobuf::RepeatedPtrField<v1::JobDirective>& directives) {
  for (const auto& d : directives) {
    if (d.action() != v1::JobDirective::ACTION_KILL) continue;
    CancelJob(d.job_id(), kLeaseLost);
    auto pending = spool_.Pending();
    if (!pending.ok()) continue;
    for (const auto& r : *pending) {
      if (r.job_id() == d.job_id()) spool_.Remove(r);
    }
  }
}

std::vector<v1::RunningJob> Agent::RunningJobs() {
  std::vector<v1::RunningJob> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, job] : running_) {
      auto& r = out.emplace_back();
      r.set_job_id(id);
      r.set_attempt(job->assignment.attempt());
      r.set_fencing_token(job->assignment.fencing_token());
      r.set_device_id(job->assignment.device_id());
    }
  }
  auto pending = spool_.Pending();
  if (pending.ok()) {
    for (const auto& p : *pending) {
      auto& r = out.emplace_back();
      r.set_job_id(p.job_id());
      r.set_attempt(p.attempt());
      r.set_fencing_token(p.fencing_token());
      r.set_result_pending(true);
    }
  }
  return out;
}

HealthInputs Agent::Health() {
  HealthInputs in;
  in.registered = !need_register_;
  in.heartbeat = std::chrono::milliseconds(heartbeat_ms_.load());
  in.devices = static_cast<int>(options_.devices.size());
  in.spool_depth = static_cast<int64_t>(spool_.Depth());
  std::lock_guard<std::mutex> lock(mu_);
  in.agent_id = agent_id_;
  in.last_contact = last_contact_;
  in.running_jobs = static_cast<int>(running_.size());
  return in;
}

v1::Heartbeat Agent::BuildHeartbeat() {
  v1::Heartbeat hb;
  for (auto& j : RunningJobs()) *hb.add_running_jobs() = j;
  std::lock_guard<std::mutex> lock(mu_);
  hb.set_agent_id(agent_id_);
  for (int d : options_.devices) {
    auto* info = hb.add_devices();
    info->set_device_id(d);
    info->set_soc(options_.socs.at(d));
    auto it = device_states_.find(d);
    info->set_state(it == device_states_.end() ? v1::DEVICE_STATE_IDLE : it->second);
  }
  return hb;
}

}  // namespace npuperf::agent
