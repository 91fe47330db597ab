#pragma once
// Every SQL statement of PostgresStore, prepared by name on each connection,
// and the few steps several of its methods run with them inside their
// transaction. Internal to the PostgreSQL backend.
#include <cstdint>
#include <optional>
#include <string>

#include <pqxx/pqxx>

#include "npuperf/v1/collection.pb.h"
#include "server/core/job_rules.h"
#include "server/store/store.h"

namespace npuperf::server {

// Registers every SQL statement of PostgresStore on a fresh connection as a
// named prepared statement (libpqxx 6.4 prepares lazily, on first use). All
// of the backend's SQL lives in the two tables of statements_sql.h (style.md R1, R13); the
// methods call them by name with exec_prepared.
void PrepareStatements(pqxx::connection& conn);

// Migration bookkeeping, run with plain exec before any statement exists.
// The advisory lock key is "npuperf" in ASCII: two replicas starting together
// apply migrations one after the other.
inline constexpr char kPgMigrationLock[] = "SELECT pg_advisory_xact_lock(110117112101114102)";
inline constexpr char kPgCreateMigrations[] =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, "
    "name text NOT NULL, applied_ms bigint NOT NULL)";
inline constexpr char kPgAppliedVersions[] =
    "SELECT version FROM schema_migrations ORDER BY version";
inline constexpr char kPgRecordMigration[] =
    "INSERT INTO schema_migrations (version, name, applied_ms) VALUES "
    "($1, $2, (extract(epoch from now()) * 1000)::bigint)";

// Steps several methods share, each inside the caller's transaction.
//
// Lock order (no deadlocks between replicas): a collection row before any
// job row of it is changed (collection_lock, job_collection_lock). Then a
// transaction that waits on another's job row or lease-index entry never
// holds a lock that one waits for. One exception, before any of these:
// round_insert_ahead holds its job's key-share lock (the rounds foreign key)
// and its rounds.job_id entry while it waits for the collection; the job
// locks taken under a collection lock (FOR NO KEY UPDATE, UPDATE) do not
// conflict with a key share, and a second insert of the job's round waits
// for the first's transaction before it takes any lock.

// Appends to the event log.
void PgAddEvent(pqxx::transaction_base& tx, int64_t now_ms, const std::string& collection_id,
                int64_t job_id, EventKind kind, const std::string& detail);
// The job's lease as stored (for CheckLease: why a conditional write of it
// matched no row); nullopt for an unknown job.
std::optional<LeaseFacts> PgLoadLease(pqxx::transaction_base& tx, int64_t job_id);
// The lease facts in row's columns from `at` on, in lease_facts' order (state,
// attempt, fencing_token, agent_id, host, lease_expires_ms,
// lease_secret_sha256).
LeaseFacts PgLeaseFactsFromRow(const pqxx::row& row, int at);
// Derives the collection's state from its jobs again.
// REQUIRES: the collection row is locked by tx (FOR UPDATE), so the count
// sees every earlier commit and two replicas cannot both miss each other.
// `stored`, when known, is the state the locked row holds: no write when
// the derived state equals it.
void PgRefreshCollectionState(pqxx::transaction_base& tx, const std::string& collection_id,
                              int64_t now_ms, bool cancelled,
                              std::optional<v1::CollectionState> stored = std::nullopt);
// Tells the other replicas (their PgListener) what changed, with our
// replica id as the payload; delivered when tx commits. kClaimable: jobs
// became claimable (kPgJobsChannel); kUpdated: a collection changed without
// freeing anything (kPgUpdatesChannel).
void PgNotify(pqxx::transaction_base& tx, StoreChange change, const std::string& replica_id);

}  // namespace npuperf::server
