-- No change on SQLite: PostgreSQL's 0003 keeps per-collection queue counts for its two-round-trip
-- claims (migrations/postgres/0003_queue_counters.sql). One process owns a SQLite database and its
-- claims count under BEGIN IMMEDIATE, so it needs no counts; this file keeps version 3 meaning the
-- same schema step on both dialects.
SELECT 1;
