// PostgresStore: opening and migrating the database, and the change
// callback (the other replicas' notifications, through PgListener).
#include "server/backends/postgres/postgres_store.h"

#include <pqxx/pqxx>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "server/backends/postgres/listener.h"
#include "server/backends/postgres/pool.h"
#include "server/backends/postgres/statements.h"
#include "server/store/migrator.h"

namespace npuperf::server {

PostgresStore::PostgresStore(const std::string& url, Clock& clock, int pool_size)
    : replica_id_(absl::StrFormat("%016x", absl::Uniform<uint64_t>(absl::BitGen()))),
      pool_(std::make_unique<PgPool>(url, pool_size, clock)),
      listener_(std::make_unique<PgListener>(url, replica_id_, clock)) {}

PostgresStore::~PostgresStore() = default;

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                                   Clock& clock, int pool_size) {
  std::unique_ptr<PostgresStore> store(new PostgresStore(url, clock, pool_size));
  absl::Status s = store->Migrate();
  if (!s.ok()) return s;
  return store;
}

absl::Status PostgresStore::Migrate() {
  return pool_->Run("migrate", [](pqxx::work& tx) -> absl::Status {
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
    absl::Status s = ApplyMigrations(EmbeddedMigrations(SqlDialect::kPostgres), target).status();
    if (!s.ok()) return s;
    // The functions' one definitions, after the schema they read.
    for (const Migration& d : EmbeddedDefinitions(SqlDialect::kPostgres)) tx.exec(d.sql);
    return absl::OkStatus();
  });
}

void PostgresStore::SetChangeCallback(std::function<void(StoreChange)> fn) {
  listener_->SetCallback(std::move(fn));
}

}  // namespace npuperf::server
