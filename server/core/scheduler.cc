#include "server/core/scheduler.h"

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/constants.h"
#include "server/core/submission.h"

namespace npuperf::server {

Scheduler::Scheduler(Store& store, Clock& clock, ServerMetrics& metrics, SchedulerOptions options)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(options),
      changes_(clock),
      updates_(clock),
      bundles_(store, clock, metrics, options.bundles, options.max_bundle_bytes),
      watches_(store, clock, metrics, options.watches) {
  // Another replica's change: which collection is unknown, so every watched
  // one is read again.
  store_.SetChangeCallback([this](StoreChange change) {
    Changed(change);
    watches_.ChangedAll();
  });
}

Scheduler::~Scheduler() { store_.SetChangeCallback(nullptr); }

void Scheduler::Changed(StoreChange change) {
  if (change == StoreChange::kClaimable) changes_.Notify();
  updates_.Notify();
}

void Scheduler::JobChanged(StoreChange change, int64_t job_id) {
  Changed(change);
  watches_.JobChanged(job_id);
}

absl::StatusOr<std::pair<v1::Collection, bool>> Scheduler::Submit(
    const std::string& team, const v1::SubmitCollectionRequest& req) {
  // A spec may reference only bundles of the caller's team: another team's
  // (or an unknown) hash is NOT_FOUND, after the spec's own checks.
  absl::Status lookup_error;
  std::vector<std::string> missing;
  auto known = [&](const std::string& sha) {
    auto owned = store_.UseBundle(team, sha, NowMs());
    if (!owned.ok()) lookup_error = owned.status();
    if (owned.ok() && !*owned) missing.push_back(sha);
    return true;
  };
  std::vector<FieldViolation> violations = ValidateSpec(req.spec(), req.idempotency_key(), known);
  if (!lookup_error.ok()) return lookup_error;
  if (!violations.empty()) return InvalidArgumentWithFields(violations);
  if (!missing.empty()) {
    return absl::NotFoundError(
        absl::StrCat("bundle ", missing.front(), " not found; upload it with UploadBundle first"));
  }
  NewCollection c;
  c.id = absl::StrFormat("c-%012x", absl::Uniform<uint64_t>(absl::BitGen(), 0, uint64_t{1} << 48));
  c.team = team;
  c.spec = WithDefaults(req.spec());
  c.idempotency_key = req.idempotency_key();
  c.jobs = ExpandJobs(c.spec);
  c.now_ms = NowMs();
  auto result = store_.InsertCollection(c);
  if (!result.ok()) return result.status();
  if (result->second) {
    metrics_.collections_submitted.Increment();
    LogInfo("scheduler", absl::StrCat("collection ", result->first.id(), " queued: ", c.jobs.size(),
                                      " jobs for team ", team));
  }
  Changed(StoreChange::kClaimable);
  return result;
}

absl::StatusOr<v1::Collection> Scheduler::Cancel(const std::string& team, const std::string& id,
                                                 const std::string& reason) {
  auto orders = store_.CancelCollection(team, id, reason, NowMs());
  if (!orders.ok()) return orders.status();
  {
    absl::MutexLock lock(&mu_);
    for (const auto& o : *orders) {
      cancels_[o.agent_id].push_back({o.job_id, o.fencing_token, o.reason});
    }
  }
  Changed(StoreChange::kUpdated);
  watches_.Changed(id);
  return store_.GetCollection(team, id);
}

std::string Scheduler::AgentIdFor(const v1::RegisterAgentRequest& req) {
  return "a-" + Sha256Hex(absl::StrCat(req.host(), "\n", req.boot_id(), "\n", req.instance_id()))
                    .substr(0, 12);
}

absl::StatusOr<v1::RegisterAgentResponse> Scheduler::RegisterAgent(
    const v1::RegisterAgentRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.host().empty()) bad.push_back({"host", "required"});
  if (req.boot_id().empty()) bad.push_back({"boot_id", "required"});
  if (req.instance_id().empty()) bad.push_back({"instance_id", "required"});
  if (req.devices().empty()) bad.push_back({"devices", "at least one device"});
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  const std::string agent_id = AgentIdFor(req);
  absl::Status s = store_.UpsertAgent(agent_id, req, NowMs());
  if (!s.ok()) return s;
  std::vector<AttemptRef> running;
  for (const auto& j : req.running_jobs()) {
    running.push_back({j.job_id(), j.attempt(), j.fencing_token()});
  }
  auto adopted = store_.AdoptAttempts(agent_id, running, NowMs(), options_.lease_ttl.count());
  if (!adopted.ok()) return adopted.status();
  v1::RegisterAgentResponse resp;
  resp.set_agent_id(agent_id);
  resp.set_heartbeat_interval_ms(static_cast<int32_t>(options_.heartbeat_interval.count()));
  resp.set_lease_ttl_ms(static_cast<int32_t>(options_.lease_ttl.count()));
  for (const auto& ref : running) {
    const bool kept = std::any_of(adopted->begin(), adopted->end(), [&](const AttemptRef& a) {
      return a.job_id == ref.job_id && a.fencing_token == ref.fencing_token;
    });
    auto* d = resp.add_directives();
    d->set_job_id(ref.job_id);
    d->set_action(kept ? v1::JobDirective::ACTION_ADOPT : v1::JobDirective::ACTION_KILL);
    d->set_reason(kept ? "lease still valid" : "lease expired or superseded");
  }
  {
    absl::MutexLock lock(&mu_);
    agents_[agent_id] = req;
  }
  LogInfo("scheduler", absl::StrCat("agent ", agent_id, " registered from ", req.host(), " with ",
                                    req.devices_size(), " devices, adopted ", adopted->size(), "/",
                                    running.size(), " running jobs"));
  Changed(StoreChange::kClaimable);
  return resp;
}

