-- History-aware placement (server/core/placement.h): what a job's device time depends on, when
-- its current attempt was leased, and the device time of the attempt that succeeded. The next
-- collection with the same duration keys is queued longest first.
ALTER TABLE jobs ADD COLUMN duration_key TEXT;
ALTER TABLE jobs ADD COLUMN leased_ms INTEGER;
ALTER TABLE jobs ADD COLUMN run_ms INTEGER;
CREATE INDEX jobs_by_duration_key ON jobs (duration_key, finished_ms) WHERE run_ms IS NOT NULL;
