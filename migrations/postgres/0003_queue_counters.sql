-- Claims in two round trips (PostgreSQL only; SQLite keeps counting per claim).
--
-- 1. collection_queue holds one row per active collection (one with queued or live jobs; LEASED = 2,
--    RUNNING = 3): its queued and live job counts, its team and priority and its first job id (the
--    queue order). A trigger on jobs keeps it in the same transaction as every change of a job's
--    state, so the counts are exact; the row goes when both reach zero. A claim reads its queue
--    heads from this small table instead of regrouping every queued job on every claim. Only its
--    primary key is indexed, so the count updates stay heap-only (no index or collections churn).
-- 2. npuperf_claim(): the claim's second and last round trip. It locks the chosen collection's row,
--    checks its concurrency cap against the fresh count, locks its oldest queued job and leases
--    it, in one call. Every writer of a job's state holds its collection's row lock (claims,
--    results, progress, expiry and cancellation all lock it first), and each statement of a
--    PL/pgSQL function takes a new snapshot under READ COMMITTED, so the count read after the
--    lock includes every claim that held it before.

CREATE TABLE collection_queue (
  collection_id text PRIMARY KEY REFERENCES collections (id),
  team          text NOT NULL,
  priority      integer NOT NULL,
  first_job     bigint NOT NULL,
  queued        integer NOT NULL,
  live          integer NOT NULL
) WITH (fillfactor = 50);

INSERT INTO collection_queue (collection_id, team, priority, first_job, queued, live)
SELECT collection_id, MIN(team), MIN(priority), MIN(id), COUNT(*) FILTER (WHERE state = 1),
       COUNT(*) FILTER (WHERE state IN (2, 3))
FROM jobs GROUP BY collection_id
HAVING COUNT(*) FILTER (WHERE state IN (1, 2, 3)) > 0;

-- A collection's oldest queued job without stepping over its leased and finished ones.
CREATE INDEX jobs_queued_by_collection ON jobs (collection_id, id) WHERE state = 1;

CREATE FUNCTION npuperf_job_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  dq integer := 0;
  dl integer := 0;
  row_id text;
  q integer;
  l integer;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    dq := dq - (OLD.state = 1)::integer;
    dl := dl - (OLD.state IN (2, 3))::integer;
    row_id := OLD.collection_id;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    dq := dq + (NEW.state = 1)::integer;
    dl := dl + (NEW.state IN (2, 3))::integer;
    row_id := NEW.collection_id;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.collection_id <> NEW.collection_id THEN
    RAISE EXCEPTION 'jobs.collection_id never changes (job %)', OLD.id;
  END IF;
  IF dq = 0 AND dl = 0 THEN
    RETURN NULL;
  END IF;
  IF dq > 0 OR dl > 0 THEN
    -- NEW exists here: an insert, or an update into a queued or live state.
    INSERT INTO collection_queue AS cq (collection_id, team, priority, first_job, queued, live)
    VALUES (NEW.collection_id, NEW.team, NEW.priority, NEW.id, dq, dl)
    ON CONFLICT (collection_id) DO UPDATE SET queued = cq.queued + dq, live = cq.live + dl,
      first_job = LEAST(cq.first_job, NEW.id)
    RETURNING cq.queued, cq.live INTO q, l;
  ELSE
    UPDATE collection_queue SET queued = queued + dq, live = live + dl
    WHERE collection_id = row_id RETURNING queued, live INTO q, l;
  END IF;
  IF q = 0 AND l = 0 THEN
    DELETE FROM collection_queue WHERE collection_id = row_id;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER jobs_counts_insert AFTER INSERT ON jobs
  FOR EACH ROW EXECUTE FUNCTION npuperf_job_counts();
-- Lease renewals and progress reports leave the state alone and skip the trigger entirely.
CREATE TRIGGER jobs_counts_update AFTER UPDATE OF state, collection_id ON jobs
  FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state
                     OR OLD.collection_id IS DISTINCT FROM NEW.collection_id)
  EXECUTE FUNCTION npuperf_job_counts();
CREATE TRIGGER jobs_counts_delete AFTER DELETE ON jobs
  FOR EACH ROW EXECUTE FUNCTION npuperf_job_counts();

-- Leases the oldest queued job of collection p_collection on (p_agent, p_device) when the
-- collection is neither cancelled nor at its cap. Returns the lease, or one row with only
-- `outcome` set, saying why not: 'locked' (p_skip_locked and another claim holds the
-- collection), 'cancelled', 'capped' or 'drained'. A second live lease of one device fails with
-- the unique violation of jobs_one_lease_per_device (the caller reruns the claim).
CREATE FUNCTION npuperf_claim(p_collection text, p_skip_locked boolean, p_agent text, p_host text,
                              p_device integer, p_soc text, p_expires_ms bigint, p_now_ms bigint,
                              p_running_state integer)
RETURNS TABLE (outcome text, job_id bigint, attempt integer, max_attempts integer,
               fencing_token bigint, op_name text, case_id text, operator_name text,
               queued_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
  live_now integer;
  j bigint;
BEGIN
  IF p_skip_locked THEN
    SELECT cancel_reason, max_concurrent INTO c FROM collections
    WHERE id = p_collection FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      -- Gone, or held by another claim: either way not now.
      outcome := 'locked';
      RETURN NEXT;
      RETURN;
    END IF;
  ELSE
    SELECT cancel_reason, max_concurrent INTO c FROM collections
    WHERE id = p_collection FOR UPDATE;
  END IF;
  IF NOT FOUND OR c.cancel_reason <> '' THEN
    outcome := 'cancelled';
    RETURN NEXT;
    RETURN;
  END IF;
  -- A new snapshot, taken after the lock: no other writer can be changing this count now.
  SELECT COALESCE((SELECT cq.live FROM collection_queue cq WHERE cq.collection_id = p_collection),
                  0) INTO live_now;
  IF live_now >= c.max_concurrent THEN
    outcome := 'capped';
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT q.id INTO j FROM jobs q WHERE q.collection_id = p_collection AND q.state = 1
  ORDER BY q.id LIMIT 1 FOR UPDATE SKIP LOCKED;
  IF j IS NULL THEN
    outcome := 'drained';
    RETURN NEXT;
    RETURN;
  END IF;
  RETURN QUERY
  WITH l AS (
    UPDATE jobs SET state = 2, attempt = jobs.attempt + 1, fencing_token = jobs.fencing_token + 1,
      agent_id = p_agent, host = p_host, device_id = p_device, soc = p_soc,
      lease_expires_ms = p_expires_ms, started_ms = COALESCE(started_ms, p_now_ms), progress = NULL
    WHERE id = j AND state = 1
    RETURNING jobs.id, jobs.attempt, jobs.max_attempts, jobs.fencing_token, jobs.op_name,
      jobs.case_id, jobs.operator_name, jobs.queued_ms),
  e AS (
    INSERT INTO events (at_ms, collection_id, job_id, kind, detail)
    SELECT p_now_ms, p_collection, l.id, 'job_leased', 'attempt ' || l.attempt || ' token ' ||
      l.fencing_token || ' on ' || p_host || ' device ' || p_device FROM l)
  SELECT 'leased'::text, l.id, l.attempt, l.max_attempts, l.fencing_token, l.op_name, l.case_id,
    l.operator_name, l.queued_ms FROM l;
  -- A lease leaves one job live, so the collection is RUNNING (DeriveCollectionState).
  UPDATE collections SET state = p_running_state, finished_ms = NULL
  WHERE id = p_collection AND (state <> p_running_state OR finished_ms IS NOT NULL);
END $$;
