#include "agent/agent.h"

#include <algorithm>
#include <set>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/constants.h"
#include "common/chip_health.h"
#include "common/log.h"

namespace npuperf::agent {

Agent::Agent(ServerChannel& channel, DeviceLocker& locker, ProfilerRunner& runner,
             AgentMetrics& metrics, Clock& clock, AgentOptions options,
             JobRunnerOptions job_options, Containment* containment)
    : channel_(channel),
      locker_(locker),
      metrics_(metrics),
      clock_(clock),
      options_(std::move(options)),
      chip_probe_(runner, clock, options_.npu_smi, options_.work_dir / "npu-smi"),
      job_runner_(runner, clock, job_options, &metrics),
      spool_(options_.work_dir / "spool"),
      bundles_(options_.work_dir / "bundles", kBundleCacheBytes, clock),
      artifacts_(channel, options_.work_dir / "jobs", clock),
      own_containment_(
          containment != nullptr
              ? nullptr
              : std::make_unique<Containment>(nullptr, job_options.run_users, JobLimits{}, clock)),
      containment_(containment != nullptr ? *containment : *own_containment_),
      progress_(
          clock,
          [&channel](const v1::ReportProgressRequest& req) { return channel.ReportProgress(req); },
          options_.progress_interval),
      services_{channel_,
                job_runner_,
                bundles_,
                spool_,
                containment_,
                metrics_,
                clock_,
                options_.work_dir / "jobs",
                [this] { return agent_id(); },
                artifacts_,
                progress_} {}

Agent::~Agent() = default;

Backoff Agent::RetryBackoff() {
  return Backoff(kRetryMin, kRetryMax, absl::Uniform<uint64_t>(absl::BitGen()));
}

void Agent::Stop() {
  channel_.StopLeasePolls();
  WakePauses();
}

void Agent::WakePauses() {
  // Releasing mu_ re-evaluates the condition of every pause, and each one
  // includes stop.
  absl::MutexLock lock(&mu_);
}

void Agent::Run(const std::atomic<bool>& stop) {
  std::thread session([&] { SessionLoop(stop); });
  std::thread reporter([&] { ReporterLoop(stop); });
  Backoff backoff = RetryBackoff();
  auto stopping = [&stop] { return stop.load(); };
  while (!stop) {
    if (NeedsRegister() && !Register(stop)) {
      absl::MutexLock lock(&mu_);
      clock_.AwaitWithDeadline(mu_, absl::Condition(&stopping),
                               clock_.MonotonicNow() + backoff.Next());
      continue;
    }
    backoff.Reset();
    LeaseOnce(stop);
    ReapFinished();
  }
  StopAllJobs();
  WakePauses();  // in case stop was set without Stop()
  session.join();
  reporter.join();
}

void Agent::StopAllJobs() {
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, job] : running_) job->attempt->Stop(StopReason::kShutdown);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return running_.empty(); };
    mu_.Await(absl::Condition(&idle));
  }
  ReapFinished();
}

v1::RegisterAgentRequest Agent::RegistrationRequest() {
  v1::RegisterAgentRequest req;
  req.set_host(options_.host);
  req.set_boot_id(options_.boot_id);
  req.set_instance_id(options_.instance_id);
  req.set_slot(options_.slot);
  req.set_version(options_.version);
  req.add_capabilities("standard");
  req.add_capabilities("quick");
  req.add_capabilities("compare");
  req.mutable_labels()->insert(options_.labels.begin(), options_.labels.end());
  {
    absl::MutexLock lock(&mu_);
    for (int d : options_.devices) FillDeviceInfo(d, req.add_devices());
  }
  for (auto& j : RunningJobs()) *req.add_running_jobs() = j;
  return req;
}

