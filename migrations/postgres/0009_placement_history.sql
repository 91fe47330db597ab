-- History-aware placement (server/core/placement.h): what a job's device time depends on, when
-- its current attempt was leased, and the device time of the attempt that succeeded. The next
-- collection with the same duration keys is queued longest first.
ALTER TABLE jobs ADD COLUMN duration_key TEXT;
ALTER TABLE jobs ADD COLUMN leased_ms BIGINT;
ALTER TABLE jobs ADD COLUMN run_ms BIGINT;
CREATE INDEX jobs_by_duration_key ON jobs (duration_key, finished_ms) WHERE run_ms IS NOT NULL;

-- npuperf_claim now records when the attempt was leased (leased_ms): its one definition is
-- migrations/postgres/definitions/npuperf_claim.sql, run after the migrations.
