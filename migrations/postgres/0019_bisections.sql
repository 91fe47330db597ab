-- Bisections (issue 34; docs/comparisons.md, "Bisection"): the search of a first-parent commit
-- range for the commit that moved one operator case's duration, each revision's bundle run as
-- one-job collections of the team (server/compare/bisections.h). body is the npuperf.v1.Bisection
-- as it stands (its id is the column); the columns beside it are what queries select on. version
-- counts the updates: a replica advancing one writes only if nobody did since it read
-- (compare-and-set).
CREATE TABLE bisections (
  id              bigserial PRIMARY KEY,
  team            text NOT NULL,
  idempotency_key text NOT NULL,
  state           integer NOT NULL,          -- npuperf.v1.BisectionState
  regression_id   bigint NOT NULL DEFAULT 0, -- the regression it was started for (0: a person)
  body            bytea NOT NULL,
  version         bigint NOT NULL,
  created_ms      bigint NOT NULL,
  updated_ms      bigint NOT NULL
);
-- Starting again with the same key returns the bisection already started (two replicas starting
-- at once insert with ON CONFLICT DO NOTHING on it, so they create one).
CREATE UNIQUE INDEX bisections_by_key ON bisections (team, idempotency_key);
-- Those still running: MEASURING_ENDS (1), BISECTING (2), EXPLAINING (3); DONE, REFUSED, FAILED
-- and CANCELLED (4..7) are terminal.
CREATE INDEX bisections_unfinished ON bisections (id) WHERE state IN (1, 2, 3);
