-- Artifacts (issue 19; docs/storage.md, "Artifacts"): the raw msprof output an agent kept for a
-- round (keep_raw_output), a gzip-compressed tar. The bytes live outside the database, in the
-- artifact directory (--artifact-dir; for SQLite by default <db>.artifacts beside the database),
-- content-addressed as sha256/<ab>/<sha256>; these rows are the metadata that reference them.
-- A file no row references any more is deleted by the sweep (retention) that removed the last row.
CREATE TABLE artifacts (
  round_id   INTEGER NOT NULL REFERENCES rounds (id),
  team       TEXT NOT NULL,                -- the round's team (quota, retention, access)
  name       TEXT NOT NULL,                -- the agent's file name, e.g. raw.tar.gz
  sha256     TEXT NOT NULL,                -- of the compressed bytes: the file's address
  size_bytes INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,             -- retention counts from here
  PRIMARY KEY (round_id, sha256)
);
CREATE INDEX artifacts_by_team ON artifacts (team);
CREATE INDEX artifacts_by_sha ON artifacts (sha256);
CREATE INDEX artifacts_by_created ON artifacts (created_ms);
