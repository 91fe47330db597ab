-- No change on SQLite: PostgreSQL's 0012 moves the bulk-count check into its job triggers' WHEN
-- clauses and drops two index entries per job state change
-- (migrations/postgres/0012_bulk_writes_lean.sql). SQLite keeps no queue counts (see 0003) and its
-- claims still read jobs_queue. This file keeps version 12 meaning the same schema step on both
-- dialects.
SELECT 1;
