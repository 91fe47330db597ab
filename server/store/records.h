#pragma once
// The domain records the Store reads and writes (server/store/store.h is the
// interface): plain values, and the event log's kinds. Times are Unix
// milliseconds.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::server {

// Stores keep a bundle's content in chunks of this size (the last one
// shorter), so that no bundle is read or written whole.
inline constexpr int64_t kStoredChunkBytes = 1 << 20;

// A bundle a team uploaded, verified by the caller (Store::StoreBundle).
struct NewBundle {
  std::string team;
  std::string name;    // the operator directory's name (informational)
  std::string sha256;  // of the content
  int64_t size_bytes = 0;
  int64_t quota_bytes = 0;  // the team's bundle quota; 0: none
  int64_t now_ms = 0;
  // Up to `max` bytes of the content from `offset` (fewer only at its end).
  // A backend may read the content again from offset 0 (a transaction
  // rerun).
  std::function<absl::StatusOr<std::string>(int64_t offset, int64_t max)> read;
};

// A job and its operator's bundle, as a download checks them
// (Store::GetJobBundle).
struct JobBundle {
  v1::JobState state = v1::JOB_STATE_UNSPECIFIED;
  std::string agent_id;       // the lease holder (empty when never leased)
  std::string team;           // of the job's collection
  std::string bundle_sha256;  // of the job's operator, from the collection's spec
  bool stored = false;        // the team owns that bundle and its content is stored
  int64_t size_bytes = 0;
  int32_t chunks = 0;
  // The job's collection spec (its mode and labels, e.g. whose timeline it is).
  v1::CollectionSpec spec;
};

// What one CollectBundles pass removed.
struct BundleCollection {
  int64_t owners_dropped = 0;   // (team, bundle) ownerships
  int64_t bundles_deleted = 0;  // contents nobody owned any more
  int64_t bytes_freed = 0;
};

// A job to create inside a new collection.
struct NewJob {
  std::string operator_name;
  std::string case_id;
  std::string op_name;
  // What its device time depends on (core/placement.h DurationKey); empty:
  // not keyed, so it neither gives nor gets history.
  std::string duration_key = {};
};

// A collection to create with its jobs, in one transaction.
struct NewCollection {
  std::string id;
  std::string team;
  v1::CollectionSpec spec;      // defaults filled in
  std::string idempotency_key;  // empty: none
  std::vector<NewJob> jobs;
  int64_t now_ms = 0;
  // Queued jobs the team may have once these are added; 0: no limit.
  int64_t max_team_queued = 0;
  // Jobs in InsertCollection's answer: the first ones by id, at most this
  // many (negative: all). SubmitCollection answers with one page, so reading
  // back all 100,000 jobs of a big submission was wasted.
  int32_t answer_jobs = -1;
};

// Queued jobs of one collection (Store::CountQueuedByCollection).
struct QueuedCount {
  std::string collection_id;
  int64_t queued = 0;
  // queued_at of the collection's oldest queued job (its submission; a
  // requeued job keeps it), milliseconds since the epoch.
  int64_t oldest_queued_ms = 0;
};

// A collection's queued jobs offered to a claim, with what the chooser needs
// to match them.
struct ClaimCandidate {
  // Orders candidates, oldest first: the collection's oldest queued job on
  // SQLite, its first job on PostgreSQL. The claim leases the oldest queued
  // job of the chosen collection either way.
  int64_t job_id = 0;
  std::string collection_id;
  std::string team;
  int32_t priority = 0;
  const v1::CollectionSpec* spec = nullptr;  // valid during the chooser call
  int32_t collection_active = 0;             // jobs of the collection leased or running
  int32_t team_active = 0;                   // jobs of the team leased or running
};

// A free device offered by an agent.
struct OfferedDevice {
  int32_t device_id = 0;
  std::string soc;
  std::string host = {};  // the offering agent's registered host (empty: any)
  // Quarantined (core/device_health.h): only a canary may be placed here,
  // so that the device can earn its release (core/assignment.h).
  bool canary_only = false;
};

