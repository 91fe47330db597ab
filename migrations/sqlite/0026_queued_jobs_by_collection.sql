-- The queued jobs of each collection, by id: what a claim's queue heads and the queue gauge walk
-- (sqlite/claims.cc LoadClaimHeads, collections.cc CountQueuedByCollection, through rows.h
-- kQueueHeadsCte). Both grouped every queued job (SELECT MIN(id) ... WHERE state = 1 GROUP BY
-- collection_id): 76 ms a lease with 100,000 jobs queued, under the store's one lock, so a big
-- manifest waiting slowed every other team's claims (issue 36). With this index they seek once per
-- collection that has a queued job. It is PostgreSQL's index of the same name (its 0003); a job has
-- an entry only while it is queued. PostgreSQL's 0026 is empty.
CREATE INDEX jobs_queued_by_collection ON jobs (collection_id, id) WHERE state = 1;
