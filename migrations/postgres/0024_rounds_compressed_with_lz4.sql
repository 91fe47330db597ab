-- A round's evidence (about 16 KB in fleet_bench, up to 3 MiB) and its figures (about 5 KB of
-- JSON for 100) are compressed by TOAST when the row is written. PostgreSQL's default method,
-- pglz, was the larger part of a round's insert; lz4 compresses these values in a fraction of the
-- time to about the same size (issue 36; figures in docs/storage.md). Rows stored before keep
-- their pglz values, which PostgreSQL reads as before; only new values use lz4.
--
-- lz4 needs PostgreSQL 14 built with it (Debian's, the PGDG packages and the official images
-- are). On a server without it the columns keep pglz and the migration still applies: a slower
-- insert, not a server that cannot start.
DO $$
BEGIN
  EXECUTE 'ALTER TABLE rounds ALTER COLUMN evidence SET COMPRESSION lz4, '
          'ALTER COLUMN figures SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
  RAISE NOTICE 'rounds keep pglz compression: %', SQLERRM;
END $$;
