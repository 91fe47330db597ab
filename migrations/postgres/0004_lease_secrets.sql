-- Lease secrets (docs/security.md, "Agents and leases"). Every claim stores the sha256 (hex) of a
-- random secret it hands to the agent once; reports, renewals and adoptions of the lease must
-- present the secret (server/core/job_rules.h CheckLease).
--
-- Backfill: none on purpose. A lease granted before this migration keeps NULL: it was handed out
-- without a secret, so it stays valid without one (fencing token and holder still checked) until
-- it ends (result, expiry, cancellation); the job's next lease has a secret. Never edit an applied
-- migration: add 0005_*.sql.
ALTER TABLE jobs ADD COLUMN lease_secret_sha256 text;

-- Pruning agents not seen for --agent-retention (Store::PruneAgents).
CREATE INDEX agents_by_last_seen ON agents (last_seen_ms);

-- npuperf_claim gains the secret's hash (p_secret_sha256), and the old signature goes, so that
-- no caller can lease without one: its one definition is
-- migrations/postgres/definitions/npuperf_claim.sql, run after the migrations.
