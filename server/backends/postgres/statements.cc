#include "server/backends/postgres/statements.h"

#include "server/backends/postgres/statements_sql.h"
#include "server/core/job_state.h"

namespace npuperf::server {
namespace {

// The queue's statements: tokens, bundles, collections, device health
// (quarantines, canaries), agents, claims, leases and progress, results,
// placement history and gauges.
constexpr PgStatement kQueueStatements[] = {
    // Tokens and bundles.
    {"token_lookup", "SELECT kind, name FROM tokens WHERE hash = $1"},
    {"token_insert", "INSERT INTO tokens (hash, kind, name, created_ms) VALUES ($1, $2, $3, $4)"},
    {"token_count", "SELECT COUNT(*) FROM tokens"},
    {"ui_session_insert",
     "INSERT INTO ui_sessions (id_sha256, team, created_ms, expires_ms) VALUES ($1, $2, $3, $4)"},
    {"ui_session_lookup", "SELECT team, expires_ms FROM ui_sessions WHERE id_sha256 = $1"},
    {"ui_session_delete", "DELETE FROM ui_sessions WHERE id_sha256 = $1"},
    {"ui_session_sweep", "DELETE FROM ui_sessions WHERE expires_ms <= $1"},
    // Bundles (migration 0006): content in chunks, ownership per team. A
    // team's uploads are serialized by an advisory lock on its name, so its
    // quota check sees every earlier upload of the team.
    {"bundle_team_lock", "SELECT pg_advisory_xact_lock(hashtext('npuperf-bundles:' || $1))"},
    {"bundle_touch", "UPDATE bundle_owners SET used_ms = $3 WHERE team = $1 AND sha256 = $2"},
    {"bundle_team_bytes",
     "SELECT COALESCE(SUM(b.size_bytes), 0)::bigint FROM bundle_owners o JOIN bundles b ON "
     "b.sha256 = o.sha256 WHERE o.team = $1"},
    // Locks the bundle's row (inserting it when new): the collector deletes
    // a content only under that lock. True when the row is new.
    {"bundle_upsert",
     "INSERT INTO bundles (sha256, team, name, size_bytes, created_ms) VALUES ($1, $2, $3, $4, $5) "
     "ON CONFLICT (sha256) DO UPDATE SET sha256 = EXCLUDED.sha256 RETURNING (xmax = 0)"},
    {"bundle_chunk_insert", "INSERT INTO bundle_chunks (sha256, seq, data) VALUES ($1, $2, $3)"},
    {"bundle_owner_insert",
     "INSERT INTO bundle_owners (team, sha256, name, used_ms) VALUES ($1, $2, $3, $4)"},
    {"bundle_chunk_get", "SELECT data FROM bundle_chunks WHERE sha256 = $1 AND seq = $2"},
    {"bundle_of_job",
     "SELECT j.state, COALESCE(j.agent_id, ''), j.operator_name, c.team, c.spec FROM jobs j JOIN "
     "collections c ON c.id = j.collection_id WHERE j.id = $1"},
    {"bundle_owned_info",
     "SELECT b.size_bytes, (SELECT COUNT(*) FROM bundle_chunks k WHERE k.sha256 = b.sha256)::int "
     "FROM bundles b JOIN bundle_owners o ON o.sha256 = b.sha256 WHERE b.sha256 = $1 AND "
     "o.team = $2"},
    // The collector: ownerships unused since $1; the specs of collections
    // with queued or live jobs and of pinned baselines (their bundles stay);
    // an ownership dropped only when still unused (a submission may have
    // used it meanwhile); a content deleted under its row lock when nobody
    // owns it in a fresh snapshot.
    {"bundle_gc_stale", "SELECT team, sha256 FROM bundle_owners WHERE used_ms < $1"},
    {"bundle_gc_in_use",
     "SELECT team, spec FROM collections WHERE state IN (1, 2) OR id IN (SELECT collection_id "
     "FROM baselines WHERE collection_id IS NOT NULL) OR id IN (SELECT r.collection_id FROM "
     "baselines b JOIN rounds r ON r.id = b.round_id)"},
    {"bundle_gc_drop",
     "DELETE FROM bundle_owners WHERE team = $1 AND sha256 = $2 AND used_ms < $3"},
    {"bundle_gc_lock", "SELECT size_bytes FROM bundles WHERE sha256 = $1 FOR UPDATE"},
    {"bundle_gc_owned", "SELECT 1 FROM bundle_owners WHERE sha256 = $1 LIMIT 1"},
    {"bundle_gc_delete", "DELETE FROM bundles WHERE sha256 = $1"},
    // Collections.
    {"collection_insert",
     "INSERT INTO collections (id, team, spec, state, priority, max_concurrent, idempotency_key, "
     "created_ms) VALUES ($1, $2, $3, $4, $5, $6, NULLIF($7::text, ''), $8) "
     "ON CONFLICT (team, idempotency_key) DO NOTHING RETURNING id"},
    {"collection_by_key", "SELECT id FROM collections WHERE team = $1 AND idempotency_key = $2"},
    {"label_insert",
     "INSERT INTO collection_labels (collection_id, key, value) VALUES ($1, $2, $3)"},
    // The counts of a collection whose jobs were inserted with bulk counting on
    // (migration 0008): its queued jobs, its first job the queue order.
    {"collection_queue_insert",
     "INSERT INTO collection_queue (collection_id, team, priority, first_job, queued, live) "
     "SELECT collection_id, MIN(team), MIN(priority), MIN(id), COUNT(*), 0 FROM jobs "
     "WHERE collection_id = $1 AND state = 1 GROUP BY collection_id"},
    {"collection_queue_unqueue",
     "UPDATE collection_queue SET queued = queued - $1 WHERE collection_id = $2"},
    {"collection_queue_drop_idle",
     "DELETE FROM collection_queue WHERE collection_id = $1 AND queued = 0 AND live = 0"},
    {"event_insert",
     "INSERT INTO events (at_ms, collection_id, job_id, kind, detail) VALUES ($1, $2, $3, $4, $5)"},
    {"collection_get", "SELECT " NPUPERF_PG_COLLECTION_COLUMNS " FROM collections WHERE id = $1"},
    {"collection_get_without_spec",
     "SELECT " NPUPERF_PG_COLLECTION_COLUMNS_WITHOUT_SPEC " FROM collections WHERE id = $1"},
    {"collection_jobs",
     "SELECT " NPUPERF_PG_JOB_COLUMNS " FROM jobs WHERE collection_id = $1 ORDER BY id"},
    {"collection_jobs_page",
     "SELECT " NPUPERF_PG_JOB_COLUMNS " FROM jobs WHERE collection_id = $1 AND id > $2 "
     "ORDER BY id LIMIT $3"},
    // Submissions of one team queue on this lock, so that the queued-jobs
    // quota counts every earlier submission of the team.
    {"team_submit_lock", "SELECT pg_advisory_xact_lock(1853190002, hashtext($1))"},
    {"team_queued_jobs",
     "SELECT COALESCE(SUM(queued), 0)::bigint FROM collection_queue "
     "WHERE team = $1"},
    {"queued_by_collection",
     "SELECT q.collection_id, q.queued, (SELECT j.queued_ms FROM jobs j WHERE j.collection_id = "
     "q.collection_id AND j.state = 1 ORDER BY j.id LIMIT 1) FROM collection_queue q "
     "WHERE q.queued > 0 ORDER BY q.first_job LIMIT $1"},
    {"collection_list",
     "SELECT c.id FROM collections c WHERE c.team = $1 AND ($2::bigint = 0 OR c.created_ms < $2 "
     "OR (c.created_ms = $2 AND c.id COLLATE \"C\" < $3)) AND" NPUPERF_PG_HAS_LABELS(
         "$4", "c.id") " AND (cardinality($5::int[]) = 0 OR c.state = ANY ($5::int[])) "
                       "ORDER BY c.created_ms DESC, c.id COLLATE \"C\" DESC LIMIT $6"},
    {"collection_lock", "SELECT team, cancel_reason FROM collections WHERE id = $1 FOR UPDATE"},
    {"collection_lock_skip",
     "SELECT team, cancel_reason FROM collections WHERE id = $1 FOR UPDATE SKIP LOCKED"},
    {"collection_mark_cancel", "UPDATE collections SET cancel_reason = $1 WHERE id = $2"},
    {"collection_cancel_queued",
     "UPDATE jobs SET state = 6, reason = $1, finished_ms = $2 WHERE collection_id = $3 AND "
     "state = 1"},
    {"collection_live_jobs",
     "SELECT id, agent_id, fencing_token FROM jobs WHERE collection_id = $1 AND state "
     "IN " NPUPERF_PG_LIVE " ORDER BY id"},
    // A collection's jobs by state. The queued ones come from its
    // collection_queue row (kept in the same transaction as every job change,
    // migration 0003; no row: none queued), the rest from a range of
    // jobs_by_collection_state (issue 36: a page of a freshly submitted
    // 100,000-job collection counted 100,000 index entries, about 21 ms,
    // where nothing has left the queue yet). One statement, one snapshot.
    {"collection_counts",
     "SELECT state, COUNT(*) FROM jobs WHERE collection_id = $1 AND state > 1 GROUP BY state "
     "UNION ALL SELECT 1, queued::bigint FROM collection_queue WHERE collection_id = $1 AND "
     "queued > 0"},
    {"collection_set_state",
     "UPDATE collections SET state = $1, finished_ms = CASE WHEN $2::boolean THEN "
     "COALESCE(finished_ms, $3::bigint) ELSE NULL END WHERE id = $4"},
    // Device quarantine (migration 0017): at most one current row per device
    // (the partial unique index decides, so two replicas quarantining one
    // device at once insert it once).
    {"quarantine_insert",
     "INSERT INTO device_quarantines (host, device_id, soc, reason, source, since_ms, "
     "suspect_since_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (host, device_id) WHERE "
     "released_ms IS NULL DO NOTHING RETURNING id"},
    {"quarantine_current",
     "SELECT " NPUPERF_PG_QUARANTINE_COLUMNS
     " FROM device_quarantines WHERE host = $1 AND device_id = $2 AND released_ms IS NULL"},
    {"quarantine_release",
     "UPDATE device_quarantines SET released_ms = $3, released_by = $4, release_note = $5 WHERE "
     "host = $1 AND device_id = $2 AND released_ms IS NULL "
     "RETURNING " NPUPERF_PG_QUARANTINE_COLUMNS},
    {"quarantine_list",
     "SELECT " NPUPERF_PG_QUARANTINE_COLUMNS
     " FROM device_quarantines WHERE ($1 OR released_ms IS NULL) ORDER BY id DESC LIMIT $2"},
    // A device's canary quarantines, current and released (migration 0020;
    // Store::CanaryQuarantinesOf bounds them at 100).
    {"quarantine_canary_of",
     "SELECT " NPUPERF_PG_QUARANTINE_COLUMNS
     " FROM device_quarantines WHERE host = $1 AND device_id = $2 AND source = 'canary' ORDER BY "
     "id DESC LIMIT 100"},
    // Device canaries (migration 0020): at most one per (host, device_id,
    // slot), the unique index deciding, so two replicas scheduling one
    // device's tick at once insert it once; every update is a compare-and-set
    // on version. $1..$15 are the columns in NPUPERF_PG_CANARY_COLUMNS' order
    // without id and version.
    {"canary_insert",
     "INSERT INTO canaries (host, device_id, soc, slot, state, collection_id, round_id, kernel_us, "
     "reference, reference_us, excess_pct, threshold_pct, reason, created_ms, finished_ms, "
     "version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 1) ON "
     "CONFLICT (host, device_id, slot) DO NOTHING RETURNING id"},
    {"canary_of_slot", "SELECT " NPUPERF_PG_CANARY_COLUMNS
                       " FROM canaries WHERE host = $1 AND device_id = $2 AND slot = $3"},
    {"canary_update",
     "UPDATE canaries SET host = $1, device_id = $2, soc = $3, slot = $4, state = $5, "
     "collection_id = $6, round_id = $7, kernel_us = $8, reference = $9, reference_us = $10, "
     "excess_pct = $11, threshold_pct = $12, reason = $13, created_ms = $14, finished_ms = $15, "
     "version = version + 1 WHERE id = $16 AND version = $17 RETURNING version"},
    {"canary_version", "SELECT version FROM canaries WHERE id = $1"},
    // The state as a literal, so that the partial index canaries_pending
    // serves the pending listing.
    {"canary_list_pending", NPUPERF_PG_CANARY_LIST("state = 'pending' AND")},
    {"canary_list_finished", NPUPERF_PG_CANARY_LIST("state <> 'pending' AND")},
    {"canary_list_any", NPUPERF_PG_CANARY_LIST("")},
    // Agents and devices.
    {"agent_mark_lost",
     "UPDATE agents SET state = 'lost' WHERE host = $1 AND boot_id = $2 AND slot = $3 AND id <> "
     "$4"},
    {"agent_upsert",
     "INSERT INTO agents (id, host, boot_id, instance_id, version, info, state, registered_ms, "
     "last_seen_ms, slot) VALUES ($1, $2, $3, $4, $5, $6, 'online', $7, $7, $8) ON CONFLICT (id) "
     "DO UPDATE "
     "SET info = excluded.info, state = 'online', last_seen_ms = excluded.last_seen_ms"},
    {"devices_drop", "DELETE FROM devices WHERE agent_id = $1"},
    {"device_insert",
     "INSERT INTO devices (agent_id, device_id, soc, state) VALUES ($1, $2, $3, $4)"},
    // A heartbeat in one statement: the agent seen at $1 and the states of
    // its registered devices ($3: a JSON array of {"device_id", "state"}),
    // written only where they changed; the count of agents found (0: unknown).
    {"heartbeat_seen",
     "WITH a AS (UPDATE agents SET last_seen_ms = $1, state = 'online' WHERE id = $2 RETURNING "
     "id), d AS (UPDATE devices SET state = x.state FROM a, jsonb_to_recordset($3::jsonb) AS "
     "x(device_id integer, state integer) WHERE devices.agent_id = a.id AND devices.device_id = "
     "x.device_id AND devices.state <> x.state RETURNING 1) SELECT (SELECT COUNT(*) FROM a)::int, "
     "(SELECT COUNT(*) FROM d)::int"},
    {"agents_list",
     "SELECT id, host, version, state, last_seen_ms, info FROM agents ORDER BY host COLLATE \"C\", "
     "registered_ms"},
    // Every agent's devices, each with its live job if any (at most one:
    // jobs_one_lease_per_device), in one statement: a statement per agent
    // was 250 a metrics refresh in fleet_bench, 2,500 at 10,000 devices.
    {"agents_devices",
     "SELECT d.device_id, d.soc, d.state, j.id, j.team, d.agent_id FROM devices d LEFT JOIN jobs "
     "j ON j.agent_id = d.agent_id AND j.device_id = d.device_id AND j.state IN " NPUPERF_PG_LIVE
     " ORDER BY d.agent_id, d.device_id"},
    {"agent_info", "SELECT info FROM agents WHERE id = $1 AND state = 'online'"},
    {"agent_host", "SELECT host FROM agents WHERE id = $1"},
    // Agents last seen before $1 without a live lease, oldest first, $2 at most.
    {"agents_prunable",
     "SELECT a.id FROM agents a WHERE a.last_seen_ms < $1 AND NOT EXISTS (SELECT 1 FROM jobs j "
     "WHERE j.agent_id = a.id AND j.state IN " NPUPERF_PG_LIVE
     ") ORDER BY a.last_seen_ms LIMIT $2 FOR UPDATE SKIP LOCKED"},
    {"agent_delete", "DELETE FROM agents WHERE id = $1"},
    // Claims (migration 0003 keeps the counts and defines npuperf_claim).
    // The agent's busy devices (comma-separated; a device with a live lease
    // is not free, whatever the agent believes) and every active collection
    // (collection_queue): its first queued job, priority, live and queued
    // jobs, in no order. Always one row at least (none active: NULL
    // collection columns). The queue order and each team's live jobs are
    // LoadClaimView's (claims.cc): a window and two sorts here were half of
    // the statement (issue 36).
    {"claim_heads",
     "WITH busy AS (SELECT string_agg(device_id::text, ',') AS d FROM jobs WHERE (agent_id = $1 OR "
     "($2 <> '' AND host = $2)) AND state IN " NPUPERF_PG_LIVE
     ") SELECT busy.d, h.first_job, h.collection_id, h.team, h.priority, h.live, h.queued FROM "
     "busy LEFT JOIN collection_queue h ON true"},
    // Specs of collections (a JSON array of ids) the claim has not cached.
    {"claim_specs",
     "SELECT id, spec FROM collections WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb))"},
    // A claim of one job: the first of the chooser's picks ($1, a JSON array
    // of {"coll", "device", "soc"}) that leases; $2: whether the first pick
    // waits for its collection's lock; $8: the sha256 of the lease's secret.
    {"claim_take_first", "SELECT * FROM npuperf_claim_first($1, $2, $3, $4, $5, $6, $7, $8)"},
    // Several leases of one claim in one statement (issue 36), in plan order:
    // $1 is a JSON array of {"n", "coll", "device", "soc", "secret"}; each row
    // is n and what npuperf_claim() returned for it. A collection another
    // claim holds is skipped, never waited for (its outcome is 'locked'):
    // this statement holds the locks of its earlier leases until it ends.
    {"claim_take_many",
     "SELECT p.n, t.* FROM (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(n integer, coll "
     "text, device integer, soc text, secret text) ORDER BY n) p CROSS JOIN LATERAL "
     "npuperf_claim(p.coll, true, $2, $3, p.device, p.soc, $4, $5, $6, p.secret) t ORDER BY p.n"},
    // Leases and progress. Each write names the lease it may touch: job,
    // fencing token, attempt, holder and the sha256 of the presented secret
    // (NPUPERF_PG_SECRET); when it matches no row, lease_facts says why
    // (core/job_rules.h CheckLease).
    {"lease_facts",
     "SELECT state, attempt, fencing_token, agent_id, host, lease_expires_ms, lease_secret_sha256 "
     "FROM jobs WHERE id = $1"},
    // Every lease a heartbeat names in one statement ($3: a JSON array of
    // distinct {"id", "token", "attempt", "secret"}, secret the sha256 of
    // the presented one): a row per named lease, with the reference that
    // named it, whether it is held (the conditions of every lease write) and
    // then whether its collection was cancelled, or else lease_facts'
    // columns of its job (NULL: no such job), to say why not (issue 36: a
    // lookup per refused lease was 0.37 statements a job in fleet_bench, the
    // heartbeat that races a result). Of the held ones, only those expiring
    // before $4 (core/job_rules.h LeaseRenewalDue) are rewritten to expire
    // at $1, under the same conditions. The job of a refused lease is read
    // by a LATERAL ... LIMIT 1, which PostgreSQL cannot flatten into a join:
    // flattened, it hashed every row of jobs for the few it needed (3 ms a
    // heartbeat with 10,000 jobs stored, against 0.3 ms by primary key).
    {"lease_renew_all",
     "WITH r AS (SELECT * FROM jsonb_to_recordset($3::jsonb) AS x(id bigint, token bigint, "
     "attempt integer, secret text)), h AS (SELECT j.id, r.token, r.attempt, r.secret, "
     "j.collection_id, j.lease_expires_ms FROM jobs j JOIN r ON j.id = r.id AND j.fencing_token = "
     "r.token AND j.attempt = r.attempt AND j.agent_id = $2 AND j.state IN " NPUPERF_PG_LIVE
     " AND (j.lease_secret_sha256 IS NULL OR j.lease_secret_sha256 = r.secret)), u AS (UPDATE "
     "jobs j SET lease_expires_ms = $1 FROM h WHERE j.id = h.id AND h.lease_expires_ms < $4 AND "
     "j.fencing_token = h.token AND j.agent_id = $2 AND j.state IN " NPUPERF_PG_LIVE
     ") SELECT r.id, r.token, r.attempt, r.secret, h.id IS NOT NULL, c.cancel_reason <> '', "
     "j.id IS NOT NULL, j.state, j.attempt, j.fencing_token, j.agent_id, j.host, "
     "j.lease_expires_ms, j.lease_secret_sha256 FROM r LEFT JOIN h ON h.id = r.id AND h.token = "
     "r.token AND h.attempt = r.attempt AND h.secret = r.secret LEFT JOIN collections c ON c.id = "
     "h.collection_id LEFT JOIN LATERAL (SELECT * FROM jobs WHERE jobs.id = r.id AND h.id IS NULL "
     "LIMIT 1) j ON true"},
    {"lease_adopt",
     "UPDATE jobs SET agent_id = $1, lease_expires_ms = $2 WHERE id = $3 AND fencing_token = $4 "
     "AND attempt = $5 AND state IN " NPUPERF_PG_LIVE
     " AND lease_expires_ms >= $6 AND " NPUPERF_PG_SECRET(
         "$7") " AND host = (SELECT host FROM agents WHERE id = $1)"},
    // A progress report of a job whose collection is stored RUNNING, in one
    // statement and without the collection's row lock (issue 36): the report
    // moves a live job to RUNNING, which leaves such a collection RUNNING
    // (core/job_state.h ProgressNeedsCollectionRefresh), and it reads the
    // cancel request as committed (joining collections locks no row of it).
    // No row: not this case (another state, a refused lease, an unknown job);
    // the caller takes the locked path. $1-$8 as progress_record's below; $9
    // is COLLECTION_STATE_RUNNING.
    {"progress_running",
     "WITH p AS (" NPUPERF_PG_PROGRESS_SET " FROM collections c WHERE " NPUPERF_PG_PROGRESS_LEASE
     " AND c.id = jobs.collection_id AND c.state = $9 RETURNING c.cancel_reason), n AS (SELECT "
     "pg_notify('npuperf_updates', $6) FROM p) SELECT p.cancel_reason FROM p, n"},
    // The progress reports a heartbeat carries (issue 36), each written as
    // progress_running writes one: $1 the reports as JSON (id, token,
    // attempt, secret: the sha256 hex, progress: the serialized JobProgress in
    // hex), $2 the new lease expiry, $3 the agent, $4 COLLECTION_STATE_RUNNING,
    // $5 our replica id (one notification however many rows). A row per
    // report whose lease is held: whether its collection was cancelled, and
    // whether it was written (not when its collection is not stored as
    // RUNNING, or a result overtook it: the caller's locked path decides). No
    // row: refused (RenewLeases says why), nothing written.
    {"progress_many",
     "WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, token bigint, "
     "attempt integer, secret text, progress text)), h AS (SELECT j.id, r.token, r.attempt, "
     "r.secret, r.progress, c.state = $4 AS running, c.cancel_reason <> '' AS cancelled FROM jobs "
     "j JOIN r ON j.id = r.id AND j.fencing_token = r.token AND j.attempt = r.attempt AND "
     "j.agent_id = $3 AND j.state IN " NPUPERF_PG_LIVE
     " AND (j.lease_secret_sha256 IS NULL OR j.lease_secret_sha256 = r.secret) JOIN collections c "
     "ON c.id = j.collection_id), p AS (UPDATE jobs SET state = 3, progress = decode(h.progress, "
     "'hex'), lease_expires_ms = $2 FROM h WHERE h.running AND jobs.id = h.id AND "
     "jobs.fencing_token = h.token AND jobs.attempt = h.attempt AND jobs.agent_id = $3 AND "
     "jobs.state IN " NPUPERF_PG_LIVE
     " AND (jobs.lease_secret_sha256 IS NULL OR jobs.lease_secret_sha256 = h.secret) RETURNING "
     "jobs.id), n AS (SELECT pg_notify('npuperf_updates', $5) FROM (SELECT 1 FROM p LIMIT 1) "
     "one) SELECT h.id, h.cancelled, EXISTS (SELECT 1 FROM p WHERE p.id = h.id) FROM h, (SELECT "
     "count(*) FROM n) k"},
    // The progress and the wake-up of other replicas' watchers ($6 is our
    // replica id); no row (and no notification) unless it is the lease of
    // agent $7 with the secret whose sha256 is $8.
    {"progress_record",
     "WITH p AS (" NPUPERF_PG_PROGRESS_SET " WHERE " NPUPERF_PG_PROGRESS_LEASE
     " RETURNING jobs.collection_id), n AS (SELECT pg_notify('npuperf_updates', $6) FROM p) "
     "SELECT p.collection_id FROM p, n"},
    {"lease_expired_collections",
     "SELECT DISTINCT collection_id FROM jobs WHERE state IN " NPUPERF_PG_LIVE
     " AND lease_expires_ms < $1 ORDER BY collection_id"},
    {"lease_expired",
     "SELECT id, agent_id, attempt, lost_count FROM jobs WHERE collection_id = $1 AND state "
     "IN " NPUPERF_PG_LIVE " AND lease_expires_ms < $2 ORDER BY id FOR UPDATE SKIP LOCKED"},
    {"lease_expire_job",
     "UPDATE jobs SET state = $1, reason = $2, lost_count = lost_count + 1, lease_expires_ms = "
     "NULL, finished_ms = NULLIF($3::bigint, 0) WHERE id = $4"},
    // Results.
    {"job_collection_lock",
     "SELECT c.id, c.cancel_reason, c.state FROM collections c WHERE c.id = (SELECT "
     "collection_id FROM jobs WHERE id = $1) FOR UPDATE OF c"},
    // The job locked, and the update $2 if it was applied already (its job
    // and round), and the lease (holder, expiry, secret). No row when the job
    // is unknown. FOR NO KEY UPDATE, the lock every UPDATE of a job takes: it
    // must not wait for the key-share lock that a round stored ahead (below)
    // holds on its job, or a resend racing its own original would deadlock.
    {"result_job_lock",
     "SELECT state, fencing_token, attempt, max_attempts, lost_count, collection_id, "
     "(SELECT u.job_id FROM result_updates u WHERE u.update_uuid = $2), "
     "(SELECT u.round_id FROM result_updates u WHERE u.update_uuid = $2), agent_id, host, "
     "lease_expires_ms, lease_secret_sha256, op_name FROM jobs WHERE id = $1 FOR NO KEY UPDATE"},
    // The candidate table of a succeeded discovery job (job_finish has set its state).
    {"job_discovery_set", "UPDATE jobs SET discovery = $1 WHERE id = $2"},
    {"result_seen", "SELECT job_id, round_id FROM result_updates WHERE update_uuid = $1"},
    // A success's round and figures, stored before any lock is taken; the
    // round's id, NULL when the job's attempt moved on or it has its round
    // (migrations/postgres/definitions/npuperf_round_ahead.sql).
    {"round_insert_ahead", "SELECT npuperf_round_ahead($1, $2, $3, $4, $5, $6, $7::jsonb)"},
    {"round_discard", "DELETE FROM rounds WHERE id = $1"},
    // The job's new state, the applied update (idempotency), the event and
    // the wake-up of other replicas in one statement; whether the collection
    // ($13) has other queued or live jobs
    // (migrations/postgres/definitions/npuperf_job_finish.sql).
    {"job_finish",
     "SELECT npuperf_job_finish($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, "
     "$16)"},
    // The common result (a success on a current lease that leaves its
    // collection RUNNING) in one call: 'applied', or 'general' with nothing
    // written (migrations/postgres/definitions/npuperf_result.sql).
    {"result_one_call",
     "SELECT outcome, round_id, collection_id FROM npuperf_result($1, $2, $3, $4, $5, $6, $7, $8, "
     "$9, $10, $11::jsonb, $12, $13, $14, $15, $16)"},
    // Placement history (migration 0009): the newest $2 device times of each
    // duration key in $1 (a text[] literal of hex keys).
    {"recent_run_times",
     "SELECT duration_key, run_ms FROM (SELECT duration_key, run_ms, ROW_NUMBER() OVER (PARTITION "
     "BY duration_key ORDER BY finished_ms DESC, id DESC) AS n FROM jobs WHERE run_ms IS NOT NULL "
     "AND duration_key = ANY($1::text[])) t WHERE n <= $2 ORDER BY duration_key, n"},
    {"jobs_notify", "SELECT pg_notify('npuperf_jobs', $1)"},
    {"updates_notify", "SELECT pg_notify('npuperf_updates', $1)"},
    // Gauges of /metrics.
    // CountByState (migration 0027), in one statement: the newly finished
    // collections counted (NPUPERF_PG_COUNT_NEWLY_FINISHED; a row with a NULL
    // state says whether it was a full batch), and, in the statement's
    // snapshot from before those writes, the jobs by state of the collections
    // not finished, of the finished ones not counted (those being counted,
    // and those another replica holds), and the counted ones.
    {"count_jobs", NPUPERF_PG_COUNT_NEWLY_FINISHED
     "SELECT NULL::integer, " NPUPERF_PG_COUNT_BATCH_FULL
     " FROM n UNION ALL SELECT state, SUM(n) FROM (SELECT j.state, j.n FROM collections "
     "c" NPUPERF_PG_JOBS_BY_STATE_OF(
         "c") "WHERE c.state NOT IN (3, 4, 5) UNION ALL SELECT "
              "j.state, j.n FROM collections c" NPUPERF_PG_JOBS_BY_STATE_OF(
                  "c") "WHERE c.state IN (3, "
                       "4, 5) AND NOT c.jobs_counted UNION ALL SELECT state, jobs FROM "
                       "finished_job_counts) x "
                       "GROUP BY state"},
    // The same first step alone, after a full batch: whether it was full
    // again (1 or 0).
    {"count_newly_finished",
     NPUPERF_PG_COUNT_NEWLY_FINISHED "SELECT " NPUPERF_PG_COUNT_BATCH_FULL " FROM n"},
    {"count_agents", "SELECT state, COUNT(*) FROM agents GROUP BY state"},
    {"count_devices",
     "SELECT a.state = 'online', d.state, EXISTS (SELECT 1 FROM jobs j WHERE j.agent_id = "
     "d.agent_id AND j.device_id = d.device_id AND j.state IN " NPUPERF_PG_LIVE "), COUNT(*) "
     "FROM devices d JOIN agents a ON a.id = d.agent_id GROUP BY 1, 2, 3"},
};

}  // namespace

std::span<const PgStatement> QueueStatements() { return kQueueStatements; }

void PrepareStatements(pqxx::connection& conn) {
  for (const PgStatement& s : QueueStatements()) conn.prepare(s.name, s.sql);
  for (const PgStatement& s : HistoryStatements()) conn.prepare(s.name, s.sql);
}

void PgAddEvent(pqxx::transaction_base& tx, int64_t now_ms, const std::string& collection_id,
                int64_t job_id, EventKind kind, const std::string& detail) {
  tx.exec_prepared("event_insert", now_ms, collection_id, job_id, EventKindName(kind), detail);
}

std::optional<LeaseFacts> PgLoadLease(pqxx::transaction_base& tx, int64_t job_id) {
  auto r = tx.exec_prepared("lease_facts", job_id);
  if (r.empty()) return std::nullopt;
  return PgLeaseFactsFromRow(r[0], 0);
}

LeaseFacts PgLeaseFactsFromRow(const pqxx::row& row, int at) {
  LeaseFacts f;
  f.state = static_cast<v1::JobState>(row[at].as<int>());
  f.attempt = row[at + 1].as<int>();
  f.fencing_token = row[at + 2].as<int64_t>();
  f.agent_id = row[at + 3].as<std::string>("");
  f.host = row[at + 4].as<std::string>("");
  f.lease_expires_ms = row[at + 5].as<int64_t>(0);
  if (!row[at + 6].is_null()) f.secret_sha256 = row[at + 6].as<std::string>();
  return f;
}

void PgRefreshCollectionState(pqxx::transaction_base& tx, const std::string& collection_id,
                              int64_t now_ms, bool cancelled,
                              std::optional<v1::CollectionState> stored) {
  v1::JobCounts c;
  for (const auto& row : tx.exec_prepared("collection_counts", collection_id)) {
    const auto state = static_cast<v1::JobState>(row[0].as<int>());
    CountJob(state, &c, row[1].as<int>());
  }
  const v1::CollectionState state = DeriveCollectionState(c, cancelled);
  // Unchanged (most results and progress reports): the row already says so,
  // finished_ms included (set with a terminal state, cleared with a live one).
  if (stored == state) return;
  tx.exec_prepared("collection_set_state", static_cast<int>(state), IsTerminal(state), now_ms,
                   collection_id);
}

void PgNotify(pqxx::transaction_base& tx, StoreChange change, const std::string& replica_id) {
  tx.exec_prepared(change == StoreChange::kClaimable ? "jobs_notify" : "updates_notify",
                   replica_id);
}

}  // namespace npuperf::server
