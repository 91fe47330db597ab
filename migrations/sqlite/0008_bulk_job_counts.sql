-- No change on SQLite: PostgreSQL's 0008 lets bulk job writes count once per statement
-- (migrations/postgres/0008_bulk_job_counts.sql); SQLite keeps no queue counts (see 0003). This
-- file keeps version 8 meaning the same schema step on both dialects.
SELECT 1;
