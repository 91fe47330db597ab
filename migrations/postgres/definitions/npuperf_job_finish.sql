-- npuperf_job_finish(): a result's writes, defined once (like npuperf_claim.sql: run after the
-- migrations on every `migrate`). Callers: the job_finish statement (the result's general path,
-- results.cc, which decides p_state and p_reason with DecideResult) and npuperf_result().
--
-- REQUIRES: the caller holds the job's collection row lock (FOR UPDATE) and the job's (FOR NO KEY
-- UPDATE), and checked the lease.
--
-- In one statement: the job's new state p_state with its reason, round (p_round, 0 for none) and
-- times (p_finished_ms, 0 for none; p_run_end_ms, the time of a success, 0 for none: run_ms,
-- migration 0009); the applied update p_update (idempotency); the 'job_result' event p_detail; and
-- the wake-up of other replicas (its device is free, or the job is queued again; p_replica is our
-- replica id). Returns whether the collection p_collection has other queued or live jobs
-- (ResultKeepsCollectionRunning), from its collection_queue row as it was before this statement
-- (the trigger's update of it for this job is not visible here): the job was live then, so others
-- remain when more than one was counted. Under the collection's row lock, which every path that
-- ends or removes a job of it takes, that count is current (a claim moves a job from queued to
-- live, and keeps the sum); it saves a separate read after the update (issue 36).
CREATE OR REPLACE FUNCTION npuperf_job_finish(p_state integer, p_reason text, p_round bigint,
                                              p_kernel_us double precision, p_bound text,
                                              p_finished_ms bigint, p_lost integer, p_job bigint,
                                              p_update text, p_attempt integer, p_token bigint,
                                              p_now_ms bigint, p_collection text, p_detail text,
                                              p_replica text, p_run_end_ms bigint)
RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  others boolean;
BEGIN
  WITH f AS (
    UPDATE jobs SET state = p_state, reason = p_reason, round_id = NULLIF(p_round, 0),
      kernel_time_us = CASE WHEN p_round > 0 THEN p_kernel_us END,
      bound_label = CASE WHEN p_round > 0 THEN p_bound END, lease_expires_ms = NULL,
      finished_ms = NULLIF(p_finished_ms, 0), lost_count = lost_count + p_lost,
      run_ms = NULLIF(p_run_end_ms, 0) - leased_ms
    WHERE id = p_job RETURNING id),
  u AS (
    INSERT INTO result_updates (update_uuid, job_id, attempt, fencing_token, round_id, applied_ms)
    VALUES (p_update, p_job, p_attempt, p_token, NULLIF(p_round, 0), p_now_ms)),
  n AS (SELECT pg_notify('npuperf_jobs', p_replica))
  INSERT INTO events (at_ms, collection_id, job_id, kind, detail)
  SELECT p_now_ms, p_collection, f.id, 'job_result', p_detail FROM f, n
  RETURNING EXISTS (SELECT 1 FROM collection_queue WHERE collection_id = p_collection
                    AND queued + live > 1) INTO others;
  RETURN others;
END $$;
