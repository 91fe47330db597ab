-- Every stored figure of a round is a finite number (issue 13, "Evidence validated at ingest").
-- The server's evidence validator refuses non-finite figures before any write; these triggers are
-- the schema's own guard behind it. SQLite stores a NaN bound as a REAL as NULL: round_metrics.value
-- is NOT NULL already, and rounds.kernel_time_us (always bound by the store) is checked here;
-- +-inf is refused by both triggers. RAISE(ABORT) is SQLITE_CONSTRAINT_TRIGGER, which the store
-- reports as INVALID_ARGUMENT. Same change as postgres/0004.
CREATE TRIGGER round_metrics_finite BEFORE INSERT ON round_metrics
  WHEN abs(NEW.value) > 1.7976931348623157e308
  BEGIN SELECT RAISE(ABORT, 'round_metrics.value must be a finite number'); END;
CREATE TRIGGER rounds_finite BEFORE INSERT ON rounds
  WHEN NEW.kernel_time_us IS NULL OR abs(NEW.kernel_time_us) > 1.7976931348623157e308
  BEGIN SELECT RAISE(ABORT, 'rounds.kernel_time_us must be a finite number'); END;
