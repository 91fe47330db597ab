-- Bundles per team (docs/security.md, "Tenants and bundles"): the content stays deduplicated by
-- sha256, in chunks (uploads and downloads stream them; no bundle is held whole in memory), and
-- every team that uploaded a bundle owns it. A team sees, references and is charged for (its
-- quota) only the bundles it owns; the collector drops ownerships unused for the retention
-- period and deletes contents nobody owns.
CREATE TABLE bundle_chunks (
  sha256 TEXT NOT NULL REFERENCES bundles (sha256) ON DELETE CASCADE,
  seq    INTEGER NOT NULL,                 -- 0, 1, ... in content order
  data   BLOB NOT NULL,
  PRIMARY KEY (sha256, seq)
);
INSERT INTO bundle_chunks (sha256, seq, data) SELECT sha256, 0, content FROM bundles;
ALTER TABLE bundles DROP COLUMN content;   -- bundles.team/name: the first uploader, informational

CREATE TABLE bundle_owners (
  team    TEXT NOT NULL,
  sha256  TEXT NOT NULL REFERENCES bundles (sha256) ON DELETE CASCADE,
  name    TEXT NOT NULL,
  used_ms INTEGER NOT NULL,                -- last upload, or submission referencing it
  PRIMARY KEY (team, sha256)
);
CREATE INDEX bundle_owners_by_sha ON bundle_owners (sha256);
CREATE INDEX bundle_owners_by_use ON bundle_owners (used_ms);
-- Every existing bundle belongs to its uploader and starts a full retention period now.
INSERT INTO bundle_owners (team, sha256, name, used_ms)
  SELECT team, sha256, name, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM bundles;