struct ClaimRequest {
  std::string agent_id;
  std::string host;
  std::vector<OfferedDevice> devices;
  std::map<std::string, std::string> agent_labels;
  int64_t now_ms = 0;
  int64_t lease_ttl_ms = 0;
  // The new lease's secret (random, from the scheduler; never empty). The
  // store keeps only its sha256 and returns it once, in the assignment.
  std::string lease_secret;
  // Store::ClaimJobs: the secrets of further leases in the same claim, one
  // per job beyond the first (the k-th further lease takes the k-th).
  std::vector<std::string> more_lease_secrets;
};

// The agent's view of a running attempt.
struct AttemptRef {
  int64_t job_id = 0;
  int32_t attempt = 0;
  int64_t fencing_token = 0;
  // The secret the agent presents (JobAssignment.lease_secret); empty when
  // it has none (accepted only for a lease granted before migration 0004).
  std::string lease_secret;
};

// An artifact a round lists (Store::ListArtifacts): the metadata of a file
// in the artifact directory, addressed by sha256.
struct ArtifactRecord {
  int64_t round_id = 0;
  std::string team;  // the round's
  std::string name;
  std::string sha256;  // of the stored (compressed) bytes
  int64_t size_bytes = 0;
  int64_t created_ms = 0;
};

// An artifact an agent attaches to the round of one of its attempts
// (Store::CheckArtifact, Store::AttachArtifact).
struct NewArtifact {
  std::string agent_id;  // the caller (already authorized for it)
  AttemptRef ref;        // the succeeded attempt as the agent held its lease
  std::string name;
  std::string sha256;
  int64_t size_bytes = 0;
  int64_t quota_bytes = 0;  // the team's artifact quota; 0: none
  // Per-team quotas that replace quota_bytes for those teams
  // (--artifact-retention-team; 0: none). job_rules.h ArtifactQuotaOf.
  std::map<std::string, int64_t> team_quota_bytes;
  int64_t now_ms = 0;
};

// Where an artifact goes: the attempt's round and team, and whether that
// round already lists these bytes.
struct ArtifactTarget {
  int64_t round_id = 0;
  std::string team;
  bool already_present = false;
  int64_t created_ms = 0;  // when already_present: when it was stored
};

// Which teams one SweepArtifacts pass covers: only `team` when it is set,
// else every team but those in `except` (the teams with a retention of
// their own).
struct ArtifactSweepScope {
  std::string team;
  std::vector<std::string> except;
};

// What one SweepArtifacts pass removed.
struct ArtifactSweep {
  std::vector<ArtifactRecord> deleted;  // the rows
  // Digests no row references any more: their files may be deleted.
  std::vector<std::string> unreferenced;
};

// Why an agent's call about a lease, or about an agent, is refused: the
// reason label of npuperf_server_agent_calls_refused_total and the
// google.rpc.ErrorInfo reason of the status (core/job_rules.h names them).
enum class AgentRefusal {
  kWrongHost,           // a registration for a host other than the token's
  kForeignAgent,        // the agent id, or the lease, belongs to another agent
  kUnknownAgent,        // the agent id is not registered (or no longer online)
  kUnregisteredDevice,  // a device the agent did not register
  kUnknownJob,          // no such job
  kStaleLease,          // not the job's current lease (token, attempt, or the job ended)
  kBadSecret,           // the lease secret is missing or wrong
  kNoClientCert,        // --require-agent-cert: the call presented no client certificate
  kCertMismatch,        // the client certificate names another agent (core/agent_certificate.h)
};

// An attempt a renewal or an adoption did not take, and why.
struct RefusedAttempt {
  AttemptRef ref;
  AgentRefusal reason = AgentRefusal::kStaleLease;
};

// A progress report of one attempt (Store::RecordProgressMany: the reports
// a heartbeat carries).
struct ProgressReport {
  AttemptRef ref;
  v1::JobProgress progress;
};

