#pragma once
// The Store seam (style.md §4, seam 1): the interface every backend
// implements (server/backends/sqlite/, server/backends/postgres/) and the
// conformance suite (tests/server/store/store_conformance*_test.cc) holds them
// to. The records it reads and writes are in records.h.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/store/records.h"

namespace npuperf::server {

// What another replica changed (Store::SetChangeCallback).
enum class StoreChange {
  kClaimable,  // jobs became claimable; collections changed too
  kUpdated,    // collections changed (progress, cancellation); nothing claimable
};

// Picks (candidate index, device index) among the candidates, or nullopt.
// Candidates are in (priority desc, job_id asc) order. Pure policy: see
// core/assignment.h ChooseClaim.
using ClaimChooser = std::function<std::optional<std::pair<size_t, size_t>>(
    const std::vector<ClaimCandidate>&, const std::vector<OfferedDevice>&,
    const std::map<std::string, std::string>& agent_labels)>;

// The keys RecentRunTimes asks for: the non-empty lowercase hex ones, in
// order (core/placement.h's digests). Both backends splice them into one
// array literal, which they need no quoting in.
std::vector<std::string> DurationKeysToAsk(const std::vector<std::string>& keys);

// A claim's lease secrets (Store::ClaimJobs, both backends): how many
// leases it may make (1 + more_lease_secrets), the secret of its k-th
// (0: lease_secret, then more_lease_secrets in order), and
// INVALID_ARGUMENT when any of them is empty.
size_t ClaimMaxLeases(const ClaimRequest& req);
const std::string& ClaimLeaseSecret(const ClaimRequest& req, size_t k);
absl::Status CheckClaimSecrets(const ClaimRequest& req);

// `names` as a JSON array of strings (both backends expand it with their
// JSON functions: json_each, jsonb_array_elements_text), so a list of
// tenant-chosen names is one bound parameter, never spliced SQL.
std::string JsonStringArray(const std::vector<std::string>& names);

// The reports RecordProgressMany stores (both backends): each job's last,
// in the order given (a job named twice in one heartbeat is written once).
std::vector<const ProgressReport*> LastReportPerJob(const std::vector<ProgressReport>& reports);

// Where every durable fact of the server lives (style.md §4, seam 1).
// Methods are domain operations; each is atomic. Exceptions never leave a
// Store: backend errors become statuses (R3): busy/serialization ->
// ABORTED (retried inside first), connection loss -> UNAVAILABLE.
// Thread-safe: every method may be called from any thread.
class Store {
 public:
  virtual ~Store() = default;

  // Tokens: the (kind, name) for a token hash, NOT_FOUND when unknown.
  virtual absl::StatusOr<std::pair<std::string, std::string>> LookupToken(
      const std::string& hash) = 0;
  virtual absl::Status InsertToken(const std::string& hash, const std::string& kind,
                                   const std::string& name, int64_t now_ms) = 0;

  // How many tokens the database holds (auth is on whenever any exists).
  virtual absl::StatusOr<int64_t> CountTokens() = 0;

  // Browser sessions of the web pages (server/ui/): keyed by the sha256 hex
  // of the cookie's random id (the id itself is never stored). A session is
  // live while now_ms < expires_ms.
  virtual absl::Status InsertUiSession(const std::string& id_sha256, const std::string& team,
                                       int64_t created_ms, int64_t expires_ms) = 0;
  // The team of a live session; NOT_FOUND when unknown or expired (an
  // expired one is deleted).
  virtual absl::StatusOr<std::string> LookupUiSession(const std::string& id_sha256,
                                                      int64_t now_ms) = 0;
  // Logout; deleting an unknown session is OK (idempotent).
  virtual absl::Status DeleteUiSession(const std::string& id_sha256) = 0;
  // Deletes every session expired at now_ms; returns how many.
  virtual absl::StatusOr<int64_t> DeleteExpiredUiSessions(int64_t now_ms) = 0;

