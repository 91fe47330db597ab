-- A round's figures move into the round's own row (issue 36): rounds.figures, one JSON object
-- name -> number, instead of round_metrics, one row and one primary key entry per figure. A
-- round of about 100 figures was more than half of a result's time in the database (pgbench of
-- the insert alone, idle 2-core VM: round and 100 figure rows 0.53 ms, round with its figures in
-- the row 0.30 ms); the only reader, ListRounds with `metric`, reads one figure of each listed
-- round, which is one lookup in the row it reads anyway.
--
-- Finite by construction: a JSON number cannot be NaN or infinite, the store refuses a
-- non-finite figure before it writes (INVALID_ARGUMENT, as 0005's constraint did), and the
-- constraint below refuses anything that is not an object of numbers (a server that wrote null
-- for NaN; strict, because the default lax mode would let arrays of numbers through). Values
-- are written in a round-trip form, so a figure reads back bit for bit (jsonb numbers are exact
-- decimals; -0 reads back as 0).
--
-- Nothing stored is lost: every round's rows move into its object. A figure stored before 0005
-- that is not finite (0005's constraint was NOT VALID) moves as the JSON string "NaN" or
-- "Infinity", which reads back as the same value; like 0005, the new constraint is NOT VALID so
-- those rounds are not rechecked. rounds_finite is re-added NOT VALID around the copy for the
-- same reason (an UPDATE checks every constraint of the row it writes).
-- jsonb_object_agg writes a double as float8out prints it: all its digits only while
-- extra_float_digits > 0 (the default 1; a role or database may have set 0).
SET LOCAL extra_float_digits = 1;
ALTER TABLE rounds ADD COLUMN figures jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE rounds DROP CONSTRAINT IF EXISTS rounds_finite;
UPDATE rounds r SET figures = m.figures
  FROM (SELECT round_id, jsonb_object_agg(name, value) AS figures FROM round_metrics
        GROUP BY round_id) m
  WHERE m.round_id = r.id;
DROP TABLE round_metrics;
ALTER TABLE rounds ADD CONSTRAINT rounds_finite
  CHECK (kernel_time_us <> 'NaN'::float8 AND kernel_time_us <> 'Infinity'::float8
         AND kernel_time_us <> '-Infinity'::float8)
  NOT VALID;
ALTER TABLE rounds ADD CONSTRAINT rounds_figures_numbers
  CHECK (jsonb_typeof(figures) = 'object'
         AND NOT figures @? 'strict $.* ? (@.type() != "number")')
  NOT VALID;
