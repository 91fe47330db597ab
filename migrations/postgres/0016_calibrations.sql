-- Measured noise (issue 20; docs/comparisons.md "Measured noise"). A calibration reruns a finished
-- collection of a team `runs` times as it was (A/A collections labelled npuperf.calibration=<id>)
-- and, when they are all terminal, stores the spread of every case and metric family it measured.
-- States are npuperf.v1.CalibrationState numbers: 1 RUNNING, 2 SUCCEEDED, 3 FAILED. Finishing is a
-- compare-and-set from RUNNING that writes the spreads in the same transaction.
CREATE TABLE calibrations (
  id                   bigserial PRIMARY KEY,
  team                 text NOT NULL,
  source_collection_id text NOT NULL,    -- the collection rerun
  runs                 integer NOT NULL CHECK (runs BETWEEN 3 AND 20),
  state                integer NOT NULL CHECK (state BETWEEN 1 AND 3),
  reason               text NOT NULL DEFAULT '',
  collection_ids       jsonb NOT NULL DEFAULT '[]',  -- JSON array of the A/A collections, when finished
  created_ms           bigint NOT NULL,
  finished_ms          bigint                      -- NULL while RUNNING
);
CREATE INDEX calibrations_running ON calibrations (state, id);
CREATE INDEX calibrations_by_team ON calibrations (team, id);
-- One measured spread per (case, SoC, mode, family) of a calibration. Verdicts use the newest
-- (highest id) per (team, soc, mode, operator, case, family).
CREATE TABLE noise_spreads (
  id             bigserial PRIMARY KEY,
  team           text NOT NULL,
  soc            text NOT NULL,
  mode           text NOT NULL,          -- fingerprint mode: standard, quick
  operator_name  text NOT NULL,
  case_id        text NOT NULL,
  family         text NOT NULL CHECK (family IN ('duration', 'ratio')),
  spread         double precision NOT NULL CHECK (spread >= 0),  -- percent (duration) or points (ratio)
  rounds         integer NOT NULL CHECK (rounds >= 3),
  threshold      double precision NOT NULL,          -- max(floor, k x spread)
  far            double precision NOT NULL,          -- expected false-alarm rate at threshold
  calibration_id bigint NOT NULL REFERENCES calibrations (id),
  measured_ms    bigint NOT NULL
);
CREATE INDEX noise_spreads_by_case
  ON noise_spreads (team, operator_name, case_id, soc, mode, family, id);