absl::StatusOr<v1::AgentSessionResponse> Scheduler::Heartbeat(const v1::Heartbeat& hb) {
  absl::Status s =
      store_.UpdateDevices(hb.agent_id(), {hb.devices().begin(), hb.devices().end()}, NowMs());
  if (!s.ok()) return s;
  std::vector<AttemptRef> running;
  for (const auto& j : hb.running_jobs()) {
    running.push_back({j.job_id(), j.attempt(), j.fencing_token()});
  }
  auto renewal = store_.RenewLeases(hb.agent_id(), running, NowMs(), options_.lease_ttl.count());
  if (!renewal.ok()) return renewal.status();
  v1::AgentSessionResponse resp;
  for (const auto& ref : renewal->dropped) {
    auto* d = resp.add_directives();
    d->set_job_id(ref.job_id);
    d->set_action(v1::JobDirective::ACTION_KILL);
    d->set_reason("lease no longer held by this agent");
  }
  for (const auto& ref : renewal->cancelled) {
    auto* c = resp.add_cancels();
    c->set_job_id(ref.job_id);
    c->set_fencing_token(ref.fencing_token);
    c->set_reason("collection cancelled");
  }
  absl::MutexLock lock(&mu_);
  auto it = cancels_.find(hb.agent_id());
  if (it != cancels_.end()) {
    for (const auto& p : it->second) {
      auto* c = resp.add_cancels();
      c->set_job_id(p.job_id);
      c->set_fencing_token(p.fencing_token);
      c->set_reason(p.reason);
    }
    cancels_.erase(it);
  }
  return resp;
}

absl::StatusOr<ClaimRequest> Scheduler::ClaimRequestFor(const v1::LeaseJobRequest& req) {
  v1::RegisterAgentRequest agent;
  {
    absl::MutexLock lock(&mu_);
    auto it = agents_.find(req.agent_id());
    if (it != agents_.end()) agent = it->second;
  }
  if (agent.host().empty()) {
    auto stored = store_.GetAgent(req.agent_id());
    if (!stored.ok()) return stored.status();
    agent = *std::move(stored);
    absl::MutexLock lock(&mu_);
    agents_[req.agent_id()] = agent;
  }
  ClaimRequest claim;
  claim.agent_id = req.agent_id();
  claim.host = agent.host();
  claim.agent_labels = {agent.labels().begin(), agent.labels().end()};
  for (const auto& d : req.free_devices()) claim.devices.push_back({d.device_id(), d.soc()});
  claim.lease_ttl_ms = options_.lease_ttl.count();
  return claim;
}

absl::StatusOr<std::optional<v1::JobAssignment>> Scheduler::LeaseJob(
    const v1::LeaseJobRequest& req, const std::function<bool()>& stop) {
  if (req.wait_ms() < 0 || req.wait_ms() > kMaxLeaseWait.count()) {
    return InvalidArgumentWithFields(
        {{"wait_ms", absl::StrCat("must be in 0..", kMaxLeaseWait.count())}});
  }
  auto claim = ClaimRequestFor(req);
  if (!claim.ok()) return claim.status();
  const Clock::MonotonicTime deadline =
      clock_.MonotonicNow() + std::chrono::milliseconds(req.wait_ms());
  const int64_t call_ms = NowMs();
  while (true) {
    const uint64_t seen = changes_.version();
    claim->now_ms = NowMs();
    auto got = store_.ClaimJob(*claim, ChooseClaim);
    if (!got.ok() && !absl::IsAborted(got.status())) return got.status();
    if (got.ok() && got->has_value()) {
      metrics_.jobs_leased.Increment();
      ObserveLease(**got, call_ms);
      JobChanged(StoreChange::kUpdated, (*got)->job_id());  // watchers see the lease
      return got;
    }
    const Clock::MonotonicTime now = clock_.MonotonicNow();
    if (now >= deadline || stop()) return std::optional<v1::JobAssignment>();
    changes_.WaitNewer(seen, absl::FromChrono(deadline - now), stop);
  }
}

