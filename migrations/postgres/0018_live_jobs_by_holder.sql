-- The devices an agent (or its host) holds a live lease on, by index (issue 36).
--
-- Every claim first reads the agent's busy devices (statements.cc "claim_heads": live jobs whose
-- agent_id is the claimant or whose host is its host). Only jobs_by_lease (lease_expires_ms, partial
-- on the live states) covered live jobs, so each claim walked every live job of the fleet, and the
-- dead index entries that churn leaves until VACUUM: in fleet_bench (1,000 devices, 1 s jobs) 12,464
-- entries visited for 2 rows, 1.75 ms of the 4.7 ms of statement time a job cost. Two small partial
-- indexes make it two probes. They hold only live jobs, so a queued or finished job writes no entry.
CREATE INDEX jobs_live_by_agent ON jobs (agent_id) WHERE state IN (2, 3);
CREATE INDEX jobs_live_by_host ON jobs (host) WHERE state IN (2, 3);
