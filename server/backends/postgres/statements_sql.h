#pragma once
// The SQL text of PostgresStore's prepared statements, in two tables by
// domain (statements.cc: the queue and device health; history_statements.cc:
// baselines, rounds, artifacts, regressions, confirmations, bisections,
// calibrations), and the column lists and fragments they share. Internal to
// the PostgreSQL backend; only those two files include it (the macros stay
// out of every other file).
#include <span>

namespace npuperf::server {

// One prepared statement: its name (for exec_prepared) and SQL.
struct PgStatement {
  const char* name;
  const char* sql;
};

// The queue's statements (statements.cc) and the history's
// (history_statements.cc); PrepareStatements registers both.
std::span<const PgStatement> QueueStatements();
std::span<const PgStatement> HistoryStatements();

}  // namespace npuperf::server

// Text ordering uses COLLATE "C" (byte order), as SQLite does, so pages and
// listings come out the same on both backends whatever the database locale.

// Column lists shared by several statements (mapped in rows.cc).
#define NPUPERF_PG_COLLECTION_COLUMNS \
  "id, team, spec, state, idempotency_key, cancel_reason, created_ms, finished_ms"
// The same with an empty spec (PgCollectionFromRow reads it as an empty spec).
#define NPUPERF_PG_COLLECTION_COLUMNS_WITHOUT_SPEC                                   \
  "id, team, ''::bytea AS spec, state, idempotency_key, cancel_reason, created_ms, " \
  "finished_ms"
// PgJobFromRow (rows.cc) reads these by position: change both together.
#define NPUPERF_PG_JOB_COLUMNS                                                                   \
  "id, collection_id, operator_name, case_id, op_name, state, attempt, max_attempts, agent_id, " \
  "host, device_id, soc, progress, reason, round_id, kernel_time_us, bound_label, queued_ms, "   \
  "started_ms, finished_ms, discovery"
#define NPUPERF_PG_ROUND_COLUMNS                                                     \
  "r.id, r.collection_id, r.job_id, r.attempt, r.team, r.operator_name, r.case_id, " \
  "r.created_ms, r.evidence"
#define NPUPERF_PG_REGRESSION_COLUMNS                                                       \
  "id, team, operator_name, case_id, baseline_label, rule, state, confirmed, detected_ms, " \
  "last_seen_ms, first_round_id, last_round_id, seen_rounds, COALESCE(ended_ms, 0)"
#define NPUPERF_PG_CALIBRATION_COLUMNS \
  "id, team, source_collection_id, runs, state, reason, created_ms, COALESCE(finished_ms, 0)"
#define NPUPERF_PG_NOISE_COLUMNS                                                                \
  "soc, mode, operator_name, case_id, family, spread, rounds, threshold, far, calibration_id, " \
  "measured_ms"
// The newest row per (soc, mode, operator, case, family) of team $1 among the
// rows matching `where` (a literal).
#define NPUPERF_PG_NEWEST_NOISE(where)                                                            \
  "SELECT " NPUPERF_PG_NOISE_COLUMNS                                                              \
  " FROM noise_spreads WHERE id IN (SELECT MAX(id) FROM noise_spreads WHERE team = $1 AND " where \
  " GROUP BY soc, mode, operator_name, case_id, family) ORDER BY operator_name COLLATE "          \
  "\"C\", case_id COLLATE \"C\", soc COLLATE \"C\", mode COLLATE \"C\", family COLLATE \"C\""
// Every (key, value) of the JSON object $N is a label of the collection cid.
#define NPUPERF_PG_HAS_LABELS(N, cid)                              \
  " NOT EXISTS (SELECT 1 FROM jsonb_each_text(" N                  \
  "::jsonb) f WHERE NOT EXISTS ("                                  \
  "SELECT 1 FROM collection_labels l WHERE l.collection_id = " cid \
  " AND l.key = f.key AND l.value = f.value))"
// Rounds of collections the server submitted for itself (a label key
// starting "npuperf.", core/limits.h kServerLabelPrefix: confirmation and
// calibration reruns) only when the boolean parameter N is true. The range
// ['npuperf.', 'npuperf/') is that prefix ('/' follows '.') and uses the key
// index.
#define NPUPERF_PG_SERVER_ROUNDS(N)                                        \
  "(" N                                                                    \
  "::boolean OR NOT EXISTS (SELECT 1 FROM collection_labels x WHERE "      \
  "x.collection_id = r.collection_id AND x.key >= 'npuperf.' AND x.key < " \
  "'npuperf/'))"
