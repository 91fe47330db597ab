-- Regressions and their triage (issue 20; docs/comparisons.md "Triage", docs/storage.md
-- "Regressions"). A regression is one (team, operator, case, baseline label, rule) that a listing
-- against a pinned baseline found regressed; it is current (ended_ms NULL) until the case is no
-- longer regressed or a person marks it FIXED, and at most one is current per key. States are
-- npuperf.v1.RegressionState numbers: 1 DETECTED, 2 ACKNOWLEDGED, 3 FIXED, 4 WONT_FIX,
-- 5 FALSE_POSITIVE.
CREATE TABLE regressions (
  id             bigserial PRIMARY KEY,
  team           text NOT NULL,
  operator_name  text NOT NULL,
  case_id        text NOT NULL,
  baseline_label text NOT NULL,            -- key=value of the pinned baseline
  rule           text NOT NULL,            -- the verdict rule, e.g. duration
  state          integer NOT NULL CHECK (state BETWEEN 1 AND 5),
  confirmed      boolean NOT NULL DEFAULT false,  -- a person moved it to ACKNOWLEDGED/FIXED/WONT_FIX
  detected_ms    bigint NOT NULL,
  last_seen_ms   bigint NOT NULL,
  first_round_id bigint NOT NULL,         -- candidate rounds (not foreign keys: rounds may go)
  last_round_id  bigint NOT NULL,
  seen_rounds    integer NOT NULL,
  ended_ms       bigint                   -- NULL while current
);
CREATE UNIQUE INDEX regressions_current
  ON regressions (team, operator_name, case_id, baseline_label, rule) WHERE ended_ms IS NULL;
CREATE INDEX regressions_by_team ON regressions (team, rule, state);
-- Every state change, the detection first (from_state 0).
CREATE TABLE regression_transitions (
  regression_id bigint NOT NULL REFERENCES regressions (id),
  seq           integer NOT NULL,          -- 1, 2, ... per regression
  from_state    integer NOT NULL,
  to_state      integer NOT NULL,
  actor         text NOT NULL,             -- the team, or npuperf for the server's own
  note          text NOT NULL,
  at_ms         bigint NOT NULL,
  PRIMARY KEY (regression_id, seq)
);
