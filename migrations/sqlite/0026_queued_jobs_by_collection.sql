-- The queued jobs of each collection, by id: what a claim's queue heads and the queue gauges read
-- (sqlite/claims.cc LoadClaimHeads, collections.cc CountQueuedByCollection). Both grouped every job
-- ever stored (SELECT MIN(id) ... WHERE state = 1 GROUP BY collection_id scanned
-- jobs_by_collection_state whole): 90 ms a lease with 1,100,000 jobs, 100,000 of them queued, under
-- the store's one lock (issue 36). With this index they walk only the collections that have a queued
-- job, one seek each. It is PostgreSQL's index of the same name (its 0003); a job writes an entry
-- while it is queued only. PostgreSQL's 0026 is empty.
CREATE INDEX jobs_queued_by_collection ON jobs (collection_id, id) WHERE state = 1;
