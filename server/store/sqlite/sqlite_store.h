#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "server/store/store.h"

namespace SQLite {
class Database;
}

namespace npuperf::server {

// The embedded Store backend (SQLiteCpp): WAL journal, busy timeout, claims
// inside BEGIN IMMEDIATE transactions. One connection guarded by a mutex:
// SQLite serializes writers anyway, and one connection keeps every method
// atomic without cross-connection retries. Thread-safe.
class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) the database at path (":memory:" for tests)
  // and applies pending migrations.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore() override;

  absl::StatusOr<std::pair<std::string, std::string>> LookupToken(
      const std::string& hash) override;
  absl::Status InsertToken(const std::string& hash, const std::string& kind,
                           const std::string& name, int64_t now_ms) override;

  absl::StatusOr<bool> PutBundle(const std::string& team, const std::string& name,
                                 const std::string& sha256, const std::string& content,
                                 int64_t now_ms) override;
  absl::StatusOr<std::string> GetBundle(const std::string& sha256) override;
  absl::StatusOr<bool> HasBundle(const std::string& sha256) override;

  absl::StatusOr<std::pair<v1::Collection, bool>> InsertCollection(
      const NewCollection& c) override;
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
  absl::StatusOr<std::vector<ExpiredLease>> ExpireLeases(int64_t now_ms,
                                                         int32_t max_lost) override;
  absl::StatusOr<StateCounts> CountByState() override;
  // One process owns a SQLite database, so its scheduler sees every change.
  void SetChangeCallback(std::function<void(StoreChange)> /*fn*/) override {}

  absl::StatusOr<v1::Round> GetRound(const std::string& team, int64_t round_id) override;
  absl::StatusOr<RoundPage> ListRounds(const RoundFilter& filter) override;
  absl::StatusOr<Baseline> PinBaseline(const std::string& team, const Baseline& pin) override;
  absl::StatusOr<Baseline> GetBaseline(const std::string& team, const std::string& label) override;

 private:
  explicit SqliteStore(std::unique_ptr<SQLite::Database> db);

  // REQUIRES: mu_ held, inside a transaction.
  void RefreshCollectionState(const std::string& collection_id, int64_t now_ms);
  void AddEvent(int64_t now_ms, const std::string& collection_id, int64_t job_id,
                const std::string& kind, const std::string& detail);
  absl::StatusOr<v1::Collection> LoadCollection(const std::string& team, const std::string& id,
                                                bool with_jobs);
  absl::StatusOr<ResultAck> ApplyResult(const AttemptResult& r);

  // REQUIRES: mu_ held, inside a transaction.
  bool CollectionCancelled(const std::string& collection_id);

  // The spec of a collection (immutable after submission), cached for
  // claims. REQUIRES: mu_ held, inside a transaction.
  const v1::CollectionSpec* CachedSpec(const std::string& collection_id);

  std::mutex mu_;
  std::unique_ptr<SQLite::Database> db_;
  // Guarded by mu_; cleared (between claims) when it would exceed 10,000.
  std::map<std::string, std::unique_ptr<v1::CollectionSpec>> specs_;
};

}  // namespace npuperf::server
