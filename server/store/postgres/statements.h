#pragma once

#include <pqxx/pqxx>

namespace npuperf::server {

// Registers every SQL statement of PostgresStore on a fresh connection as a
// named prepared statement (libpqxx 6.4 prepares lazily, on first use). All
// of the backend's SQL lives in postgres_statements.cc (style.md R1, R13);
// PostgresStore calls them by name with exec_prepared.
void PrepareStatements(pqxx::connection& conn);

}  // namespace npuperf::server

namespace npuperf::server {

// Migration bookkeeping, run with plain exec before any statement exists.
// The advisory lock key is "npuperf" in ASCII: two replicas starting together
// apply migrations one after the other.
inline constexpr char kPgMigrationLock[] = "SELECT pg_advisory_xact_lock(110117112101114102)";
inline constexpr char kPgCreateMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
    "name text NOT NULL, applied_ms bigint NOT NULL)";
inline constexpr char kPgAppliedVersions[] = "SELECT version FROM schema_migrations ORDER BY version";
inline constexpr char kPgRecordMigration[] =
    "INSERT INTO schema_migrations (version, name, applied_ms) VALUES "
    "($1, $2, (extract(epoch from now()) * 1000)::bigint)";

}  // namespace npuperf::server