// What RenewLeases, AdoptAttempts and RecordProgressMany did with the listed
// attempts.
struct LeaseRenewal {
  std::vector<AttemptRef> renewed;  // renewed (adopted), in the order given
  std::vector<RefusedAttempt> dropped;
  std::vector<AttemptRef> cancelled;  // renewed, but the collection was cancelled
};

// An agent as stored (Store::ListAgents): what it registered and its devices'
// states with their running jobs, plus the team of each such job, so that
// core/ can decide what a caller may see.
struct AgentRecord {
  v1::AgentStatus status;
  // job_teams[i]: the team of status.devices(i)'s running job; "" when idle.
  std::vector<std::string> job_teams;
};

// A lease the server must take back (expired, or its agent is gone).
struct ExpiredLease {
  int64_t job_id = 0;
  std::string collection_id;
  std::string agent_id;
  bool requeued = false;  // false: failed for good
};

// A running attempt to stop (cancellation), to push to its agent.
struct CancelOrder {
  std::string agent_id;
  int64_t job_id = 0;
  int64_t fencing_token = 0;
  std::string reason;
};

// A finished attempt as reported by an agent.
struct AttemptResult {
  std::string agent_id;
  AttemptRef ref;
  std::string update_uuid;
  v1::AttemptOutcome outcome = v1::ATTEMPT_OUTCOME_UNSPECIFIED;
  std::string failure_reason;
  bool retryable = false;
  v1::Evidence evidence;  // when succeeded
  // The candidate table of a succeeded discovery job (then no evidence).
  std::optional<v1::DiscoveryResult> discovery;
  std::vector<std::pair<std::string, double>> metrics;  // flattened figures
  int32_t max_lost = 3;  // interrupted attempts allowed, like lost leases
  int64_t now_ms = 0;
};

struct ResultAck {
  int64_t round_id = 0;  // 0 for failed attempts
  bool duplicate = false;
  std::string collection_id;
};

struct RoundFilter {
  std::string team;
  std::string operator_name;
  std::string case_id;
  std::string collection_id;
  std::map<std::string, std::string> labels;
  int64_t since_ms = 0;
  int64_t until_ms = 0;  // 0: no bound
  std::string metric;    // when set, also return the series
  int32_t limit = 100;
  int64_t after_id = 0;  // pagination cursor
  // Newest first (then after_id is an upper bound: ids below it).
  bool newest_first = false;
  // Also rounds of collections the server submitted for itself (a label key
  // starting "npuperf.": confirmation and calibration reruns). They are left
  // out of series, comparisons by case and regression listings unless asked
  // for, or unless collection_id is set.
  bool include_server_rounds = false;
};

// A round or collection pinned as the baseline of a label.
struct Baseline {
  std::string label;  // key=value
  int64_t round_id = 0;
  std::string collection_id;
  int64_t pinned_ms = 0;
};

// Regressions (migration 0013; core/triage_rules.h has the rules, and
// docs/comparisons.md "Triage" the life-cycle). The identity of a regression.
struct RegressionKey {
  std::string team;
  std::string operator_name;
  std::string case_id;
  std::string baseline_label;  // the pinned baseline's key=value
  std::string rule;            // core/triage_rules.h kRegressionRules
};

// A regression as stored. It is current while ended_ms == 0: at most one
// current regression per key (a unique index in both backends).
struct RegressionRecord {
  int64_t id = 0;  // 0: none (ObserveRegressions of a STABLE case without one)
  RegressionKey key;
  v1::RegressionState state = v1::REGRESSION_STATE_UNSPECIFIED;
  // A person moved it to ACKNOWLEDGED, FIXED or WONT_FIX (precision).
  bool confirmed = false;
  int64_t detected_ms = 0;
  int64_t last_seen_ms = 0;
  int64_t first_round_id = 0;
  int64_t last_round_id = 0;
  int32_t seen_rounds = 0;
  int64_t ended_ms = 0;
};

// What one listing saw of a key: regressed, or not any more (STABLE or
// IMPROVED), in candidate round round_id.
struct RegressionObservation {
  RegressionKey key;
  bool regressed = false;
  int64_t round_id = 0;
};

