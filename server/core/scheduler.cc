#include "server/core/scheduler.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/cleanup/cleanup.h"
#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/bundle_tar.h"
#include "common/input_rules.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "evidence/cases.h"
#include "evidence/roofline.h"
#include "server/core/agent_rules.h"
#include "server/core/constants.h"
#include "server/core/discovery_validator.h"
#include "server/core/evidence_validator.h"
#include "server/core/job_rules.h"
#include "server/core/limits.h"
#include "server/core/placement.h"
#include "server/core/request_rules.h"
#include "server/core/submission.h"

namespace npuperf::server {
namespace {

// A progress report as stored: its detail cleaned like any text an agent
// reports, fields this server does not know dropped (they would be stored
// as sent), and an unknown phase (a newer agent's, in a heartbeat) stored as
// unspecified rather than failing the heartbeat of every other job.
v1::JobProgress CleanProgress(const v1::JobProgress& reported) {
  v1::JobProgress p = reported;
  p.DiscardUnknownFields();
  p.set_detail(CleanReportedText(p.detail(), kMaxProgressDetailBytes));
  if (!v1::JobPhase_IsValid(p.phase())) p.set_phase(v1::JOB_PHASE_UNSPECIFIED);
  return p;
}

// The attempts a heartbeat or registration names, as the store takes them.
std::vector<AttemptRef> RefsOf(const google::protobuf::RepeatedPtrField<v1::RunningJob>& jobs) {
  std::vector<AttemptRef> refs;
  for (const auto& j : jobs) {
    refs.push_back({j.job_id(), j.attempt(), j.fencing_token(), j.lease_secret()});
  }
  return refs;
}

}  // namespace

Scheduler::Scheduler(Store& store, Clock& clock, ServerMetrics& metrics, SchedulerOptions options)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(options),
      changes_(clock),
      updates_(clock),
      agents_(store, metrics),
      bundles_(store, clock, metrics, options.bundles, options.max_bundle_bytes),
      artifacts_(store, clock, metrics, options.artifacts),
      health_(store, clock, metrics, options.device_admins),
      watches_(store, clock, metrics, options.watches),
      gauges_(store, clock, metrics) {
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

namespace {

// ValidateManifests over the stored bundles (each read whole from the store):
// INVALID_ARGUMENT with the violations.
absl::Status CheckManifests(Store& store, const v1::CollectionSpec& spec,
                            int64_t max_bundle_bytes) {
  auto found = ValidateManifests(spec, [&](const std::string& sha, const std::string& path) {
    auto tar = store.GetBundle(sha);
    if (!tar.ok()) return tar;
    return BundleFileContent(*tar, path, max_bundle_bytes, evidence::kMaxCaseManifestBytes);
  });
  if (!found.ok()) return found.status();
  return found->empty() ? absl::OkStatus() : InvalidArgumentWithFields(*found);
}

}  // namespace

absl::StatusOr<std::pair<v1::Collection, bool>> Scheduler::Submit(
    const std::string& team, const v1::SubmitCollectionRequest& req) {
  return SubmitForServer(team, req, {});
}

absl::StatusOr<std::pair<v1::Collection, bool>> Scheduler::SubmitForServer(
    const std::string& team, const v1::SubmitCollectionRequest& req,
    const std::map<std::string, std::string>& server_labels) {
  for (const auto& [key, value] : server_labels) {
    if (!absl::StartsWith(key, kServerLabelPrefix)) {
      return absl::InternalError(
          absl::StrCat("server label ", key, " lacks the prefix ", kServerLabelPrefix));
    }
  }
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
  std::vector<FieldViolation> violations =
      ValidateSpec(req.spec(), req.idempotency_key(), known, options_.limits);
  if (!lookup_error.ok()) return lookup_error;
  // A timeline job anchors to a formal round; only SubmitTimeline names one.
  if (req.spec().params().mode() == v1::PROFILE_MODE_TIMELINE &&
      !server_labels.contains(kTimelineOfLabel)) {
    violations.push_back({"spec.params.mode",
                          "PROFILE_MODE_TIMELINE jobs are queued with SubmitTimeline (npuperf "
                          "timeline ROUND), which anchors each to its formal round"});
  }
  if (!violations.empty()) return InvalidArgumentWithFields(violations);
  if (!missing.empty()) {
    return absl::NotFoundError(
        absl::StrCat("bundle ", missing.front(), " not found; upload it with UploadBundle first"));
  }
  if (absl::Status s = CheckManifests(store_, req.spec(), options_.max_bundle_bytes); !s.ok()) {
    return s;
  }
  NewCollection c;
  c.id = absl::StrFormat("c-%012x", absl::Uniform<uint64_t>(absl::BitGen(), 0, uint64_t{1} << 48));
  c.team = team;
  c.spec = WithDefaults(req.spec());
  for (const auto& [key, value] : server_labels) (*c.spec.mutable_labels())[key] = value;
  c.idempotency_key = req.idempotency_key();
  c.jobs = ExpandJobs(c.spec);
  if (absl::Status s = PlaceLongestFirst(team, c.spec, &c.jobs); !s.ok()) return s;
  c.now_ms = NowMs();
  c.max_team_queued = options_.limits.max_queued_jobs_per_team;
  c.answer_jobs = kDefaultJobsPage;  // the answer's one page
  auto result = store_.InsertCollection(c);
  if (!result.ok()) return result.status();
  if (result->second) {
    metrics_.collections_submitted.Increment();
    LogInfo("scheduler", absl::StrCat("collection ", result->first.id(), " queued: ", c.jobs.size(),
                                      " jobs for team ", team));
    Changed(StoreChange::kClaimable);
  } else if (absl::Status same = SameSpec(result->first, c.spec); !same.ok()) {
    return same;
  }
  KeepJobsPage(&result->first, kDefaultJobsPage);
  return result;
}

absl::Status Scheduler::PlaceLongestFirst(const std::string& team, const v1::CollectionSpec& spec,
                                          std::vector<NewJob>* jobs) {
  SetDurationKeys(team, spec, jobs);
  std::vector<std::string> keys;
  for (const NewJob& j : *jobs) keys.push_back(j.duration_key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  auto history = store_.RecentRunTimes(keys, kDurationHistory);
  if (!history.ok()) return history.status();
  std::map<std::string, int64_t> expected;
  for (auto& [key, runs] : *history) {
    if (auto ms = ExpectedRunMs(std::move(runs))) expected[key] = *ms;
  }
  *jobs = LongestFirst(std::move(*jobs), expected);
  return absl::OkStatus();
}

absl::Status Scheduler::SameSpec(const v1::Collection& existing,
                                 const v1::CollectionSpec& submitted) {
  const std::vector<std::string> differences = SpecDifferences(existing.spec(), submitted);
  if (differences.empty()) return absl::OkStatus();
  std::vector<FieldViolation> fields;
  for (const std::string& path : differences) {
    fields.push_back({path, absl::StrCat("differs from collection ", existing.id(),
                                         ", created earlier with this idempotency key")});
  }
  return StatusWithFields(absl::StatusCode::kAlreadyExists,
                          "idempotency key already used with another spec", fields);
}

absl::StatusOr<v1::Collection> Scheduler::Cancel(const std::string& team, const std::string& id,
                                                 const std::string& reason) {
  std::vector<FieldViolation> bad;
  if (id.empty() || id.size() > kMaxCollectionIdBytes) {
    bad.push_back({"collection_id", "required, at most 64 bytes"});
  }
  if (reason.size() > kMaxCancelReasonBytes || !IsPrintableLine(reason)) {
    bad.push_back({"reason", "at most 1024 bytes of printable text"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
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
  auto c = store_.GetCollectionPage(team, id, 0, kDefaultJobsPage + 1);
  if (c.ok()) KeepJobsPage(&*c, kDefaultJobsPage);
  return c;
}

std::string Scheduler::AgentIdFor(const v1::RegisterAgentRequest& req) {
  return "a-" + Sha256Hex(absl::StrCat(req.host(), "\n", req.boot_id(), "\n", req.instance_id()))
                    .substr(0, 12);
}

absl::Status Scheduler::DownloadBundle(const AgentIdentity& who,
                                       const v1::DownloadBundleRequest& req,
                                       const Bundles::DownloadSink& emit) {
  auto agent = agents_.Authorize(who, req.agent_id(), "DownloadBundle");
  if (!agent.ok()) return agent.status();
  return bundles_.Download(req.agent_id(), req.job_id(), req.sha256(), emit);
}

absl::StatusOr<v1::UploadArtifactResponse> Scheduler::UploadArtifact(
    const AgentIdentity& who, const Artifacts::ReadMessage& read) {
  v1::UploadArtifactRequest first;
  if (!read(&first) || !first.has_header()) {
    return InvalidArgumentWithFields({{"header", "the first message must be an ArtifactHeader"}});
  }
  auto agent = agents_.Authorize(who, first.header().agent_id(), "UploadArtifact");
  if (!agent.ok()) return agent.status();
  return artifacts_.Upload(first.header(), read);
}

absl::StatusOr<v1::RegisterAgentResponse> Scheduler::RegisterAgent(
    const AgentIdentity& who, const v1::RegisterAgentRequest& req) {
  const std::string agent_id = AgentIdFor(req);
  if (absl::Status s = agents_.Register(who, agent_id, req, NowMs()); !s.ok()) return s;
  auto adopted = store_.AdoptAttempts(agent_id, RefsOf(req.running_jobs()), NowMs(),
                                      options_.lease_ttl.count());
  if (!adopted.ok()) return adopted.status();
  agents_.Count("RegisterAgent", adopted->dropped);
  ObserveHealth(req.host(), req.devices());
  v1::RegisterAgentResponse resp;
  resp.set_agent_id(agent_id);
  resp.set_heartbeat_interval_ms(static_cast<int32_t>(options_.heartbeat_interval.count()));
  resp.set_lease_ttl_ms(static_cast<int32_t>(options_.lease_ttl.count()));
  resp.set_progress_in_heartbeats(true);
  for (const auto& ref : adopted->renewed) {
    auto* d = resp.add_directives();
    d->set_job_id(ref.job_id);
    d->set_action(v1::JobDirective::ACTION_ADOPT);
    d->set_reason("lease still valid");
  }
  for (const auto& refused : adopted->dropped) {
    auto* d = resp.add_directives();
    d->set_job_id(refused.ref.job_id);
    d->set_action(v1::JobDirective::ACTION_KILL);
    d->set_reason(absl::StrCat("lease not adopted: ", AgentRefusalName(refused.reason)));
  }
  LogInfo("scheduler",
          absl::StrCat("agent ", agent_id, " registered from ", req.host(), " with ",
                       req.devices_size(), " devices, adopted ", adopted->renewed.size(), "/",
                       req.running_jobs_size(), " running jobs"));
  Changed(StoreChange::kClaimable);
  return resp;
}

absl::StatusOr<v1::AgentSessionResponse> Scheduler::Heartbeat(const AgentIdentity& who,
                                                              const v1::Heartbeat& hb) {
  auto agent = agents_.Authorize(who, hb.agent_id(), "AgentSession");
  if (!agent.ok()) return agent.status();
  const std::vector<FieldViolation> bad = ValidateHeartbeat(hb, *agent);
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  // Only a change of a device's stored state, or a last-seen time
  // kAgentSeenRefresh old, is written (agent_rules.h SeenWriteDue).
  const int64_t now_ms = NowMs();
  if (agents_.SeenWriteDue(hb, now_ms, SeenRefreshMs(options_.agent_retention.count()))) {
    std::vector<v1::DeviceInfo> devices(hb.devices().begin(), hb.devices().end());
    for (v1::DeviceInfo& d : devices) d.set_state(StoredDeviceState(d.state()));
    absl::Status s = store_.UpdateDevices(hb.agent_id(), devices, now_ms);
    agents_.SeenWritten(hb.agent_id(), devices, now_ms, s.ok());
    if (!s.ok()) return s;
  }
  ObserveHealth(agent->host(), hb.devices());
  // The progress the heartbeat carries first (it renews those leases too);
  // RenewLeases then takes the rest, and says why a report was refused.
  std::vector<ProgressReport> reports;
  std::vector<AttemptRef> rest;
  for (const v1::RunningJob& j : hb.running_jobs()) {
    AttemptRef ref{j.job_id(), j.attempt(), j.fencing_token(), j.lease_secret()};
    if (!j.has_progress() || j.result_pending()) {
      rest.push_back(std::move(ref));
      continue;
    }
    reports.push_back({std::move(ref), CleanProgress(j.progress())});
  }
  auto progressed =
      store_.RecordProgressMany(hb.agent_id(), reports, NowMs(), options_.lease_ttl.count());
  if (!progressed.ok()) return progressed.status();
  using Key = std::tuple<int64_t, int32_t, int64_t, std::string>;
  std::set<Key> stored;
  for (const AttemptRef& ref : progressed->renewed) {
    JobChanged(StoreChange::kUpdated, ref.job_id);  // watchers see it
    stored.insert({ref.job_id, ref.attempt, ref.fencing_token, ref.lease_secret});
  }
  for (const ProgressReport& r : reports) {
    const AttemptRef& ref = r.ref;
    if (!stored.contains({ref.job_id, ref.attempt, ref.fencing_token, ref.lease_secret})) {
      rest.push_back(ref);
    }
  }
  auto renewal = rest.empty()
                     ? absl::StatusOr<LeaseRenewal>(LeaseRenewal())
                     : store_.RenewLeases(hb.agent_id(), rest, NowMs(), options_.lease_ttl.count());
  if (!renewal.ok()) return renewal.status();
  renewal->cancelled.insert(renewal->cancelled.end(), progressed->cancelled.begin(),
                            progressed->cancelled.end());
  agents_.Count("AgentSession", renewal->dropped);
  v1::AgentSessionResponse resp;
  resp.set_progress_in_heartbeats(true);
  for (const auto& refused : renewal->dropped) {
    auto* d = resp.add_directives();
    d->set_job_id(refused.ref.job_id);
    d->set_action(v1::JobDirective::ACTION_KILL);
    d->set_reason(
        absl::StrCat("lease no longer held by this agent: ", AgentRefusalName(refused.reason)));
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

void Scheduler::ObserveHealth(const std::string& host,
                              const google::protobuf::RepeatedPtrField<v1::DeviceInfo>& devices) {
  // The report itself stands: a store error here only delays a quarantine
  // to the next heartbeat.
  if (absl::Status s = health_.Observe(host, devices); !s.ok()) {
    LogWarning("scheduler", absl::StrCat("device health of ", host, ": ", s.message()));
  }
}

absl::StatusOr<bool> Scheduler::ReportProgress(const AgentIdentity& who,
                                               const v1::ReportProgressRequest& req) {
  if (!v1::JobPhase_IsValid(req.progress().phase())) {
    return InvalidArgumentWithFields({{"progress.phase", "unknown phase"}});
  }
  auto agent = agents_.Authorize(who, req.agent_id(), "ReportProgress");
  if (!agent.ok()) return agent.status();
  const v1::JobProgress progress = CleanProgress(req.progress());
  auto cancel = store_.RecordProgress(
      req.agent_id(), {req.job_id(), req.attempt(), req.fencing_token(), req.lease_secret()},
      progress, NowMs(), options_.lease_ttl.count());
  (void)agents_.Count("ReportProgress", cancel.status());
  if (absl::IsFailedPrecondition(cancel.status())) metrics_.results_stale.Increment();
  if (cancel.ok()) JobChanged(StoreChange::kUpdated, req.job_id());
  return cancel;
}

absl::StatusOr<v1::ReportResultResponse> Scheduler::ReportResult(
    const AgentIdentity& who, const v1::ReportResultRequest& req) {
  const Clock::MonotonicTime started = clock_.MonotonicNow();
  absl::Cleanup observe = [&] {
    metrics_.ingest_seconds.Observe(
        std::chrono::duration<double>(clock_.MonotonicNow() - started).count());
  };
  std::vector<FieldViolation> bad;
  if (req.update_uuid().empty() || req.update_uuid().size() > kMaxUpdateUuidBytes ||
      !IsPrintableLine(req.update_uuid())) {
    bad.push_back({"update_uuid", "required, at most 64 bytes of printable text"});
  }
  if (req.outcome() == v1::ATTEMPT_OUTCOME_UNSPECIFIED ||
      !v1::AttemptOutcome_IsValid(req.outcome())) {
    bad.push_back({"outcome", "required, a known outcome"});
  }
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto agent = agents_.Authorize(who, req.agent_id(), "ReportResult");
  if (!agent.ok()) return agent.status();
  AttemptResult r;
  r.agent_id = req.agent_id();
  r.ref = {req.job_id(), req.attempt(), req.fencing_token(), req.lease_secret()};
  r.update_uuid = req.update_uuid();
  r.outcome = req.outcome();
  r.failure_reason = CleanReportedText(req.failure_reason(), kMaxFailureReasonBytes);
  r.retryable = req.retryable();
  r.max_lost = options_.max_lost;
  r.now_ms = NowMs();
  if (r.outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED && req.has_discovery()) {
    std::vector<FieldViolation> invalid = ValidateDiscovery(req.discovery());
    if (req.has_evidence()) invalid.push_back({"evidence", "absent when discovery is given"});
    if (!invalid.empty()) return RejectEvidence(std::move(r), invalid);
    r.discovery = req.discovery();
  } else if (r.outcome == v1::ATTEMPT_OUTCOME_SUCCEEDED) {
    std::vector<FieldViolation> invalid = ValidateEvidence(req.evidence());
    r.evidence = req.evidence();
    if (invalid.empty() && r.evidence.has_timeline()) {
      if (absl::Status s = AnchorTimeline(req.job_id(), &r.evidence, &invalid); !s.ok()) return s;
    }
    if (!invalid.empty()) return RejectEvidence(std::move(r), invalid);
    r.metrics = FlattenMetrics(req.evidence());
  }
  auto ack = store_.RecordResult(r);
  if (!ack.ok()) {
    (void)agents_.Count("ReportResult", ack.status());
    if (absl::IsFailedPrecondition(ack.status())) metrics_.results_stale.Increment();
    return ack.status();
  }
  if (ack->duplicate) {
    metrics_.results_duplicate.Increment();
  } else if (ack->round_id > 0 || r.discovery) {  // a discovery job stores no round
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

absl::Status Scheduler::AnchorTimeline(int64_t job_id, v1::Evidence* evidence,
                                       std::vector<FieldViolation>* invalid) {
  absl::StatusOr<JobBundle> job = store_.GetJobBundle(job_id);
  if (absl::IsNotFound(job.status())) return absl::OkStatus();  // RecordResult says stale
  if (!job.ok()) return job.status();
  const auto& labels = job->spec.labels();
  auto anchor = labels.find(kTimelineOfLabel);
  int64_t round_id = 0;
  if (job->spec.params().mode() != v1::PROFILE_MODE_TIMELINE || anchor == labels.end() ||
      !absl::SimpleAtoi(anchor->second, &round_id) || round_id <= 0) {
    invalid->push_back(
        {"evidence.timeline", "only a timeline job (PROFILE_MODE_TIMELINE) reports one"});
    return absl::OkStatus();
  }
  v1::TimelineSummary* t = evidence->mutable_timeline();
  t->set_anchor_round_id(round_id);
  // The §2.11 completion rule over the formal round's roofline, this timeline
  // and the user's attestation (checked against the target at submission).
  std::optional<evidence::TileDagAttestation> attestation;
  if (!job->spec.tile_dag_attestation().empty()) {
    auto a = evidence::ParseTileDagAttestation(job->spec.tile_dag_attestation(),
                                               evidence->op_name(), "tile_dag_attestation");
    if (a.ok()) attestation = *std::move(a);
  }
  absl::StatusOr<v1::Round> formal = store_.GetRound(job->team, round_id);
  if (!formal.ok() && !absl::IsNotFound(formal.status())) return formal.status();
  const evidence::Completion c =
      evidence::DecideCompletion(formal.ok() ? formal->evidence().evidence_json() : "",
                                 t->attribution_status(), t->overlap_ns(), attestation);
  t->set_tile_dag_attestation_sha256(attestation ? attestation->sha256 : "");
  t->set_pipeline_overlap_status(c.pipeline_status);
  t->set_roofline_terminal_status(c.terminal_status);
  t->set_completion_eligible(c.eligible);
  t->clear_completion_blockers();
  for (const std::string& b : c.blockers) t->add_completion_blockers(b);
  return absl::OkStatus();
}

absl::Status Scheduler::RejectEvidence(AttemptResult r,
                                       const std::vector<FieldViolation>& violations) {
  r.outcome = v1::ATTEMPT_OUTCOME_FAILED;
  r.retryable = false;
  r.failure_reason = EvidenceRejection(violations);
  auto ack = store_.RecordResult(r);
  if (!ack.ok()) {
    (void)agents_.Count("ReportResult", ack.status());
    if (absl::IsFailedPrecondition(ack.status())) metrics_.results_stale.Increment();
    return ack.status();
  }
  if (!ack->duplicate) {
    metrics_.results_rejected.Increment();
    LogWarning("scheduler", absl::StrCat("job ", r.ref.job_id, " attempt ", r.ref.attempt,
                                         " from agent ", r.agent_id, ": ", r.failure_reason));
    Changed(StoreChange::kClaimable);
  }
  return InvalidArgumentWithFields(violations);
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

absl::Status Scheduler::PruneAgents() {
  auto pruned = store_.PruneAgents(NowMs() - options_.agent_retention.count(), kAgentPruneBatch);
  if (!pruned.ok()) return pruned.status();
  agents_.Forget(*pruned);
  if (!pruned->empty()) {
    LogInfo("scheduler", absl::StrCat("pruned ", pruned->size(), " agents unseen for ",
                                      options_.agent_retention.count() / 1000, " s"));
  }
  return absl::OkStatus();
}

absl::Status Scheduler::RefreshStateMetrics() { return gauges_.Refresh(); }

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

bool SubmissionRefusedForGood(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied: return true;
    default: return false;
  }
}

}  // namespace npuperf::server