bool Agent::Register(const std::atomic<bool>& stop) {
  if (stop) return false;
  const v1::RegisterAgentRequest req = RegistrationRequest();
  auto resp = channel_.Register(req);
  if (!resp.ok()) {
    LogWarning("agent", absl::StrCat("register failed: ", resp.status().ToString()));
    return false;
  }
  {
    absl::MutexLock lock(&mu_);
    agent_id_ = resp->agent_id();
    last_contact_ = clock_.MonotonicNow();
    heartbeat_ms_ = std::max(100, resp->heartbeat_interval_ms());
  }
  progress_.SetViaHeartbeats(resp->progress_in_heartbeats());
  ApplyDirectives(resp->directives());
  {
    absl::MutexLock lock(&mu_);
    need_register_ = false;  // ends the session thread's wait for the registration
    metrics_.registered.Set(1);
  }
  LogInfo("agent", absl::StrCat("registered as ", resp->agent_id(), " with ", req.devices_size(),
                                " devices, ", req.running_jobs_size(), " jobs to reconcile"));
  return true;
}

void Agent::SessionLoop(const std::atomic<bool>& stop) {
  Backoff backoff = RetryBackoff();
  auto stopping = [&stop] { return stop.load(); };
  auto registered = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop.load() || !need_register_;
  };
  auto session_over = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop.load() || need_register_;
  };
  while (!stop) {
    std::chrono::milliseconds interval;
    {
      absl::MutexLock lock(&mu_);
      if (need_register_) {
        clock_.AwaitWithDeadline(mu_, absl::Condition(&registered),
                                 clock_.MonotonicNow() + kRegisterPoll);
        continue;
      }
      interval = std::chrono::milliseconds(heartbeat_ms_);
    }
    const auto started = clock_.MonotonicNow();
    progress_.RetakeAll();  // the last session may have lost its last heartbeats
    absl::Status s =
        channel_.RunSession([this] { return BuildHeartbeat(); },
                            [this](const v1::AgentSessionResponse& r) { OnSessionResponse(r); },
                            interval, mu_, absl::Condition(&session_over));
    if (stop) break;
    if (clock_.MonotonicNow() - started > kStableSession) backoff.Reset();
    LogWarning("agent", absl::StrCat("session ended: ", s.ToString(), "; re-registering"));
    metrics_.reconnects.Increment();
    absl::MutexLock lock(&mu_);
    need_register_ = true;
    metrics_.registered.Set(0);
    clock_.AwaitWithDeadline(mu_, absl::Condition(&stopping),
                             clock_.MonotonicNow() + backoff.Next());
  }
}

void Agent::OnSessionResponse(const v1::AgentSessionResponse& response) {
  {
    absl::MutexLock lock(&mu_);
    last_contact_ = clock_.MonotonicNow();
  }
  // This session's server may not be the one that registered us (replicas
  // behind a load balancer, some not yet upgraded).
  progress_.SetViaHeartbeats(response.progress_in_heartbeats());
  ApplyDirectives(response.directives());
  for (const auto& c : response.cancels()) {
    CancelJob(c.job_id(), StopReason::kCancelled, c.reason());
  }
}

std::map<int, v1::DeviceReading> Agent::ReadIdleChips() {
  std::map<int, v1::DeviceReading> readings;
  if (!chip_probe_.enabled()) return readings;
  std::set<int> in_use;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, job] : running_) in_use.insert(job->attempt->assignment().device_id());
  }
  for (int d : options_.devices) {
    if (in_use.contains(d)) continue;
    readings[d] = chip_probe_.ReadCached(d, kChipProbeInterval);
    metrics_.SetChip(d, options_.socs.at(d), readings[d]);
  }
  absl::MutexLock lock(&mu_);
  for (const auto& [d, r] : readings) device_readings_[d] = r;
  return readings;
}

