-- Bundles per team (docs/security.md, "Tenants and bundles"): the content stays deduplicated by
-- sha256, in chunks (uploads and downloads stream them; no bundle is held whole in memory), and
-- every team that uploaded a bundle owns it. A team sees, references and is charged for (its
-- quota) only the bundles it owns; the collector drops ownerships unused for the retention
-- period and deletes contents nobody owns. The same tables as sqlite/0006_bundle_owners.sql.
CREATE TABLE bundle_chunks (
  sha256 text NOT NULL REFERENCES bundles (sha256) ON DELETE CASCADE,
  seq    integer NOT NULL,                 -- 0, 1, ... in content order
  data   bytea NOT NULL,
  PRIMARY KEY (sha256, seq)
);
INSERT INTO bundle_chunks (sha256, seq, data) SELECT sha256, 0, content FROM bundles;
ALTER TABLE bundles DROP COLUMN content;   -- bundles.team/name: the first uploader, informational

CREATE TABLE bundle_owners (
  team    text NOT NULL,
  sha256  text NOT NULL REFERENCES bundles (sha256) ON DELETE CASCADE,
  name    text NOT NULL,
  used_ms bigint NOT NULL,                 -- last upload, or submission referencing it
  PRIMARY KEY (team, sha256)
);
CREATE INDEX bundle_owners_by_sha ON bundle_owners (sha256);
CREATE INDEX bundle_owners_by_use ON bundle_owners (used_ms);
-- Every existing bundle belongs to its uploader and starts a full retention period now.
INSERT INTO bundle_owners (team, sha256, name, used_ms)
  SELECT team, sha256, name, (extract(epoch from now()) * 1000)::bigint FROM bundles;
