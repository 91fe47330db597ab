#include "tests/bench/fleet/virtual_agent.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace npuperf::fleet {
namespace {

// Long-poll of each LeaseJob, as npuperf-agent asks (agent/constants.h).
constexpr int kLeaseWaitMs = 5'000;
// Pause after a failed LeaseJob or a session that ended.
constexpr std::chrono::milliseconds kRetryPause{200};
// Resends of a result the server could not take now (UNAVAILABLE, ...).
constexpr int kResultAttempts = 5;

bool Transient(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) || absl::IsResourceExhausted(s) ||
         absl::IsAborted(s);
}

}  // namespace

VirtualAgent::VirtualAgent(int index, const FleetOptions& options,
                           std::shared_ptr<grpc::Channel> channel, Clock& clock, JobLog& log,
                           Reporter& reporter)
    : index_(index),
      options_(options),
      clock_(clock),
      log_(log),
      reporter_(reporter),
      channel_(v1::AgentService::NewStub(std::move(channel)), /*token=*/"", clock) {
  absl::MutexLock lock(&mu_);
  for (int d = 0; d < options.devices_per_agent; ++d) {
    Device device;
    device.id = d;
    devices_.push_back(device);
  }
}

VirtualAgent::~VirtualAgent() { Stop(); }

absl::Status VirtualAgent::Register() {
  v1::RegisterAgentRequest req;
  req.set_host(absl::StrCat("fleet-", index_));
  req.set_boot_id(absl::StrFormat("%08x-f1ee-4000-8000-%012x", index_, index_));
  req.set_instance_id(
      absl::StrCat("fleet-instance-", index_, "-", ToUnixMillis(clock_.SystemNow())));
  req.set_slot(absl::StrFormat("%032x", index_));
  req.set_version("0.0.0-fleet");
  for (const char* c : {"standard", "quick", "compare"}) req.add_capabilities(c);
  for (int d = 0; d < options_.devices_per_agent; ++d) {
    auto* info = req.add_devices();
    info->set_device_id(d);
    info->set_soc(options_.soc);
    info->set_state(v1::DEVICE_STATE_IDLE);
  }
  auto resp = channel_.Register(req);
  if (!resp.ok()) return resp.status();
  agent_id_ = resp->agent_id();
  started_ms_ = ToUnixMillis(clock_.SystemNow());  // update uuids unique across fleets
  heartbeat_ms_ = std::max(100, resp->heartbeat_interval_ms());
  progress_in_heartbeats_ = resp->progress_in_heartbeats();
  return absl::OkStatus();
}

void VirtualAgent::Start() {
  session_ = std::thread([this] { SessionLoop(); });
  lease_ = std::thread([this] { LeaseLoop(); });
}

void VirtualAgent::StopLeasing() {
  {
    absl::MutexLock lock(&mu_);
    leasing_ = false;
  }
  channel_.StopLeasePolls();
}

void VirtualAgent::Stop() {
  StopLeasing();
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (session_.joinable()) session_.join();
  if (lease_.joinable()) lease_.join();
}

FleetErrors VirtualAgent::errors() {
  absl::MutexLock lock(&mu_);
  return errors_;
}

void VirtualAgent::Pause(std::chrono::milliseconds d) {
  auto over = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !leasing_; };
  absl::MutexLock lock(&mu_);
  clock_.AwaitWithDeadline(mu_, absl::Condition(&over), clock_.MonotonicNow() + d);
}

void VirtualAgent::SessionLoop() {
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
  while (true) {
    absl::Status s = channel_.RunSession(
        [this] { return BuildHeartbeat(); },
        [this](const v1::AgentSessionResponse& r) { OnSessionResponse(r); },
        std::chrono::milliseconds(heartbeat_ms_), mu_, absl::Condition(&stopping));
    absl::MutexLock lock(&mu_);
    if (stop_) return;
    ++errors_.session_ends;
    clock_.AwaitWithDeadline(mu_, absl::Condition(&stopping), clock_.MonotonicNow() + kRetryPause);
  }
}

v1::Heartbeat VirtualAgent::BuildHeartbeat() {
  v1::Heartbeat hb;
  hb.set_agent_id(agent_id_);
  absl::MutexLock lock(&mu_);
  for (Device& d : devices_) {
    auto* info = hb.add_devices();
    info->set_device_id(d.id);
    info->set_soc(options_.soc);
    info->set_state(d.busy ? v1::DEVICE_STATE_BUSY : v1::DEVICE_STATE_IDLE);
    // As npuperf-agent: a job whose result is on its way is no longer
    // running (the agent spools the result, ends the job, and its reporter
    // sends it). Listing it made the server answer with a kill for every
    // result it had applied before the heartbeat came: thousands a window,
    // each a lease lookup, that a real fleet does not cost.
    if (!d.busy || d.reporting) continue;
    auto* j = hb.add_running_jobs();
    j->set_job_id(d.job.job_id());
    j->set_attempt(d.job.attempt());
    j->set_fencing_token(d.job.fencing_token());
    j->set_device_id(d.id);
    j->set_lease_secret(d.job.lease_secret());
    if (d.news) {
      *j->mutable_progress() = *std::move(d.news);
      d.news.reset();
      ++errors_.progress_in_heartbeats;
    }
  }
  return hb;
}