  // Bundles: the content is stored once per sha256 (deduplicated, in
  // chunks), and owned by every team that uploaded it; a team sees only the
  // bundles it owns. Stores b for b.team, reading the content through
  // b.read only when no team had it yet. Returns true when b.team already
  // owned it (then it is only marked used, b.now_ms). RESOURCE_EXHAUSTED,
  // nothing stored, when the team's bundles would pass b.quota_bytes.
  virtual absl::StatusOr<bool> StoreBundle(const NewBundle& b) = 0;
  // StoreBundle of content held in memory, without a quota (tests, tools).
  absl::StatusOr<bool> PutBundle(const std::string& team, const std::string& name,
                                 const std::string& sha256, const std::string& content,
                                 int64_t now_ms);
  // True when team owns the bundle; marks it used at now_ms, so the
  // collector keeps it for the retention period from then.
  virtual absl::StatusOr<bool> UseBundle(const std::string& team, const std::string& sha256,
                                         int64_t now_ms) = 0;
  // The bytes of the bundles team owns (what its quota counts).
  virtual absl::StatusOr<int64_t> BundleBytes(const std::string& team) = 0;
  // The job and its operator's bundle, for a download. NOT_FOUND when the
  // job is unknown.
  virtual absl::StatusOr<JobBundle> GetJobBundle(int64_t job_id) = 0;
  // Chunk `index` (0-based, JobBundle::chunks of them) of a stored bundle.
  // NOT_FOUND past the last chunk or for an unknown bundle.
  virtual absl::StatusOr<std::string> GetBundleChunk(const std::string& sha256, int32_t index) = 0;
  // The whole content (tests, tools): every chunk in order. NOT_FOUND when
  // the bundle is unknown.
  absl::StatusOr<std::string> GetBundle(const std::string& sha256);
  // Drops each team's ownership of the bundles it last used before
  // unused_before_ms that no collection of the team with queued or live
  // jobs references and no pinned baseline (round or collection) needs;
  // deletes the content nobody owns any more.
  virtual absl::StatusOr<BundleCollection> CollectBundles(int64_t unused_before_ms) = 0;

  // Artifacts (metadata; the bytes are files in the artifact directory,
  // core/artifact_files.h). The attempt rule: a.agent_id must be the agent
  // whose lease produced a.ref's round (the job SUCCEEDED with that attempt
  // and fencing token, and the lease's secret) — FAILED_PRECONDITION
  // (stale: another attempt, not succeeded, no round), PERMISSION_DENIED
  // (another agent, wrong secret), NOT_FOUND (unknown job), with the
  // AgentRefusal reason. Then the team's quota: RESOURCE_EXHAUSTED naming
  // the team and the limit when the team's artifacts plus a.size_bytes would
  // pass a.quota_bytes (not when the round already lists a.sha256).
  // CheckArtifact decides without writing (before the bytes are received).
  virtual absl::StatusOr<ArtifactTarget> CheckArtifact(const NewArtifact& a) = 0;
  // Decides the same again and lists the artifact on the round, atomically;
  // a second attach of the same (round, sha256) changes nothing
  // (already_present).
  virtual absl::StatusOr<ArtifactTarget> AttachArtifact(const NewArtifact& a) = 0;
  // The artifacts of a round, oldest first (empty when none); team empty:
  // any team's round, else only team's (another team's round: empty).
  virtual absl::StatusOr<std::vector<ArtifactRecord>> ListArtifacts(const std::string& team,
                                                                    int64_t round_id) = 0;
  // Whether any artifact row references sha256 (before its file is deleted).
  virtual absl::StatusOr<bool> ArtifactReferenced(const std::string& sha256) = 0;
  // Deletes at most `limit` artifact rows of the teams in `scope` created
  // before created_before_ms whose round no pinned baseline references (a
  // round baseline, or a collection baseline of the round's collection);
  // returns them and the digests no row references any more.
  virtual absl::StatusOr<ArtifactSweep> SweepArtifacts(int64_t created_before_ms, int32_t limit,
                                                       const ArtifactSweepScope& scope) = 0;

