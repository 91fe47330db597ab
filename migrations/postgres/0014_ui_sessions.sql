-- Browser sessions of the read-only web pages (issue 19; docs/security.md, "In the browser"): a
-- team token entered once in the login form becomes a session. Only the sha256 of the session's
-- 256-bit random id is kept (the cookie holds the id), with its team and expiry; logout deletes
-- the row, and expired rows are deleted at lookups and logins.
CREATE TABLE ui_sessions (
  id_sha256  text PRIMARY KEY,             -- sha256 hex of the cookie's id
  team       text NOT NULL,
  created_ms bigint NOT NULL,
  expires_ms bigint NOT NULL               -- the session is dead from here on
);
CREATE INDEX ui_sessions_by_expiry ON ui_sessions (expires_ms);
