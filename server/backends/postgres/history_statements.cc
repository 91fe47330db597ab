// PostgresStore's statements of the history: baselines, rounds, artifacts,
// regressions, confirmations, bisections and calibrations (statements_sql.h).
#include "server/backends/postgres/statements_sql.h"

namespace npuperf::server {
namespace {

constexpr PgStatement kHistoryStatements[] = {
    // Baselines.
    {"baseline_round_of_team", "SELECT 1 FROM rounds WHERE id = $1 AND team = $2"},
    {"baseline_collection_of_team", "SELECT 1 FROM collections WHERE id = $1 AND team = $2"},
    {"baseline_pin",
     "INSERT INTO baselines (team, label, round_id, collection_id, pinned_ms) "
     "VALUES ($1, $2, NULLIF($3, 0::bigint), NULLIF($4, ''), $5) ON CONFLICT (team, label) DO "
     "UPDATE SET round_id = EXCLUDED.round_id, collection_id = EXCLUDED.collection_id, "
     "pinned_ms = EXCLUDED.pinned_ms"},
    {"baseline_get",
     "SELECT COALESCE(round_id, 0), COALESCE(collection_id, ''), pinned_ms FROM baselines "
     "WHERE team = $1 AND label = $2"},
    // Rounds.
    {"round_get", "SELECT " NPUPERF_PG_ROUND_COLUMNS " FROM rounds r WHERE r.id = $1"},
    {"round_labels", "SELECT key, value FROM collection_labels WHERE collection_id = $1"},
    {"round_list",
     "SELECT " NPUPERF_PG_ROUND_COLUMNS
     ", CASE WHEN $1::text <> '' THEN (r.figures ->> $1)::double "
     "precision END FROM rounds r "
     "WHERE r.team = $2 AND r.id > $3 AND r.created_ms >= $4 "
     "AND ($5::text = '' OR r.operator_name = $5) AND ($6::text = '' OR r.case_id = $6) AND "
     "($7::text = '' OR r.collection_id = $7) AND ($8::bigint = 0 OR r.created_ms < $8) "
     "AND" NPUPERF_PG_HAS_LABELS("$9", "r.collection_id") " AND " NPUPERF_PG_SERVER_ROUNDS(
         "$11") " ORDER BY r.id LIMIT $10"},
    // The same, newest first: $3 is an upper bound on ids (0: none).
    {"round_list_desc",
     "SELECT " NPUPERF_PG_ROUND_COLUMNS
     ", CASE WHEN $1::text <> '' THEN (r.figures ->> $1)::double "
     "precision END FROM rounds r "
     "WHERE r.team = $2 AND ($3::bigint = 0 OR r.id < $3) AND "
     "r.created_ms >= $4 AND ($5::text = '' OR r.operator_name = $5) AND ($6::text = '' OR "
     "r.case_id = $6) AND ($7::text = '' OR r.collection_id = $7) AND ($8::bigint = 0 OR "
     "r.created_ms < $8) AND" NPUPERF_PG_HAS_LABELS(
         "$9", "r.collection_id") " AND " NPUPERF_PG_SERVER_ROUNDS("$11") " ORDER BY r.id DESC "
                                                                          "LIMIT $10"},
    // Artifacts (migration 0011): metadata of the files in the artifact
    // directory. A team's attaches are serialized by an advisory lock on its
    // name, so its quota check sees every earlier attach of the team.
    {"artifact_team_lock", "SELECT pg_advisory_xact_lock(hashtext('npuperf-artifacts:' || $1))"},
    {"artifact_job", "SELECT COALESCE(round_id, 0), team FROM jobs WHERE id = $1"},
    {"artifact_have", "SELECT created_ms FROM artifacts WHERE round_id = $1 AND sha256 = $2"},
    {"artifact_team_bytes",
     "SELECT COALESCE(SUM(size_bytes), 0)::bigint FROM artifacts WHERE team = $1"},
    {"artifact_insert",
     "INSERT INTO artifacts (round_id, team, name, sha256, size_bytes, created_ms) VALUES ($1, "
     "$2, $3, $4, $5, $6) ON CONFLICT (round_id, sha256) DO NOTHING"},
    {"artifact_list",
     "SELECT round_id, team, name, sha256, size_bytes, created_ms FROM artifacts WHERE round_id = "
     "$1 AND ($2 = '' OR team = $2) ORDER BY created_ms, sha256 COLLATE \"C\""},
    {"artifact_referenced", "SELECT 1 FROM artifacts WHERE sha256 = $1 LIMIT 1"},
    {"artifact_sweep",
     "DELETE FROM artifacts d USING (SELECT a.round_id, a.sha256 FROM artifacts a JOIN rounds r "
     "ON r.id = a.round_id WHERE a.created_ms < $1 AND NOT EXISTS (SELECT 1 FROM baselines b "
     "WHERE b.team = a.team AND (b.round_id = a.round_id OR b.collection_id = r.collection_id)) "
     "AND ($3 = '' OR a.team = $3) AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text("
     "$4::jsonb) e(team) WHERE e.team = a.team) "
     "ORDER BY a.created_ms, a.round_id LIMIT $2 FOR UPDATE OF a SKIP LOCKED) old WHERE "
     "d.round_id = old.round_id AND d.sha256 = old.sha256 RETURNING d.round_id, d.team, d.name, "
     "d.sha256, d.size_bytes, d.created_ms"},
    // Regressions (migration 0013; core/triage_rules.h). A team's
    // observations are serialized by an advisory lock on its name, so two
    // listings cannot both open the same regression; each row they or a
    // triage change is read FOR UPDATE first (the compare-and-set).
    // Confirmations (migration 0015). The insert skips a pair of rounds
    // that already has one that is not UNCONFIRMED (the partial unique index
    // decides, atomically); the update is a compare-and-set on version.
    {"confirmation_insert",
     "INSERT INTO confirmations (team, baseline_round_id, candidate_round_id, state, options, "
     "body, version, created_ms, updated_ms) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7) ON "
     "CONFLICT (team, baseline_round_id, candidate_round_id) WHERE state <> 4 DO NOTHING "
     "RETURNING id"},
    {"confirmation_of_pair",
     "SELECT " NPUPERF_PG_CONFIRMATION_COLUMNS " FROM confirmations WHERE team = $1 AND "
     "baseline_round_id = $2 AND candidate_round_id = $3 AND state <> 4"},
    {"confirmation_get", "SELECT " NPUPERF_PG_CONFIRMATION_COLUMNS
                         " FROM confirmations WHERE id = $1 AND ($2::text = '' OR team = $2)"},
    {"confirmation_pending", "SELECT " NPUPERF_PG_CONFIRMATION_COLUMNS
                             " FROM confirmations WHERE state = 1 ORDER BY id LIMIT $1"},
    {"confirmation_update",
     "UPDATE confirmations SET state = $1, body = $2, version = version + 1, updated_ms = $3 "
     "WHERE id = $4 AND team = $5 AND version = $6 RETURNING version"},
    {"confirmation_version", "SELECT version FROM confirmations WHERE id = $1 AND team = $2"},
    {"regression_team_lock",
     "SELECT pg_advisory_xact_lock(hashtext('npuperf-regressions:' || $1))"},
    {"regression_current",
     "SELECT " NPUPERF_PG_REGRESSION_COLUMNS
     " FROM regressions WHERE team = $1 AND operator_name = $2 AND case_id = $3 AND "
     "baseline_label = $4 AND rule = $5 AND ended_ms IS NULL FOR UPDATE"},
    {"regression_by_id",
     "SELECT " NPUPERF_PG_REGRESSION_COLUMNS " FROM regressions WHERE id = $1 AND team = $2"},
    {"regression_by_id_lock", "SELECT " NPUPERF_PG_REGRESSION_COLUMNS
                              " FROM regressions WHERE id = $1 AND team = $2 FOR UPDATE"},
    {"regression_insert",
     "INSERT INTO regressions (team, operator_name, case_id, baseline_label, rule, state, "
     "detected_ms, last_seen_ms, first_round_id, last_round_id, seen_rounds) VALUES ($1, $2, $3, "
     "$4, $5, $6, $7, $8, $9, $10, $11) RETURNING id"},
    {"regression_save",
     "UPDATE regressions SET state = $1, confirmed = $2, last_seen_ms = $3, last_round_id = $4, "
     "seen_rounds = $5, ended_ms = NULLIF($6::bigint, 0) WHERE id = $7"},
    {"regression_transition_insert",
     "INSERT INTO regression_transitions (regression_id, seq, from_state, to_state, actor, note, "
     "at_ms) VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM regression_transitions WHERE "
     "regression_id = $1), $2, $3, $4, $5, $6)"},
    {"regression_transitions",
     "SELECT from_state, to_state, actor, note, at_ms FROM regression_transitions WHERE "
     "regression_id = $1 ORDER BY seq"},
    {"regression_counts",
     "SELECT rule, state, confirmed, COUNT(*)::bigint FROM regressions WHERE ($1 = '' OR team = "
     "$1) GROUP BY rule, state, confirmed ORDER BY rule COLLATE \"C\", state, confirmed"},
    // Bisections (migration 0019). The insert skips a key the team has
    // started already (the unique index decides, atomically); the lists name
    // the unfinished states as literals (the partial index); the update is a
    // compare-and-set on version.
    {"bisection_insert",
     "INSERT INTO bisections (team, idempotency_key, state, regression_id, body, version, "
     "created_ms, updated_ms) VALUES ($1, $2, $3, $4, $5, 1, $6, $6) ON CONFLICT (team, "
     "idempotency_key) DO NOTHING RETURNING id"},
    {"bisection_of_key", "SELECT " NPUPERF_PG_BISECTION_COLUMNS
                         " FROM bisections WHERE team = $1 AND idempotency_key = $2"},
    {"bisection_get", "SELECT " NPUPERF_PG_BISECTION_COLUMNS
                      " FROM bisections WHERE id = $1 AND ($2::text = '' OR team = $2)"},
    {"bisection_list_unfinished",
     "SELECT " NPUPERF_PG_BISECTION_COLUMNS
     " FROM bisections WHERE state IN (1, 2, 3) AND ($1::text = '' OR team = $1) ORDER BY id "
     "DESC LIMIT $2"},
    {"bisection_list_all", "SELECT " NPUPERF_PG_BISECTION_COLUMNS
                           " FROM bisections WHERE ($1::text = '' OR team = $1) ORDER BY id "
                           "DESC LIMIT $2"},
    {"bisection_update",
     "UPDATE bisections SET state = $1, regression_id = $2, body = $3, version = version + 1, "
     "updated_ms = $4 WHERE id = $5 AND team = $6 AND version = $7 RETURNING version, "
     "idempotency_key"},
    {"bisection_version", "SELECT version FROM bisections WHERE id = $1 AND team = $2"},
    // Calibrations and their noise (migration 0016). Finishing locks the
    // row (FOR UPDATE) and compares its state: the compare-and-set.
    {"calibration_insert",
     "INSERT INTO calibrations (team, source_collection_id, runs, state, created_ms) VALUES ($1, "
     "$2, $3, 1, $4) RETURNING id"},
    {"calibration_by_id",
     "SELECT " NPUPERF_PG_CALIBRATION_COLUMNS " FROM calibrations WHERE id = $1 AND team = $2"},
    {"calibration_by_id_lock", "SELECT " NPUPERF_PG_CALIBRATION_COLUMNS
                               " FROM calibrations WHERE id = $1 AND team = $2 FOR UPDATE"},
    {"calibration_collections",
     "SELECT e.value FROM calibrations c, jsonb_array_elements_text(c.collection_ids) WITH "
     "ORDINALITY e(value, n) WHERE c.id = $1 ORDER BY e.n"},
    {"calibration_running", "SELECT " NPUPERF_PG_CALIBRATION_COLUMNS
                            " FROM calibrations WHERE state = 1 ORDER BY id LIMIT $1"},
    {"calibration_finish",
     "UPDATE calibrations SET state = $1, reason = $2, collection_ids = $3::jsonb, finished_ms = "
     "$4 WHERE id = $5 AND state = 1"},
    {"noise_insert",
     "INSERT INTO noise_spreads (team, soc, mode, operator_name, case_id, family, spread, rounds, "
     "threshold, far, calibration_id, measured_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
     "$10, $11, $12)"},
    {"noise_of_calibration",
     "SELECT " NPUPERF_PG_NOISE_COLUMNS
     " FROM noise_spreads WHERE calibration_id = $1 ORDER BY operator_name COLLATE \"C\", case_id "
     "COLLATE \"C\", soc COLLATE \"C\", mode COLLATE \"C\", family COLLATE \"C\""},
    {"noise_list", NPUPERF_PG_NEWEST_NOISE("($2 = '' OR operator_name = $2)") " LIMIT $3"},
    {"noise_of_cases", NPUPERF_PG_NEWEST_NOISE("operator_name || '/' || case_id IN (SELECT "
                                               "jsonb_array_elements_text($2::jsonb))")},
};

}  // namespace

std::span<const PgStatement> HistoryStatements() { return kHistoryStatements; }

}  // namespace npuperf::server
