-- No change on PostgreSQL: SQLite's 0026 adds jobs_queued_by_collection, which PostgreSQL has had
-- since 0003 (its claims read queue heads from collection_queue). This file keeps version 26 meaning
-- the same schema step on both dialects.
SELECT 1;