// What QuarantineOf reads (postgres/quarantines.cc).
#define NPUPERF_PG_QUARANTINE_COLUMNS                                              \
  "id, host, device_id, soc, reason, source, since_ms, COALESCE(released_ms, 0), " \
  "released_by, release_note, suspect_since_ms"
// What CanaryOf reads (postgres/canaries.cc).
#define NPUPERF_PG_CANARY_COLUMNS                                                          \
  "id, host, device_id, soc, slot, state, collection_id, round_id, kernel_us, reference, " \
  "reference_us, excess_pct, threshold_pct, reason, created_ms, finished_ms, version"
// The filters of ListCanaries but the state's: host $1 ('' any), device $2
// (negative: any), SoC $3 ('' any), ids below $4 (0: any); then newest first,
// at most $5.
#define NPUPERF_PG_CANARY_LIST(state_condition)                                               \
  "SELECT " NPUPERF_PG_CANARY_COLUMNS " FROM canaries WHERE " state_condition                 \
  " ($1::text = '' OR host = $1) AND ($2::integer < 0 OR device_id = $2) AND ($3::text = '' " \
  "OR soc = $3) AND ($4::bigint <= 0 OR id < $4) ORDER BY id DESC LIMIT $5"
// What ConfirmationOf reads (postgres/confirmations.cc).
#define NPUPERF_PG_CONFIRMATION_COLUMNS "id, team, options, body, version"
// What BisectionOf reads (postgres/bisections.cc).
#define NPUPERF_PG_BISECTION_COLUMNS "id, team, idempotency_key, body, version"
// Job states as stored (npuperf.v1.JobState).
#define NPUPERF_PG_LIVE "(2, 3)" /* LEASED, RUNNING */
// The lease's secret is the one whose sha256 is parameter N (no secret for a
// lease granted before migration 0004).
#define NPUPERF_PG_SECRET(N) "(lease_secret_sha256 IS NULL OR lease_secret_sha256 = " N ")"
// A progress report's write of job $3 (progress $1, lease until $2), and the
// lease it must hold: fencing token $4, attempt $5, agent $7, the secret
// whose sha256 is $8, live (progress_running and progress_record; qualified,
// as progress_running joins collections).
#define NPUPERF_PG_PROGRESS_SET "UPDATE jobs SET state = 3, progress = $1, lease_expires_ms = $2"
#define NPUPERF_PG_PROGRESS_LEASE                                                          \
  "jobs.id = $3 AND jobs.fencing_token = $4 AND jobs.attempt = $5 AND jobs.agent_id = $7 " \
  "AND jobs.state IN " NPUPERF_PG_LIVE " AND " NPUPERF_PG_SECRET("$8")
// CountByState (migration 0027). Its batch of finished collections counted
// at a time: a literal, not a parameter, so the statements are planned once.
#define NPUPERF_PG_COUNT_BATCH "1000"
// The jobs of collection `c` by state, as rows j(state, n): a LATERAL with its
// own GROUP BY, which PostgreSQL cannot flatten into a join, so an index read
// per collection, never a pass over every job.
#define NPUPERF_PG_JOBS_BY_STATE_OF(c)                                                  \
  " CROSS JOIN LATERAL (SELECT state, COUNT(*) AS n FROM jobs WHERE collection_id = " c \
  ".id GROUP BY state) j "
// Its first step: of the finished collections not counted yet, a batch,
// skipping those another replica is counting (n), the jobs added to
// finished_job_counts in state order (the lock order of its rows) and the
// collections marked counted. A statement that starts with it sees none of
// these writes: its snapshot is the one before them.
#define NPUPERF_PG_COUNT_NEWLY_FINISHED \
  "WITH n AS (SELECT id FROM collections WHERE state IN (3, 4, 5) AND NOT jobs_counted " \
  "LIMIT " \
  NPUPERF_PG_COUNT_BATCH                                                                      \
  " FOR UPDATE SKIP LOCKED), j AS (SELECT j.state, SUM(j.n) AS jobs FROM n"                   \
  NPUPERF_PG_JOBS_BY_STATE_OF("n")                                                            \
  "GROUP BY j.state), a AS (INSERT INTO finished_job_counts AS f (state, jobs) SELECT state, " \
  "jobs FROM j ORDER BY state ON CONFLICT (state) DO UPDATE SET jobs = f.jobs + "             \
  "EXCLUDED.jobs), m AS (UPDATE collections c SET jobs_counted = true FROM n WHERE c.id = "   \
  "n.id) "
// Whether that step took a full batch (1 or 0): more may wait.
#define NPUPERF_PG_COUNT_BATCH_FULL "(COUNT(*) >= " NPUPERF_PG_COUNT_BATCH ")::integer"