v1::LeaseJobRequest Agent::LockFreeDevices(std::map<int, std::unique_ptr<DeviceLease>>* held) {
  const std::map<int, v1::DeviceReading> readings = ReadIdleChips();
  v1::LeaseJobRequest req;
  int busy = 0, external = 0;
  {
    absl::MutexLock lock(&mu_);
    req.set_agent_id(agent_id_);
    std::set<int> in_use;
    for (const auto& [id, job] : running_) in_use.insert(job->attempt->assignment().device_id());
    for (int d : options_.devices) {
      if (in_use.contains(d)) {
        device_states_[d] = v1::DEVICE_STATE_BUSY;
        ++busy;
        continue;
      }
      auto reading = readings.find(d);
      const std::string critical =
          reading == readings.end() ? std::string() : CriticalReason(reading->second);
      if (!critical.empty()) {
        // Withdrawn: not offered, and the server quarantines it.
        if (device_details_[d] != critical)
          LogWarning("agent", absl::StrCat("device ", d, ": ", critical));
        device_states_[d] = v1::DEVICE_STATE_UNHEALTHY;
        device_details_[d] = critical;
        continue;
      }
      device_details_.erase(d);
      auto lease = locker_.TryLock(d);
      if (lease.ok()) {
        (*held)[d] = *std::move(lease);
        device_states_[d] = v1::DEVICE_STATE_IDLE;
        FillDeviceInfo(d, req.add_free_devices());
      } else if (absl::IsResourceExhausted(lease.status())) {
        device_states_[d] = v1::DEVICE_STATE_EXTERNALLY_LOCKED;
        metrics_.lock_contention.Increment();
        ++external;
      } else {
        device_states_[d] = v1::DEVICE_STATE_UNHEALTHY;
        device_details_[d] = std::string(lease.status().message());
        LogWarning("agent", std::string(lease.status().message()));
      }
    }
  }
  metrics_.SetDevices(static_cast<int>(held->size()), busy, external);
  return req;
}

void Agent::FillDeviceInfo(int d, v1::DeviceInfo* info) {
  info->set_device_id(d);
  info->set_soc(options_.socs.at(d));
  auto state = device_states_.find(d);
  info->set_state(state == device_states_.end() ? v1::DEVICE_STATE_IDLE : state->second);
  auto detail = device_details_.find(d);
  if (detail != device_details_.end() && info->state() == v1::DEVICE_STATE_UNHEALTHY) {
    info->set_health_detail(detail->second);
  }
  auto reading = device_readings_.find(d);
  if (reading != device_readings_.end()) *info->mutable_reading() = reading->second;
}

void Agent::LeaseOnce(const std::atomic<bool>& stop) {
  std::map<int, std::unique_ptr<DeviceLease>> held;
  v1::LeaseJobRequest req = LockFreeDevices(&held);
  if (held.empty()) {
    // A registration that falls due ends the pause too, and so does a job that
    // finished (its device is free now: offering it at once, not up to
    // kIdleProbe later, keeps a device from idling while jobs wait).
    auto wake = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop.load() || need_register_ || !finished_.empty();
    };
    absl::MutexLock lock(&mu_);
    clock_.AwaitWithDeadline(mu_, absl::Condition(&wake), clock_.MonotonicNow() + kIdleProbe);
    return;
  }
  req.set_wait_ms(kLeaseWaitMs);
  // A job for every free device in one call (issue 36); a server that
  // predates max_assignments answers with one.
  req.set_max_assignments(static_cast<int32_t>(held.size()));
  auto resp = channel_.LeaseJob(req);
  if (!resp.ok()) {
    if (stop) return;
    LogWarning("agent", absl::StrCat("lease failed: ", resp.status().ToString()));
    SetNeedsRegister();
    return;
  }
  if (!resp->has_assignment()) return;
  StartAssigned(resp->assignment(), &held);
  for (const v1::JobAssignment& a : resp->more_assignments()) StartAssigned(a, &held);
}

void Agent::StartAssigned(const v1::JobAssignment& a,
                          std::map<int, std::unique_ptr<DeviceLease>>* held) {
  auto it = held->find(a.device_id());
  if (it == held->end() || it->second == nullptr) {
    LogError("agent", absl::StrCat("server assigned job ", a.job_id(), " to device ", a.device_id(),
                                   " which was not offered or is taken"));
    return;  // the lease expires and the job is retried elsewhere
  }
  StartJob(a, std::move(it->second));
}