  // Creates a collection and its jobs, or returns the collection created
  // earlier with the same (team, idempotency key) and created=false.
  // RESOURCE_EXHAUSTED (nothing inserted) when c.max_team_queued > 0 and the
  // team's queued jobs plus c.jobs would pass it; the count and the insert
  // are atomic per team.
  virtual absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollection(
      const NewCollection& c) = 0;
  // Placement history (core/placement.h): for each key, the device time
  // (ms from lease to result) of its newest per_key succeeded jobs, newest
  // first. A key with no such job is absent; keys that are not lowercase
  // hex (DurationKeysToAsk) are ignored.
  virtual absl::StatusOr<std::map<std::string, std::vector<int64_t>>> RecentRunTimes(
      const std::vector<std::string>& keys, int per_key) = 0;
  // A collection with its jobs. NOT_FOUND when absent or another team's
  // (team empty: any team).
  virtual absl::StatusOr<v1::Collection> GetCollection(const std::string& team,
                                                       const std::string& id) = 0;
  // The same with its complete counts but only the jobs with ids above
  // after_job_id, by id, at most max_jobs of them (0: none).
  virtual absl::StatusOr<v1::Collection> GetCollectionPage(const std::string& team,
                                                           const std::string& id,
                                                           int64_t after_job_id,
                                                           int32_t max_jobs) = 0;
  // The same without the spec (left empty, never read): a later page of
  // GetCollection, whose spec with every case id was the most of a page's
  // cost for a 100,000-job collection (issue 36).
  virtual absl::StatusOr<v1::Collection> GetCollectionPageWithoutSpec(const std::string& team,
                                                                      const std::string& id,
                                                                      int64_t after_job_id,
                                                                      int32_t max_jobs) = 0;
  // Collections with queued jobs (every team) and how many, oldest first, at
  // most limit (for the unplaceable-jobs gauge).
  virtual absl::StatusOr<std::vector<QueuedCount>> CountQueuedByCollection(int32_t limit) = 0;
  virtual absl::StatusOr<std::vector<v1::Collection>> ListCollections(
      const CollectionFilter& filter) = 0;
  // Cancels queued jobs at once; returns the running attempts to stop.
  virtual absl::StatusOr<std::vector<CancelOrder>> CancelCollection(const std::string& team,
                                                                    const std::string& id,
                                                                    const std::string& reason,
                                                                    int64_t now_ms) = 0;

  // Agents. Registers (or re-registers) an agent instance; its devices become
  // exactly info.devices (ids and SoCs as registered). Other instances of the
  // same host, boot and slot become "lost".
  virtual absl::Status UpsertAgent(const std::string& agent_id,
                                   const v1::RegisterAgentRequest& info, int64_t now_ms) = 0;
  // A heartbeat: the agent is online and seen now; each listed device that it
  // registered takes the listed state (SoC unchanged); other device ids are
  // ignored (never added). NOT_FOUND when the agent is unknown.
  virtual absl::Status UpdateDevices(const std::string& agent_id,
                                     const std::vector<v1::DeviceInfo>& devices,
                                     int64_t now_ms) = 0;
  // Every agent (by host, then registration) with its devices and the team of
  // each running job.
  virtual absl::StatusOr<std::vector<AgentRecord>> ListAgents() = 0;
  // What the agent sent at registration. NOT_FOUND when unknown or lost.
  virtual absl::StatusOr<v1::RegisterAgentRequest> GetAgent(const std::string& agent_id) = 0;
  // Deletes agents (with their devices) last seen before seen_before_ms that
  // hold no live lease, at most `limit` of them; returns their ids.
  virtual absl::StatusOr<std::vector<std::string>> PruneAgents(int64_t seen_before_ms,
                                                               int32_t limit) = 0;

