-- Measured noise (issue 20; docs/comparisons.md "Measured noise"). A calibration reruns a finished
-- collection of a team `runs` times as it was (A/A collections labelled npuperf.calibration=<id>)
-- and, when they are all terminal, stores the spread of every case and metric family it measured.
-- States are npuperf.v1.CalibrationState numbers: 1 RUNNING, 2 SUCCEEDED, 3 FAILED. Finishing is a
-- compare-and-set from RUNNING that writes the spreads in the same transaction.
CREATE TABLE calibrations (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  team                 TEXT NOT NULL,
  source_collection_id TEXT NOT NULL,    -- the collection rerun
  runs                 INTEGER NOT NULL CHECK (runs BETWEEN 3 AND 20),
  state                INTEGER NOT NULL CHECK (state BETWEEN 1 AND 3),
  reason               TEXT NOT NULL DEFAULT '',
  collection_ids       TEXT NOT NULL DEFAULT '[]',  -- JSON array of the A/A collections, when finished
  created_ms           INTEGER NOT NULL,
  finished_ms          INTEGER                      -- NULL while RUNNING
);
CREATE INDEX calibrations_running ON calibrations (state, id);
CREATE INDEX calibrations_by_team ON calibrations (team, id);
-- One measured spread per (case, SoC, mode, family) of a calibration. Verdicts use the newest
-- (highest id) per (team, soc, mode, operator, case, family).
CREATE TABLE noise_spreads (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  team           TEXT NOT NULL,
  soc            TEXT NOT NULL,
  mode           TEXT NOT NULL,          -- fingerprint mode: standard, quick
  operator_name  TEXT NOT NULL,
  case_id        TEXT NOT NULL,
  family         TEXT NOT NULL CHECK (family IN ('duration', 'ratio')),
  spread         REAL NOT NULL CHECK (spread >= 0),  -- percent (duration) or points (ratio)
  rounds         INTEGER NOT NULL CHECK (rounds >= 3),
  threshold      REAL NOT NULL,          -- max(floor, k x spread)
  far            REAL NOT NULL,          -- expected false-alarm rate at threshold
  calibration_id INTEGER NOT NULL REFERENCES calibrations (id),
  measured_ms    INTEGER NOT NULL
);
CREATE INDEX noise_spreads_by_case
  ON noise_spreads (team, operator_name, case_id, soc, mode, family, id);
