-- jobs_live_by_agent (agent_id) WHERE state IN (2, 3) (0018) is a prefix of the unique
-- jobs_one_lease_per_device (agent_id, device_id) with the same predicate, which serves every lookup
-- of an agent's live jobs (sqlite/claims.cc FreeDevices); a claim and a job's first progress wrote
-- an entry into both (issue 36; see the PostgreSQL migration of the same number, whose other two
-- changes have no SQLite counterpart: SQLite keeps the round's foreign key, checked in-process, and
-- counts a collection's jobs without a trigger).
DROP INDEX jobs_live_by_agent;
