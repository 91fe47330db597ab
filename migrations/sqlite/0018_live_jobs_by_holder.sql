-- The devices an agent (or its host) holds a live lease on, by index (issue 36; see the PostgreSQL
-- migration of the same number). The query (sqlite/claims.cc FreeDevices) names the live states as
-- literals, so that SQLite can prove these partial indexes apply.
CREATE INDEX jobs_live_by_agent ON jobs (agent_id) WHERE state IN (2, 3);
CREATE INDEX jobs_live_by_host ON jobs (host) WHERE state IN (2, 3);