// One recorded state change.
struct RegressionTransitionRecord {
  v1::RegressionState from = v1::REGRESSION_STATE_UNSPECIFIED;
  v1::RegressionState to = v1::REGRESSION_STATE_UNSPECIFIED;
  std::string actor;  // the team, or kTriageSystemActor
  std::string note;
  int64_t at_ms = 0;
};

// A person's triage of regression id of team (Store::TriageRegression).
struct RegressionTriage {
  std::string team;
  int64_t id = 0;
  v1::RegressionState expected = v1::REGRESSION_STATE_UNSPECIFIED;
  v1::RegressionState next = v1::REGRESSION_STATE_UNSPECIFIED;
  std::string note;
  int64_t now_ms = 0;
};

struct RegressionDetail {
  RegressionRecord regression;
  std::vector<RegressionTransitionRecord> transitions;  // oldest first
};

// A device's quarantine (migration 0017; core/health_rules.h decides when;
// docs/operations.md "Device health"). Current while released_ms == 0: at
// most one current quarantine per (host, device_id); released ones stay as
// the device's audited history.
struct QuarantineRecord {
  int64_t id = 0;
  std::string host;
  int32_t device_id = 0;
  std::string soc;
  // Why, as people read it ("npu-smi: Health Status Critical (error code
  // 80CB8002)", "canary 15.2 % slower than the SoC's other devices ...").
  std::string reason;
  // Who decided: "npu_smi", "canary" (core/health_rules.h kQuarantineSources).
  std::string source;
  int64_t since_ms = 0;
  int64_t released_ms = 0;  // 0: still quarantined
  // The team that released it, or kTriageSystemActor-like "npuperf" for an
  // automatic release; and its note.
  std::string released_by;
  std::string release_note;
  // A canary quarantine only (migration 0020): the rounds the device
  // produced from this time on (its last passing canary's finish; 0: it
  // never passed one) until released_ms are suspect, and comparisons that
  // rest on them say so (compare/device_suspects.h).
  int64_t suspect_since_ms = 0;
};

// One canary of one device (migration 0020; compare/canaries.h drives it,
// core/canary_rules.h judges it): the built-in reference job run on an idle
// device, and how it compared with the same SoC's other devices and the
// device's own history. At most one per (host, device_id, slot): replicas
// scheduling the same device in the same interval insert it once.
struct CanaryRecord {
  int64_t id = 0;
  std::string host;
  int32_t device_id = 0;
  std::string soc;
  // created_ms / canary interval: the schedule's tick it belongs to.
  int64_t slot = 0;
  // "pending" (queued or running), then "pass", "slow", "inconclusive"
  // or "failed" (it did not run to a round; counted as slow).
  std::string state = "pending";
  std::string collection_id;  // its one-job collection ("" until submitted)
  int64_t round_id = 0;       // its round (0 unless pass/slow/inconclusive)
  double kernel_us = 0;       // the canary kernel's median task time
  std::string reference;      // "peers" or "history" ("" when inconclusive or failed)
  double reference_us = 0;
  double excess_pct = 0;
  double threshold_pct = 0;
  std::string reason;  // the judgement in words, or why it failed
  int64_t created_ms = 0;
  int64_t finished_ms = 0;  // 0 while pending
  int64_t version = 0;      // compare-and-set (UpdateCanary)
};

// Which canaries Store::ListCanaries returns, newest (highest id) first.
struct CanaryFilter {
  std::string host;            // "" any
  int32_t device_id = -1;      // -1 any
  std::string soc;             // "" any
  bool pending_only = false;   // state "pending" only
  bool finished_only = false;  // every state but "pending"
  int64_t before_id = 0;       // ids below this only (0: from the newest)
  int32_t limit = 100;         // 1..1000
};

// How many regressions have (rule, state, confirmed) (Store::CountRegressions).
struct RegressionCount {
  std::string rule;
  v1::RegressionState state = v1::REGRESSION_STATE_UNSPECIFIED;
  bool confirmed = false;
  int64_t count = 0;
};

