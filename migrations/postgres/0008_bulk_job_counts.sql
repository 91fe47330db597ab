-- Bulk job writes count once per statement, not once per row.
--
-- 0003's row trigger updates the collection's collection_queue row for every job it inserts or
-- moves. Inside one transaction each of those updates leaves a new version of the same row that
-- no one can prune yet, and the next update walks them all: inserting or cancelling a collection
-- of n jobs cost O(n^2) (100,000 jobs: 128 s to submit, 89 s to cancel). A transaction that sets
-- `npuperf.bulk_counts` to 'on' (SET LOCAL, so it ends with the transaction) takes the counting
-- on itself: the trigger skips its rows, and the writer applies one aggregated change to
-- collection_queue before it commits (PostgresStore: InsertCollection and CancelCollection).
-- Every other writer (claims, results, expiry) is unchanged.
CREATE OR REPLACE FUNCTION npuperf_job_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  dq integer := 0;
  dl integer := 0;
  row_id text;
  q integer;
  l integer;
BEGIN
  IF current_setting('npuperf.bulk_counts', true) = 'on' THEN
    RETURN NULL;
  END IF;
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
