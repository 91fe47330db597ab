-- npuperf_claim(): the claim rule, defined once. This file is not a versioned migration: every
-- `migrate` (each server start) runs it after the pending migrations, in the same transaction
-- under the migration lock, so every database has exactly this definition. Change the rule here;
-- a change of its signature also adds a DROP FUNCTION IF EXISTS of the old one below (a caller of
-- the old signature must fail, never lease without a secret).
--
-- History (the migrations that shaped it): 0003 made the claim one call (lock the collection's
-- row, check the cap against collection_queue's fresh count, lease the oldest queued job); 0004
-- added the lease secret's hash (p_secret_sha256); 0009 records when the attempt was leased
-- (leased_ms) for history-aware placement.
--
-- Leases the oldest queued job of collection p_collection on (p_agent, p_device) when the
-- collection is neither cancelled nor at its cap. Returns the lease, or one row with only
-- `outcome` set, saying why not: 'locked' (p_skip_locked and another claim holds the
-- collection), 'cancelled', 'capped' or 'drained'. A second live lease of one device fails with
-- the unique violation of jobs_one_lease_per_device (the caller reruns the claim). The lease keeps
-- p_secret_sha256, the sha256 of its secret.
DROP FUNCTION IF EXISTS npuperf_claim(text, boolean, text, text, integer, text, bigint, bigint,
                                      integer);
CREATE OR REPLACE FUNCTION npuperf_claim(p_collection text, p_skip_locked boolean, p_agent text, p_host text,
                              p_device integer, p_soc text, p_expires_ms bigint, p_now_ms bigint,
                              p_running_state integer, p_secret_sha256 text)
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
      lease_expires_ms = p_expires_ms, started_ms = COALESCE(started_ms, p_now_ms), leased_ms = p_now_ms,
      progress = NULL, lease_secret_sha256 = p_secret_sha256
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
