-- A device holds at most one live lease (LEASED = 2, RUNNING = 3). SQLite already claims inside
-- BEGIN IMMEDIATE; the index makes double-booking impossible by construction, as in
-- postgres/0002. Never edit an applied migration: add 0003_*.sql.
CREATE UNIQUE INDEX jobs_one_lease_per_device ON jobs (agent_id, device_id)
  WHERE state IN (2, 3);
