#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "server/core/claims_in_flight.h"
#include "server/store/store.h"

namespace npuperf::server {

class PgPool;      // pool.h
class PgListener;  // listener.h

// The production Store backend (libpqxx 6.4). A PgPool of connections, each
// with every statement prepared; each method is one read-committed
// transaction rerun on serialization failures and deadlocks (PgPool::Run).
// Safe with several server replicas on one database: claims lock the
// collection row, then one queued job with FOR UPDATE SKIP LOCKED; the
// partial unique index jobs_one_lease_per_device (migration 0002) makes a
// device double-booking impossible; lease expiry skips rows another replica
// holds. Semantics match SqliteStore method by method (the conformance suite
// in tests/server/store/store_conformance*_test.cc runs on both). See
// docs/storage.md. Thread-safe.
//
// A pimpl: the pool and the listener are reached through pointers, so no
// <pqxx/...> is reachable from this header (style.md R1). The methods live by
// domain: collections.cc (tokens, collections, state counts), agents.cc (agents and devices),
// bundles.cc (bundles, quota, collector), claims.cc (ClaimJobs, leases, expiry), results.cc
// (progress, results), rounds.cc (rounds, baselines), regressions.cc (regressions and their
// triage), calibrations.cc (calibrations and measured noise), quarantines.cc and canaries.cc
// (device health); postgres_store.cc opens and migrates the database.
class PostgresStore final : public Store {
 public:
  // Default pool size: one connection per core is plenty for a 2-core host.
  static constexpr int kDefaultPoolSize = 4;

  // Connects to url ("postgres://user@host:port/db" or "postgresql://...";
  // libpq URI options such as ?options=-csearch_path%3Dschema apply), applies
  // pending migrations under an advisory lock, and returns the store.
  // UNAVAILABLE when the database is unreachable. clock (deadlines, retry
  // backoff, the listener's reconnects) must outlive the store.
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& url, Clock& clock,
                                                             int pool_size = kDefaultPoolSize);
  ~PostgresStore() override;

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
  // LISTENs on kPgJobsChannel and kPgUpdatesChannel (a dedicated connection,
  // started on the first call): other replicas' changes call fn.
  void SetChangeCallback(std::function<void(StoreChange)> fn) override;

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
  // RecordProgress's path under the collection's lock (a collection not
  // stored as RUNNING, or a refusal to explain).
  absl::StatusOr<bool> RecordProgressLocked(const std::string& agent_id, const AttemptRef& ref,
                                            const v1::JobProgress& progress, int64_t now_ms,
                                            int64_t lease_ttl_ms);
  using SpecPtr = std::shared_ptr<const v1::CollectionSpec>;

  PostgresStore(const std::string& url, Clock& clock, int pool_size);
  absl::Status Migrate();

  // The spec cache of claims (claims.cc). Collection specs never change
  // after submission, so claims cache them instead of shipping every
  // candidate's spec on every claim.
  // The cached spec of each candidate's collection; nullptr where none is.
  std::vector<SpecPtr> CachedSpecs(const std::vector<ClaimCandidate>& candidates);
  // Adds specs fetched from the database; clears the cache first when it
  // would exceed kMaxCachedSpecs.
  void CacheSpecs(const std::map<std::string, SpecPtr>& fetched);

  // The picks of this replica's claims being leased now (claims.cc): the
  // chooser counts them as live jobs, so concurrent claims spread.
  ClaimsInFlight in_flight_;
  // Random per store: our own notifications come back with this payload.
  const std::string replica_id_;
  static constexpr size_t kMaxCachedSpecs = 10'000;
  absl::Mutex specs_mu_;
  std::map<std::string, SpecPtr> specs_ ABSL_GUARDED_BY(specs_mu_);
  const std::unique_ptr<PgPool> pool_;
  const std::unique_ptr<PgListener> listener_;
};

}  // namespace npuperf::server
