// PostgresStore: opening and migrating the database, the change
// notifications, and the steps several methods share inside their
// transaction (events, collection state).
#include "server/store/postgres/postgres_store.h"

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/core/job_state.h"
#include "server/store/migrator.h"
#include "server/store/postgres/postgres_open.h"
#include "server/store/postgres/rows.h"
#include "server/store/postgres/statements.h"

namespace npuperf::server {

PostgresStore::PostgresStore(const std::string& url, int pool_size)
    : replica_id_(absl::StrFormat("%016x", absl::Uniform<uint64_t>(absl::BitGen()))),
      pool_(url, pool_size),
      listener_(url, replica_id_) {}
PostgresStore::~PostgresStore() = default;

void PostgresStore::SetChangeCallback(std::function<void(StoreChange)> fn) {
  listener_.SetCallback(std::move(fn));
}

void PostgresStore::NotifyClaimable(pqxx::work& tx) const {
  tx.exec_prepared("jobs_notify", replica_id_);
}

void PostgresStore::NotifyUpdated(pqxx::work& tx) const {
  tx.exec_prepared("updates_notify", replica_id_);
}

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                                   int pool_size) {
  std::unique_ptr<PostgresStore> store(new PostgresStore(url, pool_size));
  absl::Status s = store->Migrate();
  if (!s.ok()) return s;
  return store;
}

absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url, int pool_size) {
  auto store = PostgresStore::Open(url, pool_size);
  if (!store.ok()) return store.status();
  return std::unique_ptr<Store>(std::move(*store));
}

absl::Status PostgresStore::Migrate() {
  return pool_.Run("migrate", [](pqxx::work& tx) -> absl::Status {
    // Held until commit: a second replica waits here, then sees our versions.
    tx.exec(kPgMigrationLock);
    tx.exec(kPgCreateMigrations);
    MigrationTarget target;
    target.applied_versions = [&tx]() -> absl::StatusOr<std::vector<int>> {
      std::vector<int> out;
      for (const auto& row : tx.exec(kPgAppliedVersions)) out.push_back(row[0].as<int>());
      return out;
    };
    // Every pending migration and its schema_migrations row commit together.
    target.apply = [&tx](const Migration& m) -> absl::Status {
      tx.exec(m.sql);
      tx.exec_params(kPgRecordMigration, m.version, m.name);
      return absl::OkStatus();
    };
    return ApplyMigrations(EmbeddedMigrations("postgres"), target).status();
  });
}

void PostgresStore::AddEvent(pqxx::work& tx, int64_t now_ms, const std::string& collection_id,
                             int64_t job_id, const std::string& kind, const std::string& detail) {
  tx.exec_prepared("event_insert", now_ms, collection_id, job_id, kind, detail);
}

bool PostgresStore::CollectionCancelled(pqxx::work& tx, const std::string& collection_id) {
  auto r = tx.exec_prepared("collection_cancel_reason", collection_id);
  return !r.empty() && !r[0][0].as<std::string>().empty();
}

void PostgresStore::RefreshCollectionState(pqxx::work& tx, const std::string& collection_id,
                                           int64_t now_ms, bool cancelled,
                                           std::optional<v1::CollectionState> stored) {
  v1::JobCounts c;
  for (const auto& row : tx.exec_prepared("collection_counts", collection_id)) {
    const auto state = static_cast<v1::JobState>(row[0].as<int>());
    for (int64_t i = 0, n = row[1].as<int64_t>(); i < n; ++i) CountJob(state, &c);
  }
  const v1::CollectionState state = DeriveCollectionState(c, cancelled);
  // Unchanged (most results and progress reports): the row already says so,
  // finished_ms included (set with a terminal state, cleared with a live one).
  if (stored == state) return;
  tx.exec_prepared("collection_set_state", static_cast<int>(state), IsTerminal(state), now_ms,
                   collection_id);
}

}  // namespace npuperf::server
