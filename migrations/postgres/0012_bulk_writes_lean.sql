-- Bulk job writes cost a heap write and the indexes they must touch, nothing more (issue 18:
-- cancelling 100,000 queued jobs took 2.66 s).
--
-- 1. 0008's bulk counting made npuperf_job_counts() return at once for rows of a bulk statement,
--    but the AFTER ROW triggers still queued one event per row and entered PL/pgSQL for each. The
--    setting now sits in the triggers' WHEN clauses, which PostgreSQL evaluates before queuing: a
--    bulk INSERT or UPDATE queues no trigger events at all.
-- 2. jobs_queue (state, priority DESC, id) served the pre-0003 claim scan; claims read
--    collection_queue and jobs_queued_by_collection since 0003, and nothing orders jobs by state
--    and priority any more. Every state change wrote a new entry into it.
-- 3. jobs_by_lease (state, lease_expires_ms) is only read for live jobs (expiry, ExpireLeases'
--    collections); as a partial index on live states, a job that is queued, or moves from queued
--    to a terminal state (cancel), no longer writes an entry.
DROP TRIGGER jobs_counts_insert ON jobs;
CREATE TRIGGER jobs_counts_insert AFTER INSERT ON jobs
  FOR EACH ROW WHEN (current_setting('npuperf.bulk_counts', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION npuperf_job_counts();
DROP TRIGGER jobs_counts_update ON jobs;
CREATE TRIGGER jobs_counts_update AFTER UPDATE OF state, collection_id ON jobs
  FOR EACH ROW WHEN ((OLD.state IS DISTINCT FROM NEW.state
                      OR OLD.collection_id IS DISTINCT FROM NEW.collection_id)
                     AND current_setting('npuperf.bulk_counts', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION npuperf_job_counts();

DROP INDEX jobs_queue;
DROP INDEX jobs_by_lease;
CREATE INDEX jobs_by_lease ON jobs (lease_expires_ms) WHERE state IN (2, 3);