void Scheduler::ObserveLease(const v1::JobAssignment& a, int64_t call_ms) {
  const int64_t now = NowMs();
  const int64_t queued = google::protobuf::util::TimeUtil::TimestampToMilliseconds(a.queued_at());
  if (a.attempt() == 1) metrics_.queue_wait.Observe(std::max<int64_t>(0, now - queued) / 1e3);
  metrics_.submit_to_lease.Observe(std::max<int64_t>(0, now - std::max(queued, call_ms)) / 1e3);
}

absl::StatusOr<bool> Scheduler::ReportProgress(const v1::ReportProgressRequest& req) {
  auto cancel =
      store_.RecordProgress(req.agent_id(), {req.job_id(), req.attempt(), req.fencing_token()},
                            req.progress(), NowMs(), options_.lease_ttl.count());
  if (absl::IsFailedPrecondition(cancel.status())) metrics_.results_stale.Increment();
  if (cancel.ok()) JobChanged(StoreChange::kUpdated, req.job_id());
  return cancel;
}

absl::StatusOr<v1::ReportResultResponse> Scheduler::ReportResult(
    const v1::ReportResultRequest& req) {
  if (req.update_uuid().empty()) return absl::InvalidArgumentError("update_uuid is required");
  if (req.outcome() == v1::ATTEMPT_OUTCOME_UNSPECIFIED) {
    return absl::InvalidArgumentError("outcome is required");
  }
  AttemptResult r;
  r.agent_id = req.agent_id();
  r.ref = {req.job_id(), req.attempt(), req.fencing_token()};
  r.update_uuid = req.update_uuid();
  r.outcome = req.outcome();
  r.failure_reason = req.failure_reason();
  r.retryable = req.retryable();
  r.evidence = req.evidence();
  r.metrics = FlattenMetrics(req.evidence());
  r.max_lost = options_.max_lost;
  r.now_ms = NowMs();
  auto ack = store_.RecordResult(r);
  if (!ack.ok()) {
    if (absl::IsFailedPrecondition(ack.status())) metrics_.results_stale.Increment();
    return ack.status();
  }
  if (ack->duplicate) {
    metrics_.results_duplicate.Increment();
  } else if (ack->round_id > 0) {
    metrics_.results_stored.Increment();
  } else {
    metrics_.results_failed.Increment();
  }
  JobChanged(StoreChange::kClaimable, req.job_id());
  v1::ReportResultResponse resp;
  resp.set_round_id(ack->round_id);
  resp.set_duplicate(ack->duplicate);
  return resp;
}

absl::Status Scheduler::ExpireLeases() {
  auto expired = store_.ExpireLeases(NowMs(), options_.max_lost);
  if (!expired.ok()) return expired.status();
  for (const auto& e : *expired) {
    metrics_.lease_expirations.Increment();
    watches_.JobChanged(e.job_id);
    LogWarning("scheduler", absl::StrCat("lease of job ", e.job_id, " on agent ", e.agent_id,
                                         " expired; ", e.requeued ? "requeued" : "failed"));
  }
  if (!expired->empty()) Changed(StoreChange::kClaimable);
  return absl::OkStatus();
}

absl::Status Scheduler::RefreshStateMetrics() {
  auto counts = store_.CountByState();
  if (!counts.ok()) return counts.status();
  metrics_.SetStates(*counts);
  return absl::OkStatus();
}

std::vector<std::pair<std::string, double>> FlattenMetrics(const v1::Evidence& e) {
  std::vector<std::pair<std::string, double>> out;
  if (e.duration().samples_us_size() > 0) out.emplace_back("duration", e.duration().aggregate_us());
  if (e.task_duration_us() > 0) out.emplace_back("task_duration_us", e.task_duration_us());
  if (e.aicore_time_us() > 0) out.emplace_back("aicore_time_us", e.aicore_time_us());
  if (e.aiv_time_us() > 0) out.emplace_back("aiv_time_us", e.aiv_time_us());
  if (e.head_overhead_us() != 0) out.emplace_back("head_overhead_us", e.head_overhead_us());
  if (e.cube_utilization_pct() > 0)
    out.emplace_back("cube_utilization_pct", e.cube_utilization_pct());
  if (!e.per_core().cores().empty())
    out.emplace_back("per_core.spread_pct", e.per_core().spread_pct());
  for (const auto& g : e.metrics()) {
    for (const auto& [field, value] : g.fields()) {
      out.emplace_back(absl::StrCat(g.group(), ".", field), value);
    }
  }
  return out;
}

}  // namespace npuperf::server
