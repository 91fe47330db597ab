#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/core/job_rules.h"
#include "server/store/store.h"

namespace SQLite {
class Database;
}

namespace npuperf::server {

// The embedded Store backend (SQLiteCpp): WAL journal, busy timeout, claims
// inside BEGIN IMMEDIATE transactions. One connection behind one mutex:
// SQLite serializes writers anyway, and one connection keeps every method
// atomic without cross-connection retries. Thread-safe.
//
// The methods live by domain: collections.cc (tokens, collections, state
// counts), agents.cc (agents and devices), bundles.cc (bundles, quota, collector), claims.cc
// (ClaimJobs, leases, expiry), results.cc (progress, results), rounds.cc (rounds, baselines),
// regressions.cc (regressions and their triage), calibrations.cc (calibrations and measured
// noise), quarantines.cc and canaries.cc (device health); sqlite_store.cc opens and migrates the
// database and holds the steps several methods share.
class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) the database at path (":memory:" for tests)
  // and applies pending migrations. A new file is created 0600 (its -wal
  // and -shm files follow) in a directory created 0700 when missing; an
  // existing file and its -wal/-shm are narrowed to 0600.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;

  absl::StatusOr<std::pair<std::string, std::string>> LookupToken(const std::string& hash) override;
  absl::Status InsertToken(const std::string& hash, const std::string& kind,
                           const std::string& name, int64_t now_ms) override;

  absl::StatusOr<int64_t> CountTokens() override;

  absl::Status InsertUiSession(const std::string& id_sha256, const std::string& team,
                               int64_t created_ms, int64_t expires_ms) override;
  absl::StatusOr<std::string> LookupUiSession(const std::string& id_sha256,
                                              int64_t now_ms) override;
  absl::Status DeleteUiSession(const std::string& id_sha256) override;
  absl::StatusOr<int64_t> DeleteExpiredUiSessions(int64_t now_ms) override;

  absl::StatusOr<bool> StoreBundle(const NewBundle& b) override;
  absl::StatusOr<bool> UseBundle(const std::string& team, const std::string& sha256,
                                 int64_t now_ms) override;
  absl::StatusOr<int64_t> BundleBytes(const std::string& team) override;
  absl::StatusOr<JobBundle> GetJobBundle(int64_t job_id) override;
  absl::StatusOr<std::string> GetBundleChunk(const std::string& sha256, int32_t index) override;
  absl::StatusOr<BundleCollection> CollectBundles(int64_t unused_before_ms) override;

  absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollection(const NewCollection& c) override;
  absl::StatusOr<std::map<std::string, std::vector<int64_t>>> RecentRunTimes(
      const std::vector<std::string>& keys, int per_key) override;
  absl::StatusOr<v1::Collection> GetCollection(const std::string& team,
                                               const std::string& id) override;
  absl::StatusOr<v1::Collection> GetCollectionPage(const std::string& team, const std::string& id,
                                                   int64_t after_job_id, int32_t max_jobs) override;
  absl::StatusOr<v1::Collection> GetCollectionPageWithoutSpec(const std::string& team,
                                                              const std::string& id,
                                                              int64_t after_job_id,
                                                              int32_t max_jobs) override;
  absl::StatusOr<std::vector<QueuedCount>> CountQueuedByCollection(int32_t limit) override;
  absl::StatusOr<std::vector<v1::Collection>> ListCollections(
      const CollectionFilter& filter) override;
  absl::StatusOr<std::vector<CancelOrder>> CancelCollection(const std::string& team,
                                                            const std::string& id,
                                                            const std::string& reason,
                                                            int64_t now_ms) override;

  absl::Status UpsertAgent(const std::string& agent_id, const v1::RegisterAgentRequest& info,
                           int64_t now_ms) override;
  absl::Status UpdateDevices(const std::string& agent_id,
                             const std::vector<v1::DeviceInfo>& devices, int64_t now_ms) override;
  absl::StatusOr<std::vector<AgentRecord>> ListAgents() override;
  absl::StatusOr<v1::RegisterAgentRequest> GetAgent(const std::string& agent_id) override;
  absl::StatusOr<std::vector<std::string>> PruneAgents(int64_t seen_before_ms,
                                                       int32_t limit) override;

  absl::StatusOr<std::vector<v1::JobAssignment>> ClaimJobs(const ClaimRequest& req,
                                                           const ClaimChooser& choose) override;
  absl::StatusOr<LeaseRenewal> RenewLeases(const std::string& agent_id,
                                           const std::vector<AttemptRef>& running, int64_t now_ms,
                                           int64_t lease_ttl_ms) override;
  absl::StatusOr<LeaseRenewal> AdoptAttempts(const std::string& agent_id,
                                             const std::vector<AttemptRef>& running, int64_t now_ms,
                                             int64_t lease_ttl_ms) override;
  absl::StatusOr<bool> RecordProgress(const std::string& agent_id, const AttemptRef& ref,
                                      const v1::JobProgress& progress, int64_t now_ms,
                                      int64_t lease_ttl_ms) override;
  absl::StatusOr<LeaseRenewal> RecordProgressMany(const std::string& agent_id,
                                                  const std::vector<ProgressReport>& reports,
                                                  int64_t now_ms, int64_t lease_ttl_ms) override;
  absl::StatusOr<ResultAck> RecordResult(const AttemptResult& result) override;
  absl::StatusOr<std::vector<ExpiredLease>> ExpireLeases(int64_t now_ms, int32_t max_lost) override;
  absl::StatusOr<StateCounts> CountByState() override;
  // One process owns a SQLite database, so its scheduler sees every change.
  void SetChangeCallback(std::function<void(StoreChange)> /*fn*/) override {}

  absl::StatusOr<v1::Round> GetRound(const std::string& team, int64_t round_id) override;
  absl::StatusOr<RoundPage> ListRounds(const RoundFilter& filter) override;
  absl::StatusOr<Baseline> PinBaseline(const std::string& team, const Baseline& pin) override;
  absl::StatusOr<Baseline> GetBaseline(const std::string& team, const std::string& label) override;
  absl::StatusOr<ArtifactTarget> CheckArtifact(const NewArtifact& a) override;
  absl::StatusOr<ArtifactTarget> AttachArtifact(const NewArtifact& a) override;
  absl::StatusOr<std::vector<ArtifactRecord>> ListArtifacts(const std::string& team,
                                                            int64_t round_id) override;
  absl::StatusOr<bool> ArtifactReferenced(const std::string& sha256) override;
  absl::StatusOr<ArtifactSweep> SweepArtifacts(int64_t created_before_ms, int32_t limit,
                                               const ArtifactSweepScope& scope) override;
  absl::StatusOr<std::vector<RegressionRecord>> ObserveRegressions(
      const std::vector<RegressionObservation>& seen, int64_t now_ms) override;
  absl::StatusOr<RegressionRecord> TriageRegression(const RegressionTriage& t) override;
  absl::StatusOr<RegressionDetail> GetRegression(const std::string& team, int64_t id) override;
  absl::StatusOr<std::vector<RegressionCount>> CountRegressions(const std::string& team) override;
  absl::StatusOr<std::pair<ConfirmationRecord, bool>> InsertConfirmation(
      const ConfirmationRecord& c, int64_t now_ms) override;
  absl::StatusOr<ConfirmationRecord> GetConfirmation(const std::string& team, int64_t id) override;
  absl::StatusOr<std::vector<ConfirmationRecord>> ListPendingConfirmations(int32_t limit) override;
  absl::StatusOr<ConfirmationRecord> UpdateConfirmation(const ConfirmationRecord& c,
                                                        int64_t now_ms) override;
  absl::StatusOr<std::pair<BisectionRecord, bool>> InsertBisection(const BisectionRecord& b,
                                                                   int64_t now_ms) override;
  absl::StatusOr<BisectionRecord> GetBisection(const std::string& team, int64_t id) override;
  absl::StatusOr<std::vector<BisectionRecord>> ListBisections(const std::string& team,
                                                              bool include_finished,
                                                              int32_t limit) override;
  absl::StatusOr<BisectionRecord> UpdateBisection(const BisectionRecord& b,
                                                  int64_t now_ms) override;
  absl::StatusOr<std::pair<QuarantineRecord, bool>> QuarantineDevice(
      const QuarantineRecord& q) override;
  absl::StatusOr<QuarantineRecord> ReleaseDevice(const std::string& host, int32_t device_id,
                                                 const std::string& actor, const std::string& note,
                                                 int64_t now_ms) override;
  absl::StatusOr<std::vector<QuarantineRecord>> ListQuarantines(bool include_released,
                                                                int32_t limit) override;
  absl::StatusOr<std::pair<CanaryRecord, bool>> InsertCanary(const CanaryRecord& c) override;
  absl::StatusOr<CanaryRecord> UpdateCanary(const CanaryRecord& c) override;
  absl::StatusOr<std::vector<CanaryRecord>> ListCanaries(const CanaryFilter& f) override;
  absl::StatusOr<std::vector<QuarantineRecord>> CanaryQuarantinesOf(const std::string& host,
                                                                    int32_t device_id) override;
  absl::StatusOr<CalibrationRecord> InsertCalibration(const CalibrationRecord& c) override;
  absl::StatusOr<CalibrationRecord> GetCalibration(const std::string& team, int64_t id) override;
  absl::StatusOr<std::vector<CalibrationRecord>> ListRunningCalibrations(int32_t limit) override;
  absl::Status FinishCalibration(const CalibrationOutcome& o) override;
  absl::StatusOr<std::vector<NoiseRecord>> ListNoise(const std::string& team,
                                                     const std::string& operator_name,
                                                     int32_t limit) override;
  absl::StatusOr<std::vector<NoiseRecord>> NoiseOfCases(
      const std::string& team, const std::vector<std::string>& case_keys) override;

 private:
  // Artifacts (artifacts.cc): the round and team of a.ref, the attempt rule
  // and the quota decided (Store::CheckArtifact).
  absl::StatusOr<ArtifactTarget> DecideArtifact(const NewArtifact& a)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The queue heads a claim chooses from (claims.cc).
  struct ClaimHeads {
    std::vector<ClaimCandidate> candidates;  // priority desc, oldest queued job first
    std::vector<std::string> operators;      // operator_name of each candidate's job
  };
  // The job a result is reported for, as stored (results.cc).
  struct ReportedJob {
    JobFacts facts;  // cancelled not yet filled
    std::string collection_id;
    std::string team;
    std::string operator_name;
    std::string case_id;
  };

  explicit SqliteStore(std::unique_ptr<SQLite::Database> db);

  // Steps shared by several methods (sqlite_store.cc), each inside the
  // caller's transaction.
  void AddEvent(int64_t now_ms, const std::string& collection_id, int64_t job_id, EventKind kind,
                const std::string& detail) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Derives the collection's state from its jobs again.
  void RefreshCollectionState(const std::string& collection_id, int64_t now_ms)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A collection's row as a progress report or a result reads it.
  struct StoredCollection {
    std::optional<v1::CollectionState> state;  // nullopt: no such collection
    bool cancelled = false;                    // a cancel was requested
  };
  StoredCollection LoadStoredCollection(const std::string& collection_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a cancel was requested for the collection.
  bool CollectionCancelled(const std::string& collection_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return LoadStoredCollection(collection_id).cancelled;
  }
  // Whether a job of the collection other than job_id is queued or live: a
  // few seeks of jobs_by_collection_state, where RefreshCollectionState
  // counts every job of the collection.
  bool OthersUnfinished(const std::string& collection_id, int64_t job_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job's lease as stored (for CheckLease); nullopt for an unknown job.
  std::optional<LeaseFacts> LoadLease(int64_t job_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Agents (collections.cc): the agent's devices become exactly `devices`.
  void ReplaceDevices(const std::string& agent_id, const std::vector<v1::DeviceInfo>& devices)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Bundles (bundles.cc): (team, sha256) of every bundle a collection with
  // queued or live jobs, or a pinned baseline, references.
  std::set<std::pair<std::string, std::string>> BundlesInUse() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Collections (collections.cc).
  // Inserts the collection and its jobs in one transaction; or, when
  // (team, idempotency key) names an existing collection, inserts nothing
  // and returns that collection's id; or, when the team's queued jobs would
  // pass c.max_team_queued, inserts nothing and returns "".
  std::optional<std::string> InsertCollectionTx(const NewCollection& c)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The collection with its counts and its jobs above after_job_id, at most
  // max_jobs (0: none, negative: all); its spec only when with_spec.
  absl::StatusOr<v1::Collection> LoadCollection(const std::string& team, const std::string& id,
                                                int64_t after_job_id, int32_t max_jobs,
                                                bool with_spec = true)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Claim stages (claims.cc), inside the claim's transaction.
  // The offered devices without a live lease, whatever the agent believes.
  std::vector<OfferedDevice> FreeDevices(const ClaimRequest& req)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Per collection with queued jobs, its oldest queued job (it stands for
  // all of them: they share priority and constraints), with its spec and the
  // live jobs of the collection and its team.
  ClaimHeads LoadClaimHeads() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Leases the candidate's job on device with `secret`: LEASED, attempt + 1,
  // a new fencing token; logs the lease and marks the collection RUNNING.
  // ABORTED when the job is no longer queued.
  absl::StatusOr<v1::JobAssignment> LeaseJob(const ClaimRequest& req, const std::string& secret,
                                             const ClaimCandidate& pick,
                                             const std::string& operator_name,
                                             const OfferedDevice& device)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A lease leaves a live job: the collection is RUNNING.
  void MarkCollectionRunning(const std::string& collection_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The spec of a collection (immutable after submission), cached for
  // claims.
  const v1::CollectionSpec* CachedSpec(const std::string& collection_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Progress (results.cc), inside the caller's transaction: stores one
  // report and refreshes its collection; returns whether the collection was
  // cancelled, or the refusal (nothing stored then).
  absl::StatusOr<bool> StoreProgress(const std::string& agent_id, const AttemptRef& ref,
                                     const v1::JobProgress& progress, int64_t now_ms,
                                     int64_t lease_ttl_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Result stages (results.cc), inside the result's transaction.
  absl::StatusOr<ResultAck> ApplyResult(const AttemptResult& r) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The ack of an update applied before (a resend), or nullopt.
  // INVALID_ARGUMENT when the uuid was applied to another job.
  absl::StatusOr<std::optional<ResultAck>> AppliedBefore(const AttemptResult& r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The job when r reports its current lease, held by r.agent_id with its
  // secret; else the refusal (CheckLease, LeaseRefused).
  absl::StatusOr<ReportedJob> LoadReportedJob(const AttemptResult& r)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores the evidence of a succeeded attempt as a round with its figures;
  // returns the round id.
  int64_t InsertRound(const AttemptResult& r, const ReportedJob& job)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds the jobs of the finished collections not counted yet to
  // finished_job_counts and marks them counted, in one transaction
  // (CountByState, migration 0027).
  void CountNewlyFinished() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the decision to the job and records the update as applied.
  void FinishJob(const AttemptResult& r, const JobDecision& d, int attempt, int64_t round_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  const std::unique_ptr<SQLite::Database> db_ ABSL_PT_GUARDED_BY(mu_);
  // Cleared (between claims) when it would exceed kMaxCachedSpecs.
  static constexpr size_t kMaxCachedSpecs = 10'000;
  std::map<std::string, std::unique_ptr<v1::CollectionSpec>> specs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace npuperf::server
