#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf::server {

// One schema change (migrations/<dialect>/NNNN_name.sql).
struct Migration {
  int version = 0;
  std::string name;
  std::string sql;
};

// The SQL dialects with migrations: migrations/sqlite/, migrations/postgres/.
enum class SqlDialect { kSqlite, kPostgres };

// The migrations compiled into this binary for a dialect, in version order
// (generated from migrations/ at build time by embed_migrations.cmake).
std::vector<Migration> EmbeddedMigrations(SqlDialect dialect);

// The one definition of each database function of a dialect
// (migrations/<dialect>/definitions/*.sql, version 0, by name): not history
// but the current rule, run after the versioned migrations on every migrate,
// in the same transaction, so that every database has exactly it (today:
// postgres' npuperf_claim).
std::vector<Migration> EmbeddedDefinitions(SqlDialect dialect);

// What a backend provides to apply migrations: the applied versions, and a
// function applying one migration and recording it in schema_migrations in
// the same transaction.
struct MigrationTarget {
  std::function<absl::StatusOr<std::vector<int>>()> applied_versions;
  std::function<absl::Status(const Migration&)> apply;
};

// Applies the pending migrations in order. Fails if the database has a
// version this binary does not know (a newer server migrated it).
// Returns the number applied.
absl::StatusOr<int> ApplyMigrations(const std::vector<Migration>& migrations,
                                    const MigrationTarget& target);

}  // namespace npuperf::server
