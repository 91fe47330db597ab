-- npuperf_claim_first(): the first of a claim's picks that leases, in one call, defined once (like
-- npuperf_claim.sql: run after the migrations on every `migrate`). Caller: the claim_take_first
-- statement (postgres/claims.cc, ChooseAndLease).
--
-- Issue 36: a claim of one job asked the chooser, tried its pick with npuperf_claim() and, when the
-- pick's collection turned out capped, cancelled, drained or locked, asked again: a round trip per
-- pick. In fleet_bench (1,000 devices, 1 s jobs, collections capped at 8) every claim chases the
-- same oldest collections, and a lease took 1.5 calls of npuperf_claim, one of them capped.
--
-- p_plan: the chooser's picks in its order, a JSON array of {"coll", "device", "soc"}, each chosen
-- as if the ones before it had failed. Tries them in order with npuperf_claim() for the lease
-- secret's sha256 p_secret_sha256: the first waits for its collection's lock when p_wait_first (the
-- claim's first pick), every other skips a collection another claim holds (so a call waits at most
-- once, before it holds any lock).
-- Returns one row: n, the index of the pick that leased, and npuperf_claim()'s lease; or n = -1 and
-- outcome 'none' when no pick leased. The locks of the picks that did not lease are held until the
-- transaction ends: the caller runs it in autocommit (postgres/claims.cc, ClaimJobs), so until the
-- statement ends, as claim_take_many.
CREATE OR REPLACE FUNCTION npuperf_claim_first(p_plan jsonb, p_wait_first boolean, p_agent text,
                                               p_host text, p_expires_ms bigint, p_now_ms bigint,
                                               p_running_state integer, p_secret_sha256 text)
RETURNS TABLE (n integer, outcome text, job_id bigint, attempt integer, max_attempts integer,
               fencing_token bigint, op_name text, case_id text, operator_name text,
               queued_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  i integer := 0;
  pick jsonb;
  r record;
BEGIN
  FOR pick IN SELECT value FROM jsonb_array_elements(p_plan) LOOP
    SELECT * INTO r FROM npuperf_claim(pick->>'coll', i > 0 OR NOT p_wait_first, p_agent, p_host,
                                       (pick->>'device')::integer, pick->>'soc', p_expires_ms,
                                       p_now_ms, p_running_state, p_secret_sha256);
    IF r.outcome = 'leased' THEN
      n := i;
      outcome := r.outcome;
      job_id := r.job_id;
      attempt := r.attempt;
      max_attempts := r.max_attempts;
      fencing_token := r.fencing_token;
      op_name := r.op_name;
      case_id := r.case_id;
      operator_name := r.operator_name;
      queued_ms := r.queued_ms;
      RETURN NEXT;
      RETURN;
    END IF;
    i := i + 1;
  END LOOP;
  n := -1;
  outcome := 'none';
  RETURN NEXT;
END $$;
