-- Device quarantine (issue 33; docs/operations.md "Device health"): a device that npu-smi calls
-- critical, or whose canary is slow beyond the rule (server/core/health_rules.h), takes no new
-- lease until it is released, automatically or by a person. A row is current while released_ms is
-- NULL (at most one per device, the partial unique index decides atomically); released rows stay
-- as the device's audited history (who released it, when, with which note).
CREATE TABLE device_quarantines (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  host         TEXT NOT NULL,
  device_id    INTEGER NOT NULL,
  soc          TEXT NOT NULL DEFAULT '',
  reason       TEXT NOT NULL,
  source       TEXT NOT NULL CHECK (source IN ('npu_smi', 'canary')),
  since_ms     INTEGER NOT NULL,
  released_ms  INTEGER,                 -- NULL while quarantined
  released_by  TEXT NOT NULL DEFAULT '',
  release_note TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX device_quarantines_current ON device_quarantines (host, device_id)
  WHERE released_ms IS NULL;
