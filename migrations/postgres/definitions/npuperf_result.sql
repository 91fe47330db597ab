-- npuperf_result(): the common result in one call, defined once (like npuperf_claim.sql: run after
-- the migrations on every `migrate`).
--
-- Issue 36: the general path of a result (results.cc, ApplyResult) costs six round trips: BEGIN,
-- the round stored ahead, the collection's and the job's locks, job_finish, COMMIT. Most results
-- are the common case this function applies whole, in one autocommit call: a success (its state
-- p_succeeded_state and reason p_reason decided by the caller: DecideSuccessOfPlainJob,
-- job_rules.h) of a job that is not a discovery job, on the lease the caller names (attempt
-- p_attempt, token p_token, agent p_agent, secret sha256 p_secret_sha256: the checks of
-- CheckLease), in a collection stored as p_running_state that keeps another queued or live job (so
-- it stays RUNNING: ResultKeepsCollectionRunning), for an update p_update not applied before.
--
-- Returns one row. outcome 'applied': the round (round_id) is stored and the job finished exactly
-- as the general path would (npuperf_round_ahead, the same locks in the same order, then
-- npuperf_job_finish with p_detail as the event's detail and p_replica as the notification's
-- payload). outcome 'general': anything else (a resend, a refusal, a discovery job, the
-- collection's last job, a collection not stored RUNNING); nothing was written, and the caller
-- runs the general path, which decides (and answers a refusal or a resend) as before.
CREATE OR REPLACE FUNCTION npuperf_result(p_job bigint, p_attempt integer, p_token bigint,
                                          p_agent text, p_secret_sha256 text, p_update text,
                                          p_kernel_us double precision, p_bound text,
                                          p_evidence bytea, p_now_ms bigint, p_figures jsonb,
                                          p_succeeded_state integer, p_reason text,
                                          p_running_state integer, p_detail text,
                                          p_replica text)
RETURNS TABLE (outcome text, round_id bigint, collection_id text)
LANGUAGE plpgsql AS $$
DECLARE
  coll text;
  r bigint;
  others boolean;
  c record;
  j record;
BEGIN
  -- A hint without locks: the collection's last job (or a job that is not live any more) goes to
  -- the general path before anything is written. Checked again under the locks below.
  SELECT q.collection_id INTO coll FROM jobs q
  JOIN collection_queue cq ON cq.collection_id = q.collection_id
  WHERE q.id = p_job AND q.state IN (2, 3) AND cq.queued + cq.live > 1;
  IF coll IS NOT NULL THEN
    r := npuperf_round_ahead(p_job, p_attempt, p_kernel_us, p_bound, p_evidence, p_now_ms,
                             p_figures);
  END IF;
  IF r IS NULL THEN
    outcome := 'general';
    RETURN NEXT;
    RETURN;
  END IF;
  -- Collection, then job (the lock order of statements.h). Each statement of this function sees
  -- a new snapshot, taken after the locks before it: a lease that expired or a result applied
  -- since the round went in is seen here. (The attempt never changes without the token; it is
  -- checked with it as CheckLease does.)
  SELECT cl.id, cl.state INTO c FROM collections cl WHERE cl.id = coll FOR UPDATE;
  SELECT q.state, q.fencing_token, q.attempt, q.agent_id, q.lease_secret_sha256, q.op_name,
         q.collection_id,
         EXISTS (SELECT 1 FROM result_updates u WHERE u.update_uuid = p_update) AS applied,
         EXISTS (SELECT 1 FROM collection_queue cq WHERE cq.collection_id = q.collection_id
                 AND cq.queued + cq.live > 1) AS others
  INTO j FROM jobs q WHERE q.id = p_job FOR NO KEY UPDATE OF q;
  -- IS NOT TRUE, not NOT: a NULL anywhere (a job without a holder) must refuse, not apply.
  IF NOT FOUND OR (j.state IN (2, 3) AND j.fencing_token = p_token AND j.attempt = p_attempt
                   AND p_agent <> '' AND j.agent_id = p_agent
                   AND (j.lease_secret_sha256 IS NULL OR j.lease_secret_sha256 = p_secret_sha256)
                   AND j.op_name <> '' AND j.collection_id = coll
                   AND c.state = p_running_state AND NOT j.applied AND j.others) IS NOT TRUE THEN
    DELETE FROM rounds WHERE id = r;
    outcome := 'general';
    RETURN NEXT;
    RETURN;
  END IF;
  -- An assignment, not PERFORM: plpgsql evaluates a lone function call without starting an
  -- executor for it.
  others := npuperf_job_finish(p_succeeded_state, p_reason, r, p_kernel_us, p_bound, p_now_ms, 0,
                               p_job, p_update, p_attempt, p_token, p_now_ms, coll, p_detail,
                               p_replica, p_now_ms);
  outcome := 'applied';
  round_id := r;
  collection_id := coll;
  RETURN NEXT;
END $$;
