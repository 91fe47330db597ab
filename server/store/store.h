#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "npuperf/v1/agent_service.pb.h"
#include "npuperf/v1/collection.pb.h"
#include "npuperf/v1/comparison.pb.h"
#include "npuperf/v1/query_service.pb.h"

namespace npuperf::server {

// Domain records the Store reads and writes. Times are Unix milliseconds.

// A job to create inside a new collection.
struct NewJob {
  std::string operator_name;
  std::string case_id;
  std::string op_name;
};

// A collection to create with its jobs, in one transaction.
struct NewCollection {
  std::string id;
  std::string team;
  v1::CollectionSpec spec;  // defaults filled in
  std::string idempotency_key;  // empty: none
  std::vector<NewJob> jobs;
  int64_t now_ms = 0;
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
  int32_t collection_active = 0;  // jobs of the collection leased or running
  int32_t team_active = 0;        // jobs of the team leased or running
};

// What another replica changed (Store::SetChangeCallback).
enum class StoreChange {
  kClaimable,  // jobs became claimable; collections changed too
  kUpdated,    // collections changed (progress, cancellation); nothing claimable
};

// A free device offered by an agent.
struct OfferedDevice {
  int32_t device_id = 0;
  std::string soc;
};

// Picks (candidate index, device index) among the candidates, or nullopt.
// Candidates are in (priority desc, job_id asc) order. Pure policy: see
// scheduler.h ChooseClaim.
using ClaimChooser = std::function<std::optional<std::pair<size_t, size_t>>(
    const std::vector<ClaimCandidate>&, const std::vector<OfferedDevice>&,
    const std::map<std::string, std::string>& agent_labels)>;

struct ClaimRequest {
  std::string agent_id;
  std::string host;
  std::vector<OfferedDevice> devices;
  std::map<std::string, std::string> agent_labels;
  int64_t now_ms = 0;
  int64_t lease_ttl_ms = 0;
};

// The agent's view of a running attempt.
struct AttemptRef {
  int64_t job_id = 0;
  int32_t attempt = 0;
  int64_t fencing_token = 0;
};

struct LeaseRenewal {
  std::vector<AttemptRef> dropped;
  std::vector<AttemptRef> cancelled;
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
};

// A round or collection pinned as the baseline of a label.
struct Baseline {
  std::string label;  // key=value
  int64_t round_id = 0;
  std::string collection_id;
  int64_t pinned_ms = 0;
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

struct CollectionFilter {
  std::string team;
  std::vector<v1::CollectionState> states;
  std::map<std::string, std::string> labels;
  int32_t limit = 50;
  int64_t before_created_ms = 0;  // pagination cursor (0: from newest)
  std::string before_id;
};

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

  // Bundles, content-addressed. Returns true when already present.
  virtual absl::StatusOr<bool> PutBundle(const std::string& team, const std::string& name,
                                         const std::string& sha256, const std::string& content,
                                         int64_t now_ms) = 0;
  virtual absl::StatusOr<std::string> GetBundle(const std::string& sha256) = 0;
  virtual absl::StatusOr<bool> HasBundle(const std::string& sha256) = 0;

  // Creates a collection and its jobs, or returns the collection created
  // earlier with the same (team, idempotency key) and created=false.
  virtual absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollection(
      const NewCollection& c) = 0;
  // A collection with its jobs. NOT_FOUND when absent or another team's
  // (team empty: any team).
  virtual absl::StatusOr<v1::Collection> GetCollection(const std::string& team,
                                                       const std::string& id) = 0;
  virtual absl::StatusOr<std::vector<v1::Collection>> ListCollections(
      const CollectionFilter& filter) = 0;
  // Cancels queued jobs at once; returns the running attempts to stop.
  virtual absl::StatusOr<std::vector<CancelOrder>> CancelCollection(
      const std::string& team, const std::string& id, const std::string& reason,
      int64_t now_ms) = 0;

  // Agents. Registers (or re-registers) an agent instance and its devices.
  virtual absl::Status UpsertAgent(const std::string& agent_id,
                                   const v1::RegisterAgentRequest& info, int64_t now_ms) = 0;
  virtual absl::Status UpdateDevices(const std::string& agent_id,
                                     const std::vector<v1::DeviceInfo>& devices,
                                     int64_t now_ms) = 0;
  virtual absl::StatusOr<std::vector<v1::AgentStatus>> ListAgents() = 0;
  // What the agent sent at registration. NOT_FOUND when unknown.
  virtual absl::StatusOr<v1::RegisterAgentRequest> GetAgent(const std::string& agent_id) = 0;

  // Claims one queued job for one of the offered devices, atomically:
  // the job becomes LEASED with attempt+1 and a new fencing token. A device
  // already holding a live lease is never offered to the chooser.
  virtual absl::StatusOr<std::optional<v1::JobAssignment>> ClaimJob(
      const ClaimRequest& req, const ClaimChooser& choose) = 0;
  // Extends the leases of the listed attempts held by agent_id; returns the
  // ones the server no longer honours (to kill) and the ones whose
  // collection was cancelled (to stop and report as cancelled).
  virtual absl::StatusOr<LeaseRenewal> RenewLeases(
      const std::string& agent_id, const std::vector<AttemptRef>& running, int64_t now_ms,
      int64_t lease_ttl_ms) = 0;
  // Reattaches attempts to a re-registered agent instance when their lease
  // is live and the token matches; returns the ones adopted.
  virtual absl::StatusOr<std::vector<AttemptRef>> AdoptAttempts(
      const std::string& agent_id, const std::vector<AttemptRef>& running, int64_t now_ms,
      int64_t lease_ttl_ms) = 0;
  // Records progress (LEASED -> RUNNING) and renews the lease.
  // FAILED_PRECONDITION for a stale token. Returns true when the job's
  // collection was cancelled.
  virtual absl::StatusOr<bool> RecordProgress(const std::string& agent_id, const AttemptRef& ref,
                                              const v1::JobProgress& progress, int64_t now_ms,
                                              int64_t lease_ttl_ms) = 0;
  // Applies a finished attempt exactly once per update_uuid. Success stores
  // the round and its metrics with the job transition in one transaction;
  // failure requeues while attempts remain (and retryable) or fails the job.
  // FAILED_PRECONDITION for a stale token (nothing stored).
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
};

}  // namespace npuperf::server
