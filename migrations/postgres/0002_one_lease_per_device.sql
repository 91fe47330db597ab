-- A device holds at most one live lease (LEASED = 2, RUNNING = 3), whichever server replica
-- granted it: a second claim of the same (agent, device) fails with a unique violation and the
-- claiming replica retries with that device excluded. Same change as sqlite/0002.
CREATE UNIQUE INDEX jobs_one_lease_per_device ON jobs (agent_id, device_id)
  WHERE state IN (2, 3);