void VirtualAgent::OnSessionResponse(const v1::AgentSessionResponse& resp) {
  // The fleet's jobs are never cancelled on purpose: counted for the figures.
  absl::MutexLock lock(&mu_);
  errors_.kills += resp.directives_size();
  for (const auto& d : resp.directives()) {
    for (const Device& dev : devices_) {
      if (dev.busy && !dev.reporting && dev.job.job_id() == d.job_id()) ++errors_.kills_running;
    }
  }
  errors_.cancels += resp.cancels_size();
}

void VirtualAgent::LeaseLoop() {
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_ || !leasing_ ||
           std::any_of(devices_.begin(), devices_.end(), [](const Device& d) { return !d.busy; });
  };
  // Agents start their first poll spread over one job duration, as a real
  // fleet is not in step: no synchronised waves of results and leases.
  Pause(options_.job_duration * index_ / std::max(1, options_.agents));
  while (true) {
    v1::LeaseJobRequest req;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&ready));
      if (stop_ || !leasing_) return;
      for (const Device& d : devices_) {
        if (d.busy) continue;
        auto* info = req.add_free_devices();
        info->set_device_id(d.id);
        info->set_soc(options_.soc);
        info->set_state(v1::DEVICE_STATE_IDLE);
      }
    }
    req.set_agent_id(agent_id_);
    req.set_wait_ms(kLeaseWaitMs);
    // As npuperf-agent: a job for every free device in one call.
    req.set_max_assignments(req.free_devices_size());
    const Clock::MonotonicTime called = clock_.MonotonicNow();
    auto resp = channel_.LeaseJob(req);
    if (!resp.ok()) {
      {
        absl::MutexLock lock(&mu_);
        if (stop_ || !leasing_) return;
        ++errors_.lease_errors;
        if (errors_.first_error.empty()) {
          errors_.first_error = "LeaseJob: " + resp.status().ToString();
        }
      }
      Pause(kRetryPause);
      continue;
    }
    if (resp->has_assignment()) Assigned(resp->assignment(), called);
    for (const v1::JobAssignment& a : resp->more_assignments()) Assigned(a, called);
  }
}

void VirtualAgent::Assigned(const v1::JobAssignment& a, Clock::MonotonicTime called) {
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  int slot = -1;
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].id == a.device_id() && !devices_[i].busy) slot = static_cast<int>(i);
    }
    if (slot < 0) {
      ++errors_.lease_errors;  // a device not offered: the lease expires on the server
      return;
    }
    Device& d = devices_[static_cast<size_t>(slot)];
    d.busy = true;
    d.job = a;
    d.record = log_.Leased(index_ * options_.devices_per_agent + slot, now,
                           1e3 * SecondsBetween(called, now));
  }
  const int steps = std::max(0, options_.progress_per_job);
  for (int k = 0; k < steps; ++k) {
    reporter_.At(now + options_.job_duration * k / steps,
                 [this, slot, k] { SendProgress(slot, k); });
  }
  reporter_.At(now + options_.job_duration, [this, slot] { SendResult(slot); });
}

void VirtualAgent::SendProgress(int slot, int step) {
  v1::ReportProgressRequest req;
  auto* p = req.mutable_progress();
  p->set_phase(v1::JOB_PHASE_TIMING_RUN);
  p->set_detail("fleet");
  {
    absl::MutexLock lock(&mu_);
    Device& d = devices_[static_cast<size_t>(slot)];
    if (!d.busy) return;
    if (progress_in_heartbeats_) {
      d.news = *p;
      return;
    }
    req.set_job_id(d.job.job_id());
    req.set_attempt(d.job.attempt());
    req.set_fencing_token(d.job.fencing_token());
    req.set_lease_secret(d.job.lease_secret());
  }
  req.set_agent_id(agent_id_);
  auto resp = channel_.ReportProgress(req);
  if (!resp.ok() || resp->cancel_requested()) {
    absl::MutexLock lock(&mu_);
    ++(resp.ok() ? errors_.cancels : errors_.progress_errors);
  }
  (void)step;
}

void VirtualAgent::SendResult(int slot) {
  v1::ReportResultRequest req;
  {
    absl::MutexLock lock(&mu_);
    Device& d = devices_[static_cast<size_t>(slot)];
    d.reporting = true;
    req.set_job_id(d.job.job_id());
    req.set_attempt(d.job.attempt());
    req.set_fencing_token(d.job.fencing_token());
    req.set_lease_secret(d.job.lease_secret());
    req.set_update_uuid(
        absl::StrFormat("fleet-%d-%d-%d-%d", started_ms_, index_, slot, results_sent_++));
  }
  req.set_agent_id(agent_id_);
  req.set_outcome(v1::ATTEMPT_OUTCOME_SUCCEEDED);
  *req.mutable_evidence() = options_.evidence;
  absl::Status s;
  for (int i = 0; i < kResultAttempts; ++i) {
    s = channel_.ReportResult(req).status();
    if (s.ok() || !Transient(s)) break;
    clock_.SleepFor(kRetryPause);
  }
  if (!s.ok()) {
    absl::MutexLock lock(&mu_);
    ++errors_.report_errors;
    if (errors_.first_error.empty()) errors_.first_error = "ReportResult: " + s.ToString();
  }
  Release(slot);
}

void VirtualAgent::Release(int slot) {
  const Clock::MonotonicTime now = clock_.MonotonicNow();
  absl::MutexLock lock(&mu_);
  Device& d = devices_[static_cast<size_t>(slot)];
  log_.Freed(d.record, now);
  d.busy = false;
  d.reporting = false;
  d.record = -1;
  d.news.reset();
}

}  // namespace npuperf::fleet
