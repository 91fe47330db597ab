-- Every stored figure of a round is a finite number (issue 13, "Evidence validated at ingest").
-- The server's evidence validator refuses non-finite figures before any write; these constraints
-- are the schema's own guard behind it (a check_violation, which the store reports as
-- INVALID_ARGUMENT). NOT VALID: rows stored before this version are not rechecked. Same change as
-- sqlite/0004 (PostgreSQL stores NaN and +-Infinity in double precision, and NaN = NaN there).
ALTER TABLE round_metrics ADD CONSTRAINT round_metrics_finite
  CHECK (value <> 'NaN'::float8 AND value <> 'Infinity'::float8 AND value <> '-Infinity'::float8)
  NOT VALID;
ALTER TABLE rounds ADD CONSTRAINT rounds_finite
  CHECK (kernel_time_us <> 'NaN'::float8 AND kernel_time_us <> 'Infinity'::float8
         AND kernel_time_us <> '-Infinity'::float8)
  NOT VALID;
