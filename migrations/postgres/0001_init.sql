-- npuperf schema v1 (PostgreSQL). The same tables and columns as sqlite/0001_init.sql, so both
-- backends mean the same. Never edit an applied migration: add 0002_*.sql.
-- Times are Unix milliseconds (UTC) in bigint. Protobuf blobs are npuperf.v1 messages in bytea.

CREATE TABLE tokens (
  hash        text PRIMARY KEY,          -- sha256 hex of the bearer token
  kind        text NOT NULL CHECK (kind IN ('team', 'agent')),
  name        text NOT NULL,
  created_ms  bigint NOT NULL
);

CREATE TABLE bundles (
  sha256      text PRIMARY KEY,
  team        text NOT NULL,
  name        text NOT NULL,
  size_bytes  bigint NOT NULL,
  content     bytea NOT NULL,
  created_ms  bigint NOT NULL
);

CREATE TABLE collections (
  id              text PRIMARY KEY,
  team            text NOT NULL,
  spec            bytea NOT NULL,          -- CollectionSpec with defaults filled in
  state           integer NOT NULL,        -- CollectionState
  priority        integer NOT NULL,
  max_concurrent  integer NOT NULL,
  idempotency_key text,
  cancel_reason   text NOT NULL DEFAULT '',
  created_ms      bigint NOT NULL,
  finished_ms     bigint,
  UNIQUE (team, idempotency_key)
);
CREATE INDEX collections_by_team ON collections (team, created_ms DESC);

CREATE TABLE collection_labels (
  collection_id text NOT NULL REFERENCES collections (id),
  key           text NOT NULL,
  value         text NOT NULL,
  PRIMARY KEY (collection_id, key)
);
CREATE INDEX collection_labels_by_kv ON collection_labels (key, value);

CREATE TABLE jobs (
  id              bigserial PRIMARY KEY,
  collection_id   text NOT NULL REFERENCES collections (id),
  team            text NOT NULL,
  priority        integer NOT NULL,
  operator_name   text NOT NULL,
  case_id         text NOT NULL,
  op_name         text NOT NULL,
  state           integer NOT NULL,        -- JobState
  attempt         integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL,
  fencing_token   bigint NOT NULL DEFAULT 0,
  agent_id        text,
  host            text,
  device_id       integer,
  soc             text,
  lease_expires_ms bigint,
  progress        bytea,                   -- JobProgress
  reason          text NOT NULL DEFAULT '',
  lost_count      integer NOT NULL DEFAULT 0,  -- attempts whose agent vanished
  round_id        bigint,
  kernel_time_us  double precision,
  bound_label     text,
  queued_ms       bigint NOT NULL,
  started_ms      bigint,
  finished_ms     bigint
);
CREATE INDEX jobs_queue ON jobs (state, priority DESC, id);
CREATE INDEX jobs_by_collection ON jobs (collection_id, id);
CREATE INDEX jobs_by_lease ON jobs (state, lease_expires_ms);

CREATE TABLE agents (
  id            text PRIMARY KEY,
  host          text NOT NULL,
  boot_id       text NOT NULL,
  instance_id   text NOT NULL,
  version       text NOT NULL,
  info          bytea NOT NULL,            -- RegisterAgentRequest (labels, versions)
  state         text NOT NULL,             -- online | lost
  registered_ms bigint NOT NULL,
  last_seen_ms  bigint NOT NULL
);

CREATE TABLE devices (
  agent_id   text NOT NULL REFERENCES agents (id),
  device_id  integer NOT NULL,
  soc        text NOT NULL,
  state      integer NOT NULL,             -- DeviceState
  PRIMARY KEY (agent_id, device_id)
);

CREATE TABLE rounds (
  id             bigserial PRIMARY KEY,
  collection_id  text NOT NULL,
  job_id         bigint NOT NULL REFERENCES jobs (id),
  attempt        integer NOT NULL,
  team           text NOT NULL,
  operator_name  text NOT NULL,
  case_id        text NOT NULL,
  kernel_time_us double precision,
  bound_label    text,
  evidence       bytea NOT NULL,           -- Evidence
  created_ms     bigint NOT NULL,
  UNIQUE (job_id)                          -- a job stores evidence exactly once
);
CREATE INDEX rounds_by_operator ON rounds (team, operator_name, case_id, created_ms);
CREATE INDEX rounds_by_collection ON rounds (collection_id);

-- Every numeric figure of a round by name ("duration", "PipeUtilization.aic_mte2_ratio"),
-- for metric time series.
CREATE TABLE round_metrics (
  round_id bigint NOT NULL REFERENCES rounds (id),
  name     text NOT NULL,
  value    double precision NOT NULL,
  PRIMARY KEY (round_id, name)
);

-- Applied result updates, for idempotent ReportResult.
CREATE TABLE result_updates (
  update_uuid   text PRIMARY KEY,
  job_id        bigint NOT NULL,
  attempt       integer NOT NULL,
  fencing_token bigint NOT NULL,
  round_id      bigint,
  applied_ms    bigint NOT NULL
);

CREATE TABLE baselines (
  team          text NOT NULL,
  label         text NOT NULL,
  round_id      bigint,
  collection_id text,
  pinned_ms     bigint NOT NULL,
  PRIMARY KEY (team, label)
);

CREATE TABLE events (
  id            bigserial PRIMARY KEY,
  at_ms         bigint NOT NULL,
  collection_id text,
  job_id        bigint,
  kind          text NOT NULL,
  detail        text NOT NULL
);
CREATE INDEX events_by_job ON events (job_id, id);
