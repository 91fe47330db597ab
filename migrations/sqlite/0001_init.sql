-- npuperf schema v1 (SQLite). Never edit an applied migration: add 0002_*.sql.
-- Times are Unix milliseconds (UTC). Protobuf blobs are npuperf.v1 messages.

CREATE TABLE tokens (
  hash        TEXT PRIMARY KEY,          -- sha256 hex of the bearer token
  kind        TEXT NOT NULL CHECK (kind IN ('team', 'agent')),
  name        TEXT NOT NULL,
  created_ms  INTEGER NOT NULL
);

CREATE TABLE bundles (
  sha256      TEXT PRIMARY KEY,
  team        TEXT NOT NULL,
  name        TEXT NOT NULL,
  size_bytes  INTEGER NOT NULL,
  content     BLOB NOT NULL,
  created_ms  INTEGER NOT NULL
);

CREATE TABLE collections (
  id              TEXT PRIMARY KEY,
  team            TEXT NOT NULL,
  spec            BLOB NOT NULL,           -- CollectionSpec with defaults filled in
  state           INTEGER NOT NULL,        -- CollectionState
  priority        INTEGER NOT NULL,
  max_concurrent  INTEGER NOT NULL,
  idempotency_key TEXT,
  cancel_reason   TEXT NOT NULL DEFAULT '',
  created_ms      INTEGER NOT NULL,
  finished_ms     INTEGER,
  UNIQUE (team, idempotency_key)
);
CREATE INDEX collections_by_team ON collections (team, created_ms DESC);

CREATE TABLE collection_labels (
  collection_id TEXT NOT NULL REFERENCES collections (id),
  key           TEXT NOT NULL,
  value         TEXT NOT NULL,
  PRIMARY KEY (collection_id, key)
);
CREATE INDEX collection_labels_by_kv ON collection_labels (key, value);

CREATE TABLE jobs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  collection_id   TEXT NOT NULL REFERENCES collections (id),
  team            TEXT NOT NULL,
  priority        INTEGER NOT NULL,
  operator_name   TEXT NOT NULL,
  case_id         TEXT NOT NULL,
  op_name         TEXT NOT NULL,
  state           INTEGER NOT NULL,        -- JobState
  attempt         INTEGER NOT NULL DEFAULT 0,
  max_attempts    INTEGER NOT NULL,
  fencing_token   INTEGER NOT NULL DEFAULT 0,
  agent_id        TEXT,
  host            TEXT,
  device_id       INTEGER,
  soc             TEXT,
  lease_expires_ms INTEGER,
  progress        BLOB,                    -- JobProgress
  reason          TEXT NOT NULL DEFAULT '',
  lost_count      INTEGER NOT NULL DEFAULT 0,  -- attempts whose agent vanished
  round_id        INTEGER,
  kernel_time_us  REAL,
  bound_label     TEXT,
  queued_ms       INTEGER NOT NULL,
  started_ms      INTEGER,
  finished_ms     INTEGER
);
CREATE INDEX jobs_queue ON jobs (state, priority DESC, id);
CREATE INDEX jobs_by_collection ON jobs (collection_id, id);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_ms);

CREATE TABLE agents (
  id            TEXT PRIMARY KEY,
  host          TEXT NOT NULL,
  boot_id       TEXT NOT NULL,
  instance_id   TEXT NOT NULL,
  version       TEXT NOT NULL,
  info          BLOB NOT NULL,             -- RegisterAgentRequest (labels, versions)
  state         TEXT NOT NULL,             -- online | lost
  registered_ms INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL
);

CREATE TABLE devices (
  agent_id   TEXT NOT NULL REFERENCES agents (id),
  device_id  INTEGER NOT NULL,
  soc        TEXT NOT NULL,
  state      INTEGER NOT NULL,             -- DeviceState
  PRIMARY KEY (agent_id, device_id)
);

CREATE TABLE rounds (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  collection_id  TEXT NOT NULL,
  job_id         INTEGER NOT NULL REFERENCES jobs (id),
  attempt        INTEGER NOT NULL,
  team           TEXT NOT NULL,
  operator_name  TEXT NOT NULL,
  case_id        TEXT NOT NULL,
  kernel_time_us REAL,
  bound_label    TEXT,
  evidence       BLOB NOT NULL,            -- Evidence
  created_ms     INTEGER NOT NULL,
  UNIQUE (job_id)                          -- a job stores evidence exactly once
);
CREATE INDEX rounds_by_operator ON rounds (team, operator_name, case_id, created_ms);
CREATE INDEX rounds_by_collection ON rounds (collection_id);

-- Every numeric figure of a round by name ("duration", "PipeUtilization.aic_mte2_ratio"),
-- for metric time series.
CREATE TABLE round_metrics (
  round_id INTEGER NOT NULL REFERENCES rounds (id),
  name     TEXT NOT NULL,
  value    REAL NOT NULL,
  PRIMARY KEY (round_id, name)
);

-- Applied result updates, for idempotent ReportResult.
CREATE TABLE result_updates (
  update_uuid   TEXT PRIMARY KEY,
  job_id        INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,
  fencing_token INTEGER NOT NULL,
  round_id      INTEGER,
  applied_ms    INTEGER NOT NULL
);

CREATE TABLE baselines (
  team          TEXT NOT NULL,
  label         TEXT NOT NULL,
  round_id      INTEGER,
  collection_id TEXT,
  pinned_ms     INTEGER NOT NULL,
  PRIMARY KEY (team, label)
);

CREATE TABLE events (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms         INTEGER NOT NULL,
  collection_id TEXT,
  job_id        INTEGER,
  kind          TEXT NOT NULL,
  detail        TEXT NOT NULL
);
CREATE INDEX events_by_job ON events (job_id, id);
