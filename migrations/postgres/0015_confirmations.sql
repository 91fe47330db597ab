-- Confirmations (issue 20; docs/comparisons.md, "Confirmation"): the reruns of a REGRESSED or
-- IMPROVED comparison of two rounds, interleaved on one other device (server/compare/
-- confirmations.h). body is the npuperf.v1.Confirmation as it stands, options the
-- npuperf.v1.CompareOptions its verdicts use; the columns beside them are what queries select
-- on. version counts the updates: a replica advancing one writes only if nobody did since it
-- read (compare-and-set).
CREATE TABLE confirmations (
  id                 bigserial PRIMARY KEY,
  team               text NOT NULL,
  baseline_round_id  bigint NOT NULL,
  candidate_round_id bigint NOT NULL,
  state              integer NOT NULL,    -- npuperf.v1.ConfirmationState
  options            bytea NOT NULL,
  body               bytea NOT NULL,
  version            bigint NOT NULL,
  created_ms         bigint NOT NULL,
  updated_ms         bigint NOT NULL
);
-- One confirmation per pair of rounds that is not UNCONFIRMED (4): asking again returns it, and
-- an UNCONFIRMED one (no device was free, a rerun failed) may be asked for anew.
CREATE UNIQUE INDEX confirmations_one_per_pair
  ON confirmations (team, baseline_round_id, candidate_round_id) WHERE state <> 4;
CREATE INDEX confirmations_pending ON confirmations (id) WHERE state = 1;
