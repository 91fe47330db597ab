-- Device canaries (issue 33; docs/operations.md "Device health"): the built-in reference job run
-- on an idle device now and then (server/compare/canaries.h), and how it compared with the same
-- SoC's other devices and the device's own history (server/core/canary_rules.h). slot is the
-- schedule's tick (created_ms / the canary interval): replicas scheduling the same device in the
-- same interval insert one canary (canaries_by_slot). version counts the updates: a replica
-- advancing one writes only if nobody did since it read (compare-and-set).
CREATE TABLE canaries (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  host          TEXT NOT NULL,
  device_id     INTEGER NOT NULL,
  soc           TEXT NOT NULL DEFAULT '',
  slot          INTEGER NOT NULL,
  -- "failed": it did not run to a round (counted as slow).
  state         TEXT NOT NULL CHECK (state IN ('pending', 'pass', 'slow', 'inconclusive', 'failed')),
  collection_id TEXT NOT NULL DEFAULT '',             -- '' until submitted
  round_id      INTEGER NOT NULL DEFAULT 0,           -- 0 unless pass, slow or inconclusive
  kernel_us     REAL NOT NULL DEFAULT 0,
  reference     TEXT NOT NULL DEFAULT '',             -- 'peers', 'history' or ''
  reference_us  REAL NOT NULL DEFAULT 0,
  excess_pct    REAL NOT NULL DEFAULT 0,
  threshold_pct REAL NOT NULL DEFAULT 0,
  reason        TEXT NOT NULL DEFAULT '',
  created_ms    INTEGER NOT NULL,
  finished_ms   INTEGER NOT NULL DEFAULT 0,           -- 0 while pending
  version       INTEGER NOT NULL
);
-- At most one canary per device and tick, whichever replica scheduled it (NOT NULL columns: a
-- NULL would make every row distinct).
CREATE UNIQUE INDEX canaries_by_slot ON canaries (host, device_id, slot);
-- ListCanaries of one device, and of one SoC, newest first.
CREATE INDEX canaries_by_device ON canaries (host, device_id, id);
CREATE INDEX canaries_by_soc ON canaries (soc, id);
-- The few canaries still queued or running, among every finished one ever kept. The query
-- (sqlite/canaries.cc) names the state as a literal, so that SQLite can prove the index applies.
CREATE INDEX canaries_pending ON canaries (id) WHERE state = 'pending';

-- A canary quarantine's rounds from this time on (the device's last passing canary's finish; 0: it
-- never passed one) until its release are suspect (server/compare/device_suspects.h). 0 for every
-- quarantine before this migration and for npu-smi ones.
ALTER TABLE device_quarantines ADD COLUMN suspect_since_ms INTEGER NOT NULL DEFAULT 0;
-- CanaryQuarantinesOf reads one device's quarantine history for every comparison that rests on its
-- rounds; released rows stay forever, so it needs more than the partial index on current ones.
CREATE INDEX device_quarantines_by_device ON device_quarantines (host, device_id, id);
