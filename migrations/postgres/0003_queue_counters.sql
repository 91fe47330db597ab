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

-- npuperf_claim() (2. above): its one definition is migrations/postgres/definitions/npuperf_claim.sql,
-- run after the migrations.
