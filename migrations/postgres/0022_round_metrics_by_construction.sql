-- A round's figures are written with their round, by construction (issue 36). round_insert inserts
-- the round and all its figures in one statement (about 100 rows a round), rounds are never
-- deleted, and nothing else writes round_metrics: the foreign key to rounds could never fail, yet
-- its trigger looked the round up once for every figure row, which was more than half of the
-- statement's cost (store_bench: 0.50 -> 0.22 ms a round of 100 figures). The primary key
-- (round_id, name) stays; a figure row of a round id that does not exist cannot be written by
-- any statement of the store (tests/server/store/store_conformance_test.cc reads every figure
-- back with its round).
ALTER TABLE round_metrics DROP CONSTRAINT IF EXISTS round_metrics_round_id_fkey;
