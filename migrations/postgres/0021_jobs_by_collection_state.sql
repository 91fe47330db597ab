-- A collection's counts (SELECT state, COUNT(*) ... WHERE collection_id = $1 GROUP BY state) are
-- read with every page of its jobs (issue 36). Through jobs_by_collection they read every job row;
-- this index lets PostgreSQL count from the index (an index-only scan where the visibility map
-- allows). state is indexed already (jobs_queue), so job updates were not HOT before either.
CREATE INDEX jobs_by_collection_state ON jobs (collection_id, state);
