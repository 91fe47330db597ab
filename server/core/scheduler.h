#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/status_util.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/collection_service.pb.h"
#include "server/core/agent_identity.h"
#include "server/core/agent_registry.h"
#include "server/core/artifacts.h"
#include "server/core/assignment.h"
#include "server/core/bundle_upload.h"
#include "server/core/bundles.h"
#include "server/core/change_notifier.h"
#include "server/core/device_health.h"
#include "server/core/limits.h"
#include "server/core/metrics.h"
#include "server/core/state_gauges.h"
#include "server/core/watch_hub.h"
#include "server/store/store.h"

namespace npuperf::server {

// Tunables of the scheduler. Every field has its default.
struct SchedulerOptions {
  // Lease TTL; agents renew by heartbeat. Default: 30 s.
  std::chrono::milliseconds lease_ttl{30'000};
  // Heartbeat period asked of agents. Default: 1 s.
  std::chrono::milliseconds heartbeat_interval{1'000};
  // A job whose lease was lost this many times fails. Default: 3.
  int max_lost = 3;
  // Largest bundle accepted. Default: 64 MiB.
  int64_t max_bundle_bytes = 64 << 20;
  // Agents not seen for this long (and holding no live lease) are pruned
  // with their devices. Default: 7 days.
  std::chrono::milliseconds agent_retention{std::chrono::hours(24 * 7)};
  // The quotas set by flags (jobs per collection, queued jobs per team);
  // defaults in limits.h.
  InputLimits limits;
  // Bundle quota, retention and upload limits.
  BundleOptions bundles;
  // Artifact directory, size limit, quota and retention.
  ArtifactOptions artifacts;
  // WatchCollection stream limits.
  WatchOptions watches;
  // Teams that may release quarantined devices (--device-admin; any caller
  // when authentication is off). Default: none.
  std::set<std::string> device_admins;
};

// A pending cancellation for an agent's running job.
struct PendingCancel {
  int64_t job_id = 0;
  int64_t fencing_token = 0;
  std::string reason;
};

// The server's domain core: submissions, bundles, claims, leases, results
// and cancellation, over a Store. No gRPC, no SQL. Every timestamp, lease
// TTL and wait comes from the injected Clock. Its neighbours in core/:
// assignment.h (which job goes to which device), change_notifier.h (the
// wake-ups below), read_queries.h (the read-only requests), reaper.h (calls
// ExpireLeases and RefreshStateMetrics periodically). Thread-safe.
// Registers a change callback with the store (other replicas' changes wake
// its waiters) and removes it on destruction; the store, clock and metrics
// must outlive the scheduler.
// Whether a SubmitForServer error ends the server-side work that asked for
// it (a confirmation's or a bisection's run): a refusal that no retry of the
// same submission can change (a bad spec, a bundle gone, the team's quota,
// a key used with another spec, no permission). Other errors (the store
// unreachable) are returned for the next round to try again.
bool SubmissionRefusedForGood(const absl::Status& s);

// How the server's own work (confirmations, calibrations, bisections,
// canaries) submits and cancels: Scheduler::SubmitForServer and
// Scheduler::Cancel as functions, so that each takes them through its
// constructor (and tests and benches wire them to their own Scheduler).
using ServerSubmit = std::function<absl::StatusOr<std::pair<v1::Collection, bool>>(
    const std::string& team, const v1::SubmitCollectionRequest& req,
    const std::map<std::string, std::string>& server_labels)>;
using ServerCancel = std::function<absl::Status(const std::string& team, const std::string& id,
                                                const std::string& reason)>;

class Scheduler {
 public:
  Scheduler(Store& store, Clock& clock, ServerMetrics& metrics, SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Validates all-or-nothing (INVALID_ARGUMENT with field violations) and
  // queues the jobs; returns the collection (with the first page of its
  // jobs) and whether it was created. RESOURCE_EXHAUSTED when the team's
  // queued jobs would pass limits.max_queued_jobs_per_team; ALREADY_EXISTS
  // naming the differing fields when the idempotency key was used with
  // another spec.
  absl::StatusOr<std::pair<v1::Collection, bool>> Submit(const std::string& team,
                                                         const v1::SubmitCollectionRequest& req);
  // Submit on the server's own behalf for team (a confirmation's or a
  // calibration's reruns): req is checked exactly as a client's, then
  // server_labels (keys starting kServerLabelPrefix, which clients may not
  // set) are added to its labels. The team's quotas apply as to any
  // submission.
  absl::StatusOr<std::pair<v1::Collection, bool>> SubmitForServer(
      const std::string& team, const v1::SubmitCollectionRequest& req,
      const std::map<std::string, std::string>& server_labels);
  // Receives, checks (ReceiveBundle, up to max_bundle_bytes) and stores one
  // UploadBundle stream for team (Bundles::Upload: concurrency limits,
  // quota).
  absl::StatusOr<v1::UploadBundleResponse> UploadBundle(const std::string& team,
                                                        const ReadUploadMessage& read) {
    return bundles_.Upload(team, read);
  }
  // Streams the bundle of a job to the agent holding its lease: the agent id
  // must be one `who` may act for (AgentRegistry::Authorize: NOT_FOUND,
  // PERMISSION_DENIED), and Bundles::Download answers PERMISSION_DENIED for
  // anyone but the lease holder.
  absl::Status DownloadBundle(const AgentIdentity& who, const v1::DownloadBundleRequest& req,
                              const Bundles::DownloadSink& emit);
  // Receives one UploadArtifact stream: its first message must be an
  // ArtifactHeader (INVALID_ARGUMENT naming "header") whose agent id `who`
  // may act for (AgentRegistry::Authorize); then Artifacts::Upload.
  absl::StatusOr<v1::UploadArtifactResponse> UploadArtifact(const AgentIdentity& who,
                                                            const Artifacts::ReadMessage& read);
  // The artifact store (downloads, the start check of its directory).
  Artifacts& artifacts() { return artifacts_; }
  // Device quarantine (heartbeats and registrations are observed, offers
  // filtered; the release of a person goes through it).
  DeviceHealth& device_health() { return health_; }
  // The collection with the first page of its jobs; INVALID_ARGUMENT for an
  // empty or oversized id or a reason over kMaxCancelReasonBytes.
  absl::StatusOr<v1::Collection> Cancel(const std::string& team, const std::string& id,
                                        const std::string& reason);

  // The agent calls. `who` is the caller's identity (AgentIdentity::Of its
  // principal); every call naming an agent id checks it first
  // (AgentRegistry::Authorize: NOT_FOUND, PERMISSION_DENIED), and every
  // report, renewal and adoption of a lease obeys the store's lease rule
  // (Store::RenewLeases): refusals store nothing and are counted in
  // npuperf_server_agent_calls_refused_total.
  //
  // Registers (AgentRegistry::Register: INVALID_ARGUMENT, PERMISSION_DENIED
  // for another host) and adopts the running jobs whose lease it holds.
  absl::StatusOr<v1::RegisterAgentResponse> RegisterAgent(const AgentIdentity& who,
                                                          const v1::RegisterAgentRequest& req);
  // Renews the caller's leases and records the states of its registered
  // devices (INVALID_ARGUMENT for others); answers with directives and
  // cancels.
  absl::StatusOr<v1::AgentSessionResponse> Heartbeat(const AgentIdentity& who,
                                                     const v1::Heartbeat& hb);
  // Claims jobs for the offered devices (each one the agent registered,
  // else INVALID_ARGUMENT naming free_devices[i]), at most one per device
  // and max_assignments in all (0 counts as 1; 0..kMaxAgentDevices, else
  // INVALID_ARGUMENT), waiting up to wait_ms (0..kMaxLeaseWait, else
  // INVALID_ARGUMENT) on the clock for work (event-driven): returns as soon
  // as one claim leased any. Each assignment carries its own new lease
  // secret. stop() ends the wait early (client gone, shutdown).
  absl::StatusOr<std::vector<v1::JobAssignment>> LeaseJobs(const AgentIdentity& who,
                                                           const v1::LeaseJobRequest& req,
                                                           const std::function<bool()>& stop);
  // LeaseJobs for one job (req.max_assignments ignored).
  absl::StatusOr<std::optional<v1::JobAssignment>> LeaseJob(const AgentIdentity& who,
                                                            const v1::LeaseJobRequest& req,
                                                            const std::function<bool()>& stop);
  // INVALID_ARGUMENT for an unknown phase; the detail is cleaned and cut
  // (CleanReportedText).
  absl::StatusOr<bool> ReportProgress(const AgentIdentity& who,
                                      const v1::ReportProgressRequest& req);
  // Evidence of a succeeded attempt is validated first (ValidateEvidence):
  // refused evidence fails the job for good with "evidence rejected: ..."
  // (through the store, so the fencing checks apply and a resend is a
  // duplicate), nothing of it is stored, and the answer is INVALID_ARGUMENT
  // naming the fields. The failure reason is cleaned and cut. A succeeded
  // discovery job carries a DiscoveryResult instead, refused the same way
  // when ValidateDiscovery objects (or evidence comes with it).
  absl::StatusOr<v1::ReportResultResponse> ReportResult(const AgentIdentity& who,
                                                        const v1::ReportResultRequest& req);

  // Takes back expired leases (called periodically by the reaper).
  absl::Status ExpireLeases();
  // Prunes agents unseen for agent_retention (called by the reaper).
  absl::Status PruneAgents();
  // Deletes bundles nobody needs any more (called periodically by the
  // reaper; Bundles::Collect).
  absl::Status CollectBundles() { return bundles_.Collect().status(); }
  // Deletes artifacts past their retention (called periodically by the
  // reaper; Artifacts::Sweep).
  absl::Status SweepArtifacts() { return artifacts_.Sweep().status(); }
  // Sets the gauges that come from the store (StateGauges::Refresh).
  absl::Status RefreshStateMetrics();

  // Bumped when jobs may have become claimable (LeaseJob waits on it).
  ChangeNotifier& changes() { return changes_; }
  // Bumped on every change of a collection or its jobs, claimable or not.
  // Every changes() bump bumps it too.
  ChangeNotifier& updates() { return updates_; }
  // The WatchCollection fan-out; told of every change of a collection.
  WatchHub& watches() { return watches_; }

 private:
  int64_t NowMs() { return ToUnixMillis(clock_.SystemNow()); }
  std::string AgentIdFor(const v1::RegisterAgentRequest& req);
  // What LeaseJob offers the store: the agent's host and labels, the
  // request's free devices (checked against its registration) and a new
  // lease secret for each job it may take.
  absl::StatusOr<ClaimRequest> ClaimRequestFor(const AgentIdentity& who,
                                               const v1::LeaseJobRequest& req);
  // One look of a LeaseJob poll: the claim's devices narrowed to the
  // placeable ones, the store's claim (ABORTED, a claim that lost every
  // race, is an empty look), each lease counted and announced.
  absl::StatusOr<std::vector<v1::JobAssignment>> LookForWork(ClaimRequest& claim, int64_t call_ms);
  // Queue-wait and submit-to-lease histograms for a lease granted to a
  // LeaseJob call that started at call_ms.
  void ObserveLease(const v1::JobAssignment& a, int64_t call_ms);
  // DeviceHealth::Observe of an agent's report; a store error is logged.
  void ObserveHealth(const std::string& host,
                     const google::protobuf::RepeatedPtrField<v1::DeviceInfo>& devices);
  // Keys the jobs (core/placement.h) and orders them longest first from the
  // store's history of those keys; a store error is returned.
  absl::Status PlaceLongestFirst(const std::string& team, const v1::CollectionSpec& spec,
                                 std::vector<NewJob>* jobs);
  // ALREADY_EXISTS naming the fields in which `submitted` (defaults filled)
  // differs from the spec stored under the same idempotency key; OK when
  // equal.
  static absl::Status SameSpec(const v1::Collection& existing, const v1::CollectionSpec& submitted);
  // A succeeded report whose evidence was refused: fails the job through the
  // store, then INVALID_ARGUMENT naming the violations.
  absl::Status RejectEvidence(AttemptResult r, const std::vector<FieldViolation>& violations);
  // A timeline's evidence is accepted only from a PROFILE_MODE_TIMELINE job,
  // and anchored (TimelineSummary.anchor_round_id) to the round its
  // collection's server label names, never to one the agent claims.
  absl::Status AnchorTimeline(int64_t job_id, v1::Evidence* evidence,
                              std::vector<FieldViolation>* invalid);

  Store& store_;
  Clock& clock_;
  ServerMetrics& metrics_;
  const SchedulerOptions options_;
  // Bumps changes_ and updates_ (kClaimable) or updates_ only (kUpdated).
  void Changed(StoreChange change);
  // Changed, and tells the watchers of the job's collection.
  void JobChanged(StoreChange change, int64_t job_id);

  ChangeNotifier changes_;
  ChangeNotifier updates_;
  AgentRegistry agents_;
  Bundles bundles_;
  Artifacts artifacts_;
  DeviceHealth health_;
  WatchHub watches_;
  StateGauges gauges_;
  absl::Mutex mu_;
  // Cancellations waiting to be pushed on an agent's session.
  std::map<std::string, std::vector<PendingCancel>> cancels_ ABSL_GUARDED_BY(mu_);
};

// Flattens evidence into named figures for metric time series:
// "duration", "task_duration_us", "aicore_time_us", "<Group>.<field>", ...
std::vector<std::pair<std::string, double>> FlattenMetrics(const v1::Evidence& e);

}  // namespace npuperf::server
