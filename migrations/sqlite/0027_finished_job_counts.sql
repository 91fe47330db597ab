-- The jobs of finished collections, counted once (issue 36; the same schema step as PostgreSQL's
-- 0027, which says why). CountByState listed every finished collection's id on each metrics refresh
-- and counted every finished job once after each start, under the store's lock. The jobs of a
-- collection are added here, and the collection marked jobs_counted, by the refresh that first sees
-- it finished (sqlite/collections.cc CountByState); those finished before this migration, by the
-- first refresh after it, once.
ALTER TABLE collections ADD COLUMN jobs_counted INTEGER NOT NULL DEFAULT 0;
CREATE TABLE finished_job_counts (
  state INTEGER PRIMARY KEY,
  jobs INTEGER NOT NULL
);
CREATE INDEX collections_unfinished ON collections (id) WHERE state NOT IN (3, 4, 5);
CREATE INDEX collections_uncounted ON collections (id) WHERE state IN (3, 4, 5) AND jobs_counted = 0;
