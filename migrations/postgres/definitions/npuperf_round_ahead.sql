-- npuperf_round_ahead(): a success's round and figures, stored before any lock is taken, defined
-- once (like npuperf_claim.sql: run after the migrations on every `migrate`). Callers: the
-- round_insert_ahead statement (the result's general path, results.cc) and npuperf_result().
--
-- Issue 36: under the collection's row lock every result of a collection waited for the one before
-- it to insert its figures, so the round goes in first. Its columns come from the job, whose
-- attempt must still be p_attempt and live (LEASED or RUNNING). Returns the round's id, or NULL when
-- the job's attempt moved on or the job has its round already (ON CONFLICT waits for a concurrent
-- resend of the same result and yields to it). Whether the round stays is decided under the locks;
-- the caller deletes it otherwise, in the same transaction, before anyone else can see it.
-- p_figures: the round's figures, a JSON object name -> number (migration 0023).
CREATE OR REPLACE FUNCTION npuperf_round_ahead(p_job bigint, p_attempt integer,
                                               p_kernel_us double precision, p_bound text,
                                               p_evidence bytea, p_now_ms bigint, p_figures jsonb)
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  r bigint;
BEGIN
  INSERT INTO rounds (collection_id, job_id, attempt, team, operator_name, case_id, kernel_time_us,
                      bound_label, evidence, created_ms, figures)
  SELECT j.collection_id, j.id, j.attempt, j.team, j.operator_name, j.case_id, p_kernel_us, p_bound,
         p_evidence, p_now_ms, p_figures
  FROM jobs j WHERE j.id = p_job AND j.attempt = p_attempt AND j.state IN (2, 3)
  ON CONFLICT (job_id) DO NOTHING RETURNING id INTO r;
  RETURN r;
END $$;