struct RoundPage {
  std::vector<v1::Round> rounds;
  std::vector<v1::MetricPoint> series;
  int64_t last_id = 0;  // 0 when no further page
};

// Counts behind the state gauges of /metrics.
struct StateCounts {
  std::map<v1::JobState, int64_t> jobs;
  std::map<std::string, int64_t> agents;   // "online", "lost"
  std::map<std::string, int64_t> devices;  // DeviceStatusName(): "idle", "busy", ..., "offline"
};

// What an entry of the event log (the events table) records. Both backends
// write these; the SQL text of a kind is EventKindName's.
enum class EventKind {
  kCollectionSubmitted,
  kCollectionCancelled,
  kJobLeased,
  kJobResult,
  kLeaseExpired,
};

// The kind as stored in events.kind: "collection_submitted", ...
constexpr const char* EventKindName(EventKind kind) {
  switch (kind) {
    case EventKind::kCollectionSubmitted: return "collection_submitted";
    case EventKind::kCollectionCancelled: return "collection_cancelled";
    case EventKind::kJobLeased: return "job_leased";
    case EventKind::kJobResult: return "job_result";
    case EventKind::kLeaseExpired: return "lease_expired";
  }
  return "unknown";
}

// Measured noise (migration 0016; server/compare/calibrations.h runs it,
// server/core/noise_rules.h decides). One measured spread of one case and
// metric family: "duration" (percent) or "ratio" (percentage points).
struct NoiseRecord {
  std::string soc;
  std::string mode;  // fingerprint mode: "standard", "quick"
  std::string operator_name;
  std::string case_id;
  std::string family;
  double spread = 0;
  int32_t rounds = 0;
  double threshold = 0;
  double far = 0;  // expected false-alarm rate at threshold (finite)
  int64_t calibration_id = 0;
  int64_t measured_ms = 0;
};

// A calibration as stored: A/A reruns of one of team's collections.
struct CalibrationRecord {
  int64_t id = 0;
  std::string team;
  std::string source_collection_id;
  int32_t runs = 0;
  v1::CalibrationState state = v1::CALIBRATION_STATE_UNSPECIFIED;
  std::string reason;
  // The A/A collections; stored when it finishes (while RUNNING they are
  // found by their label, server/compare/calibrations.h).
  std::vector<std::string> collection_ids;
  int64_t created_ms = 0;
  int64_t finished_ms = 0;           // 0 while RUNNING
  std::vector<NoiseRecord> spreads;  // GetCalibration: what it measured
};

// The end of a RUNNING calibration (Store::FinishCalibration).
struct CalibrationOutcome {
  std::string team;
  int64_t id = 0;
  v1::CalibrationState state = v1::CALIBRATION_STATE_UNSPECIFIED;  // SUCCEEDED or FAILED
  std::string reason;
  std::vector<std::string> collection_ids;
  std::vector<NoiseRecord> spreads;  // calibration_id and measured_ms are set by the store
  int64_t now_ms = 0;
};

struct CollectionFilter {
  std::string team;
  std::vector<v1::CollectionState> states;
  std::map<std::string, std::string> labels;
  int32_t limit = 50;
  int64_t before_created_ms = 0;  // pagination cursor (0: from newest)
  std::string before_id;
};

// A confirmation as stored (migration 0015; server/compare/confirmations.h).
struct ConfirmationRecord {
  std::string team;
  // The options its verdicts use (the original comparison's).
  v1::CompareOptions options;
  // Its id, rounds and state are the stored columns; the rest is the body.
  v1::Confirmation confirmation;
  // Updates so far (1 after the insert): the compare-and-set token.
  int64_t version = 0;
};

// A bisection as stored (migration 0019; server/compare/bisections.h).
struct BisectionRecord {
  std::string team;
  // The key it was started with (unique per team).
  std::string idempotency_key;
  // Its id and state are the stored columns; the rest is the body.
  v1::Bisection bisection;
  // Updates so far (1 after the insert): the compare-and-set token.
  int64_t version = 0;
};

}  // namespace npuperf::server