  // Claims queued jobs for the offered devices, at most one per device and
  // 1 + req.more_lease_secrets.size() in all, each atomically: the job
  // becomes LEASED with attempt+1, a new fencing token and the sha256 of its
  // secret (req.lease_secret for the first, INVALID_ARGUMENT when empty; the
  // k-th of more_lease_secrets for the (k+1)-th), which its assignment
  // carries. A device already holding a live lease is never offered to the
  // chooser; it is asked once per lease, and sees the leases this claim
  // made before (their devices gone, their collections' and teams' live
  // counts raised). May return fewer leases than it could have when another
  // claim takes the same jobs meanwhile; none only when it found none to
  // take (issue 36: an agent's free devices in one claim, not one each).
  virtual absl::StatusOr<std::vector<v1::JobAssignment>> ClaimJobs(const ClaimRequest& req,
                                                                   const ClaimChooser& choose) = 0;
  // ClaimJobs, one job at most (req.more_lease_secrets ignored).
  absl::StatusOr<std::optional<v1::JobAssignment>> ClaimJob(const ClaimRequest& req,
                                                            const ClaimChooser& choose);
  //
  // The lease rule of every call below (core/job_rules.h CheckLease): an
  // attempt is accepted only while it is its job's current lease (live
  // state, same fencing token; and attempt, where the call names it), held by
  // the caller, with the lease's secret (a lease granted before migration
  // 0004 has none and needs none). Refusals carry an AgentRefusal as the
  // status's ErrorInfo reason (core/job_rules.h LeaseRefused).
  //
  // Keeps the leases of the listed attempts held by agent_id: each expires
  // at now_ms + lease_ttl_ms once less than half the TTL was left
  // (core/job_rules.h LeaseRenewalDue), and is left as it is otherwise.
  // Returns the held ones as renewed, the refused ones (to kill), and the
  // held ones whose collection was cancelled (to stop and report as
  // cancelled).
  virtual absl::StatusOr<LeaseRenewal> RenewLeases(const std::string& agent_id,
                                                   const std::vector<AttemptRef>& running,
                                                   int64_t now_ms, int64_t lease_ttl_ms) = 0;
  // Reattaches attempts to a re-registered agent instance when their lease
  // is live, was granted to an agent of the same host, and the token and
  // secret match; returns the adopted (renewed) and the refused ones.
  virtual absl::StatusOr<LeaseRenewal> AdoptAttempts(const std::string& agent_id,
                                                     const std::vector<AttemptRef>& running,
                                                     int64_t now_ms, int64_t lease_ttl_ms) = 0;
  // Records progress (LEASED -> RUNNING) and renews the lease. NOT_FOUND for
  // an unknown job, FAILED_PRECONDITION for a stale lease, PERMISSION_DENIED
  // for another agent's lease or a wrong secret; nothing is stored then.
  // Returns true when the job's collection was cancelled.
  virtual absl::StatusOr<bool> RecordProgress(const std::string& agent_id, const AttemptRef& ref,
                                              const v1::JobProgress& progress, int64_t now_ms,
                                              int64_t lease_ttl_ms) = 0;
  // Records the progress of several attempts of agent_id at once, each as
  // RecordProgress would (LEASED -> RUNNING, the lease renewed, the
  // collection's state kept true), in one write where their collections are
  // RUNNING (issue 36: the reports a heartbeat carries, instead of one call
  // and one write per report). A refused attempt (unknown job, stale or
  // foreign lease, wrong secret) is skipped and nothing of it is stored; of
  // a job named twice only the last report counts (LastReportPerJob).
  // Returns the stored ones as renewed, in the order given, and those of
  // them whose collection was cancelled; `dropped` stays empty (the caller
  // asks RenewLeases why the rest were refused).
  virtual absl::StatusOr<LeaseRenewal> RecordProgressMany(
      const std::string& agent_id, const std::vector<ProgressReport>& reports, int64_t now_ms,
      int64_t lease_ttl_ms) = 0;
  // Applies a finished attempt exactly once per update_uuid. Success stores
  // the round and its metrics with the job transition in one transaction;
  // failure requeues while attempts remain (and retryable) or fails the job.
  // Refused like RecordProgress (nothing stored); a resend of an applied
  // update answers duplicate.
  virtual absl::StatusOr<ResultAck> RecordResult(const AttemptResult& result) = 0;
  // Takes back leases that expired before now_ms: requeue while attempts
  // remain and the job has not taken down max_lost agents, else fail.
  virtual absl::StatusOr<std::vector<ExpiredLease>> ExpireLeases(int64_t now_ms,
                                                                 int32_t max_lost) = 0;

  // Jobs, agents and devices by state (for the /metrics gauges).
  virtual absl::StatusOr<StateCounts> CountByState() = 0;

  // Registers fn to be called when another server replica changed jobs:
  // kClaimable when it made jobs claimable (submitted, requeued, or a device
  // freed), so long-polling LeaseJob callers here wake at once; kUpdated
  // when it changed a collection in a way that frees nothing (progress,
  // cancellation), so WatchCollection streams here wake. Called from a
  // backend thread; fn must be cheap and thread-safe. nullptr unregisters (no
  // call after return). A no-op where one process owns the database (SQLite).
  virtual void SetChangeCallback(std::function<void(StoreChange)> fn) = 0;

