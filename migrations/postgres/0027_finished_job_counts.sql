-- The jobs of finished collections, counted once for every replica (issue 36). CountByState (every
-- metrics refresh, on every replica) counted the jobs of the collections not finished and listed
-- every finished collection's id, so that each server could count a new one once in memory: a
-- pass over all collections and their ids sent every 5 s (about 2 MB at 100,000 collections), and
-- each server counted every finished job once after it started.
--
-- A collection is stored finished only when all its jobs are terminal, a terminal job never changes
-- again, and nothing deletes jobs or collections (server/core/job_state.h). So the jobs of a finished
-- collection are added to finished_job_counts once, and the collection marked jobs_counted, in one
-- transaction: by the refresh that first sees it finished (postgres/collections.cc CountByState), not
-- by the paths that finish it, so a replica of an older version finishing collections during an
-- upgrade leaves them to be counted later, not lost. Collections stored finished before this
-- migration are counted by the first refresh after it, once.
--
-- Both partial indexes hold only what a refresh reads: the collections not finished (their jobs are
-- counted live), and the finished ones not counted yet (none, between refreshes).
ALTER TABLE collections ADD COLUMN jobs_counted boolean NOT NULL DEFAULT false;
CREATE TABLE finished_job_counts (
  state integer PRIMARY KEY,
  jobs bigint NOT NULL
);
CREATE INDEX collections_unfinished ON collections (id) WHERE state NOT IN (3, 4, 5);
CREATE INDEX collections_uncounted ON collections (id) WHERE state IN (3, 4, 5) AND NOT jobs_counted;
