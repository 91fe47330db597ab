-- What a job's claim, progress and result write, less what could never matter (issue 36: in
-- fleet_bench every job update wrote an entry into seven of the nine indexes of jobs, 0 of 28,000
-- updates were heap-only, and every round re-read and locked its job).
--
-- 1. jobs_live_by_agent (agent_id) WHERE state IN (2, 3) (0018) is a prefix of the unique
--    jobs_one_lease_per_device (agent_id, device_id) with the same predicate: every lookup of an
--    agent's live jobs (the claim's busy devices, claim_heads; an agent's leases) can use that one.
--    A claim and a job's first progress each wrote an entry into both.
-- 2. rounds.job_id's foreign key to jobs. A round is only ever inserted from its job's row
--    (npuperf_round_ahead: INSERT ... SELECT ... FROM jobs WHERE id = p_job), and no path deletes a
--    job, so the key could never fail; its trigger read the job a second time and locked it FOR KEY
--    SHARE (a WAL record, and the job's page written) for every round. As with round_metrics in
--    0022, the rule holds by construction: conformance reads every round back with its job
--    (GetRoundAndListRounds) and keeps no round of a refused result.
-- 3. jobs_counts_update entered PL/pgSQL for every state change, also LEASED -> RUNNING (a job's
--    first progress), which changes no count. It now fires only when a job enters or leaves the
--    queued or the live states (or, never, changes collection), before any event is queued.
DROP INDEX jobs_live_by_agent;

ALTER TABLE rounds DROP CONSTRAINT IF EXISTS rounds_job_id_fkey;

DROP TRIGGER jobs_counts_update ON jobs;
CREATE TRIGGER jobs_counts_update AFTER UPDATE OF state, collection_id ON jobs
  FOR EACH ROW WHEN (((OLD.state = 1) IS DISTINCT FROM (NEW.state = 1)
                      OR (OLD.state IN (2, 3)) IS DISTINCT FROM (NEW.state IN (2, 3))
                      OR OLD.collection_id IS DISTINCT FROM NEW.collection_id)
                     AND current_setting('npuperf.bulk_counts', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION npuperf_job_counts();