  // Rounds.
  virtual absl::StatusOr<v1::Round> GetRound(const std::string& team, int64_t round_id) = 0;
  virtual absl::StatusOr<RoundPage> ListRounds(const RoundFilter& filter) = 0;
  // Baselines, per team: pinning replaces the label's previous pin.
  // NOT_FOUND when the round or collection is absent or another team's.
  virtual absl::StatusOr<Baseline> PinBaseline(const std::string& team, const Baseline& pin) = 0;
  // NOT_FOUND when nothing is pinned for the label.
  virtual absl::StatusOr<Baseline> GetBaseline(const std::string& team,
                                               const std::string& label) = 0;

  // Regressions (core/triage_rules.h decides; docs/comparisons.md "Triage").
  // Applies what one listing saw, atomically and in order: a regressed key
  // opens a DETECTED regression (none current) or touches the current one
  // (last seen, and its round when new); a key no longer regressed closes the
  // current one (DecideObservation). Returns the current regression of each
  // observation after it (id 0 when there is none).
  virtual absl::StatusOr<std::vector<RegressionRecord>> ObserveRegressions(
      const std::vector<RegressionObservation>& seen, int64_t now_ms) = 0;
  // A compare-and-set of t.team's regression t.id from t.expected to t.next,
  // recorded as a transition by t.team: NOT_FOUND when unknown or another
  // team's; FAILED_PRECONDITION naming the current state when it is not
  // t.expected or the move is not legal (CheckTriage); nothing is written
  // then.
  virtual absl::StatusOr<RegressionRecord> TriageRegression(const RegressionTriage& t) = 0;
  // The regression with its transitions; NOT_FOUND when unknown or another
  // team's.
  virtual absl::StatusOr<RegressionDetail> GetRegression(const std::string& team, int64_t id) = 0;
  // Regressions by (rule, state, confirmed) of team (empty: every team).
  virtual absl::StatusOr<std::vector<RegressionCount>> CountRegressions(
      const std::string& team) = 0;