void Agent::StartJob(const v1::JobAssignment& a, std::unique_ptr<DeviceLease> lease) {
  auto job = std::make_unique<RunningJob>();
  job->attempt = std::make_unique<Attempt>(services_, a);
  RunningJob* raw = job.get();
  absl::MutexLock lock(&mu_);
  device_states_[a.device_id()] = v1::DEVICE_STATE_BUSY;
  running_[a.job_id()] = std::move(job);
  raw->thread = std::thread([this, raw, l = std::move(lease)]() mutable {
    raw->attempt->Run(std::move(l));
    FinishJob(raw->attempt->assignment().job_id());
  });
  LogInfo("agent", absl::StrCat("job ", a.job_id(), " attempt ", a.attempt(), " (",
                                a.operator_name(), a.case_id().empty() ? "" : "/" + a.case_id(),
                                ") on device ", a.device_id()));
}

void Agent::FinishJob(int64_t job_id) {
  absl::MutexLock lock(&mu_);
  spool_dirty_ = true;  // wakes the reporter
  auto it = running_.find(job_id);
  if (it != running_.end()) {
    finished_.push_back(std::move(it->second));
    running_.erase(it);
  }
}

void Agent::ReapFinished() {
  std::vector<std::unique_ptr<RunningJob>> done;
  {
    absl::MutexLock lock(&mu_);
    done.swap(finished_);
  }
  for (auto& j : done) {
    if (j->thread.joinable()) j->thread.join();
  }
}

void Agent::CancelJob(int64_t job_id, StopReason reason, const std::string& detail) {
  absl::MutexLock lock(&mu_);
  auto it = running_.find(job_id);
  if (it == running_.end()) return;
  it->second->attempt->Stop(reason, detail);
}

void Agent::ApplyDirectives(
    const google::protobuf::RepeatedPtrField<v1::JobDirective>& directives) {
  for (const auto& d : directives) {
    if (d.action() != v1::JobDirective::ACTION_KILL) continue;
    CancelJob(d.job_id(), StopReason::kLeaseLost);
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
    absl::MutexLock lock(&mu_);
    for (const auto& [id, job] : running_) {
      const v1::JobAssignment& a = job->attempt->assignment();
      auto& r = out.emplace_back();
      r.set_job_id(id);
      r.set_attempt(a.attempt());
      r.set_fencing_token(a.fencing_token());
      r.set_lease_secret(a.lease_secret());
      r.set_device_id(a.device_id());
    }
  }
  auto pending = spool_.Pending();
  if (pending.ok()) {
    for (const auto& p : *pending) {
      auto& r = out.emplace_back();
      r.set_job_id(p.job_id());
      r.set_attempt(p.attempt());
      r.set_fencing_token(p.fencing_token());
      r.set_lease_secret(p.lease_secret());
      r.set_result_pending(true);
    }
  }
  return out;
}

HealthInputs Agent::Health() {
  HealthInputs in;
  in.devices = static_cast<int>(options_.devices.size());
  in.spool_depth = static_cast<int64_t>(spool_.Depth());
  absl::MutexLock lock(&mu_);
  in.registered = !need_register_;
  in.heartbeat = std::chrono::milliseconds(heartbeat_ms_);
  in.agent_id = agent_id_;
  in.last_contact = last_contact_;
  in.running_jobs = static_cast<int>(running_.size());
  return in;
}

v1::Heartbeat Agent::BuildHeartbeat() {
  v1::Heartbeat hb;
  for (auto& j : RunningJobs()) {
    if (!j.result_pending()) {
      if (auto p = progress_.Take(j.job_id(), j.attempt())) *j.mutable_progress() = *std::move(p);
    }
    *hb.add_running_jobs() = std::move(j);
  }
  absl::MutexLock lock(&mu_);
  hb.set_agent_id(agent_id_);
  for (int d : options_.devices) FillDeviceInfo(d, hb.add_devices());
  return hb;
}

bool Agent::NeedsRegister() {
  absl::MutexLock lock(&mu_);
  return need_register_;
}

void Agent::SetNeedsRegister() {
  absl::MutexLock lock(&mu_);
  need_register_ = true;
  metrics_.registered.Set(0);
}

std::string Agent::agent_id() {
  absl::MutexLock lock(&mu_);
  return agent_id_;
}

}  // namespace npuperf::agent
