#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/store/postgres/listener.h"
#include "server/store/postgres/pool.h"
#include "server/store/store.h"

namespace npuperf::server {

// The production Store backend (libpqxx 6.4). A PgPool of connections, each
// with every statement prepared; each method is one read-committed
// transaction rerun on serialization failures and deadlocks (PgPool::Run).
// Safe with several server replicas on one database: claims lock the
// collection row, then one queued job with FOR UPDATE SKIP LOCKED; the
// partial unique index jobs_one_lease_per_device (migration 0002) makes a
// device double-booking impossible; lease expiry skips rows another replica
// holds. Semantics match SqliteStore method by method (the conformance suite
// in tests/server/store_conformance_test.cc runs on both). See
// docs/storage.md. Thread-safe.
class PostgresStore final : public Store {
 public:
  // Default pool size: one connection per core is plenty for a 2-core host.
  static constexpr int kDefaultPoolSize = 4;

  // Connects to url (postgres://... or postgresql://...), applies pending
  // migrations under an advisory lock, and returns the store. UNAVAILABLE
  // when the database is unreachable.
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& url,
                                                             int pool_size = kDefaultPoolSize);
  ~PostgresStore() override;

  absl::StatusOr<std::pair<std::string, std::string>> LookupToken(const std::string& hash) override;
  absl::Status InsertToken(const std::string& hash, const std::string& kind,
                           const std::string& name, int64_t now_ms) override;

  absl::StatusOr<bool> PutBundle(const std::string& team, const std::string& name,
                                 const std::string& sha256, const std::string& content,
                                 int64_t now_ms) override;
  absl::StatusOr<std::string> GetBundle(const std::string& sha256) override;
  absl::StatusOr<bool> HasBundle(const std::string& sha256) override;

  absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollection(const NewCollection& c) override;
  absl::StatusOr<v1::Collection> GetCollection(const std::string& team,
                                               const std::string& id) override;
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
  absl::StatusOr<std::vector<v1::AgentStatus>> ListAgents() override;
  absl::StatusOr<v1::RegisterAgentRequest> GetAgent(const std::string& agent_id) override;

  absl::StatusOr<std::optional<v1::JobAssignment>> ClaimJob(const ClaimRequest& req,
                                                            const ClaimChooser& choose) override;
  absl::StatusOr<LeaseRenewal> RenewLeases(const std::string& agent_id,
                                           const std::vector<AttemptRef>& running, int64_t now_ms,
                                           int64_t lease_ttl_ms) override;
  absl::StatusOr<std::vector<AttemptRef>> AdoptAttempts(const std::string& agent_id,
                                                        const std::vector<AttemptRef>& running,
                                                        int64_t now_ms,
                                                        int64_t lease_ttl_ms) override;
  absl::StatusOr<bool> RecordProgress(const std::string& agent_id, const AttemptRef& ref,
                                      const v1::JobProgress& progress, int64_t now_ms,
                                      int64_t lease_ttl_ms) override;
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

 private:
  // What a claim works on: the free devices and the queue heads.
  struct ClaimView;

  PostgresStore(const std::string& url, int pool_size);
  absl::Status Migrate();

  // Helpers running inside the caller's transaction.
  //
  // Lock order (no deadlocks between replicas): a collection row before any
  // job row of it is changed. Then a transaction that waits on another's
  // job row or lease-index entry never holds a lock that one waits for.
  // What LockJobCollection saw under the lock.
  struct CollectionLock {
    std::optional<bool> cancelled;  // a cancel request; nullopt: unknown job
    std::optional<v1::CollectionState> state;  // as stored
  };
  // Locks the row of the job's collection.
  static CollectionLock LockJobCollection(pqxx::work& tx, int64_t job_id);
  static void AddEvent(pqxx::work& tx, int64_t now_ms, const std::string& collection_id,
                       int64_t job_id, const std::string& kind, const std::string& detail);
  // Derives the collection's state from its jobs again.
  // REQUIRES: the collection row is locked by tx (FOR UPDATE), so the count
  // sees every earlier commit and two replicas cannot both miss each other.
  // `stored`, when known, is the state the locked row holds: no write when
  // the derived state equals it.
  static void RefreshCollectionState(pqxx::work& tx, const std::string& collection_id,
                                     int64_t now_ms, bool cancelled,
                                     std::optional<v1::CollectionState> stored = std::nullopt);
  static bool CollectionCancelled(pqxx::work& tx, const std::string& collection_id);
  static absl::StatusOr<v1::Collection> LoadCollection(pqxx::work& tx, const std::string& team,
                                                       const std::string& id, bool with_jobs);
  static absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollectionTx(pqxx::work& tx,
                                                                            const NewCollection& c);
  // notify_payload: this replica's id, sent on kPgJobsChannel with the
  // job's transition (its device is free, or the job is queued again).
  static absl::StatusOr<ResultAck> ApplyResult(pqxx::work& tx, const AttemptResult& r,
                                               const std::string& notify_payload);
  static int64_t StoreRound(pqxx::work& tx, const AttemptResult& r, const pqxx::row& job);

  // Claim stages (postgres_store_jobs.cc), in autocommit: the free devices
  // and queue heads in one statement (specs from the cache), then one call
  // of npuperf_claim() per candidate tried.
  ClaimView LoadClaimView(pqxx::transaction_base& tx, const ClaimRequest& req);
  absl::StatusOr<std::optional<v1::JobAssignment>> ClaimTx(pqxx::transaction_base& tx,
                                                           const ClaimRequest& req,
                                                           const ClaimChooser& choose);
  // Fills view.specs for its candidates: cached, else fetched in one query.
  void LoadSpecs(pqxx::transaction_base& tx, ClaimView& view);
  // Leases the picked candidate's oldest queued job on `device`; nullopt when
  // its collection is cancelled, at its cap, drained, or (skip_locked) held
  // by another claim.
  static std::optional<v1::JobAssignment> TakeLease(pqxx::transaction_base& tx,
                                                    const ClaimRequest& req,
                                                    const ClaimView& view, size_t pick,
                                                    const OfferedDevice& device,
                                                    bool skip_locked);

  // Tells the other replicas (their PgListener) that jobs became claimable;
  // delivered when tx commits.
  void NotifyClaimable(pqxx::work& tx) const;
  // Tells the other replicas (their WatchCollection streams) that a
  // collection changed without freeing anything; delivered when tx commits.
  void NotifyUpdated(pqxx::work& tx) const;

  // Random per store: our own notifications come back with this payload.
  const std::string replica_id_;
  // Collection specs never change after submission, so claims cache them
  // instead of shipping every candidate's spec on every claim. Cleared when
  // it holds kMaxCachedSpecs.
  static constexpr size_t kMaxCachedSpecs = 10'000;
  absl::Mutex specs_mu_;
  std::map<std::string, std::shared_ptr<const v1::CollectionSpec>> specs_
      ABSL_GUARDED_BY(specs_mu_);
  PgPool pool_;
  PgListener listener_;
};

}  // namespace npuperf::server