  // Confirmations (migration 0015; compare/confirmations.h drives them).
  // Inserts c (id assigned, version 1, created at now_ms) unless c.team
  // already has a confirmation of the same pair of rounds that is not
  // UNCONFIRMED: then returns that one and false, inserting nothing.
  virtual absl::StatusOr<std::pair<ConfirmationRecord, bool>> InsertConfirmation(
      const ConfirmationRecord& c, int64_t now_ms) = 0;
  // NOT_FOUND when unknown or another team's (team empty: any team's).
  virtual absl::StatusOr<ConfirmationRecord> GetConfirmation(const std::string& team,
                                                             int64_t id) = 0;
  // The PENDING confirmations of every team, oldest first, at most limit.
  virtual absl::StatusOr<std::vector<ConfirmationRecord>> ListPendingConfirmations(
      int32_t limit) = 0;
  // A compare-and-set: stores c.confirmation (its state too) over
  // confirmation c.confirmation.id() of c.team if its version is still
  // c.version, and returns it with the next version. FAILED_PRECONDITION
  // when another writer moved it since (nothing written), NOT_FOUND when
  // unknown or another team's.
  virtual absl::StatusOr<ConfirmationRecord> UpdateConfirmation(const ConfirmationRecord& c,
                                                                int64_t now_ms) = 0;
  // Bisections (migration 0019; compare/bisections.h drives them).
  // Inserts b (id assigned, version 1, created at now_ms) unless b.team
  // already has one with b.idempotency_key: then returns that one and false,
  // inserting nothing.
  virtual absl::StatusOr<std::pair<BisectionRecord, bool>> InsertBisection(const BisectionRecord& b,
                                                                           int64_t now_ms) = 0;
  // NOT_FOUND when unknown or another team's (team empty: any team's).
  virtual absl::StatusOr<BisectionRecord> GetBisection(const std::string& team, int64_t id) = 0;
  // team's bisections, newest first, at most limit; only those not in a
  // terminal state unless include_finished (team empty: every team's).
  virtual absl::StatusOr<std::vector<BisectionRecord>> ListBisections(const std::string& team,
                                                                      bool include_finished,
                                                                      int32_t limit) = 0;
  // A compare-and-set, as UpdateConfirmation: stores b.bisection over
  // bisection b.bisection.id() of b.team if its version is still b.version.
  virtual absl::StatusOr<BisectionRecord> UpdateBisection(const BisectionRecord& b,
                                                          int64_t now_ms) = 0;
  // Device quarantine (migration 0017; core/device_health.h drives it).
  // Inserts q as the current quarantine of (q.host, q.device_id) unless the
  // device already has one: then returns that one and false, writing
  // nothing. q.id, released_* are ignored.
  virtual absl::StatusOr<std::pair<QuarantineRecord, bool>> QuarantineDevice(
      const QuarantineRecord& q) = 0;
  // Ends the current quarantine of (host, device_id) at now_ms, by `actor`
  // with `note`, and returns it: FAILED_PRECONDITION when the device is not
  // quarantined (nothing written).
  virtual absl::StatusOr<QuarantineRecord> ReleaseDevice(const std::string& host, int32_t device_id,
                                                         const std::string& actor,
                                                         const std::string& note,
                                                         int64_t now_ms) = 0;
  // The current quarantines, and with include_released the released ones
  // too; newest first, at most limit.
  virtual absl::StatusOr<std::vector<QuarantineRecord>> ListQuarantines(bool include_released,
                                                                        int32_t limit) = 0;
  // Canaries (migration 0020; compare/canaries.h drives them). Inserts c
  // (id assigned, version 1; c.created_ms kept) unless (c.host,
  // c.device_id, c.slot) already has one: then returns that one and false,
  // inserting nothing.
  virtual absl::StatusOr<std::pair<CanaryRecord, bool>> InsertCanary(const CanaryRecord& c) = 0;
  // A compare-and-set: stores every field of c over canary c.id if its
  // version is still c.version, and returns it with the next version.
  // FAILED_PRECONDITION when another writer moved it since (nothing
  // written), NOT_FOUND when unknown.
  virtual absl::StatusOr<CanaryRecord> UpdateCanary(const CanaryRecord& c) = 0;
  // The canaries f selects, newest first, at most f.limit (1..1000, else
  // INVALID_ARGUMENT naming limit).
  virtual absl::StatusOr<std::vector<CanaryRecord>> ListCanaries(const CanaryFilter& f) = 0;
  // The canary quarantines (current and released) of (host, device_id),
  // newest first, at most 100: what device_suspects.h needs of a round's device.
  virtual absl::StatusOr<std::vector<QuarantineRecord>> CanaryQuarantinesOf(const std::string& host,
                                                                            int32_t device_id) = 0;
  // Calibrations and the noise they measured (migration 0016;
  // server/compare/calibrations.h). Inserts a RUNNING calibration of c.team
  // (c.id, state, finished_ms and spreads are ignored) and returns it with
  // its id.
  virtual absl::StatusOr<CalibrationRecord> InsertCalibration(const CalibrationRecord& c) = 0;
  // The calibration with the spreads it measured; NOT_FOUND when unknown or
  // another team's.
  virtual absl::StatusOr<CalibrationRecord> GetCalibration(const std::string& team, int64_t id) = 0;
  // RUNNING calibrations of every team, oldest first, at most limit (without
  // spreads).
  virtual absl::StatusOr<std::vector<CalibrationRecord>> ListRunningCalibrations(int32_t limit) = 0;
  // A compare-and-set from RUNNING to o.state (SUCCEEDED or FAILED, else
  // INVALID_ARGUMENT) storing o.collection_ids and o.spreads in the same
  // transaction: NOT_FOUND when unknown or another team's,
  // FAILED_PRECONDITION when it is no longer RUNNING (nothing written then).
  virtual absl::Status FinishCalibration(const CalibrationOutcome& o) = 0;
  // The newest spread (highest id) per (soc, mode, operator, case, family)
  // of team, ordered by operator, case, soc, mode, family; only
  // operator_name's when it is set; at most limit rows.
  virtual absl::StatusOr<std::vector<NoiseRecord>> ListNoise(const std::string& team,
                                                             const std::string& operator_name,
                                                             int32_t limit) = 0;
  // The same for the cases named by "operator/case" keys (CaseKey), in one
  // read: what a comparison's thresholds come from.
  virtual absl::StatusOr<std::vector<NoiseRecord>> NoiseOfCases(
      const std::string& team, const std::vector<std::string>& case_keys) = 0;
};

}  // namespace npuperf::server
