-- An agent's slot: which installation on its host it is (a hash of its work directory). A new
-- instance of the same host, boot and slot replaces the older ones (a restart); agents of other
-- slots on the same host coexist and share the host-wide device locks. '' for agents that
-- registered before this migration (they replace each other, as before).
ALTER TABLE agents ADD COLUMN slot TEXT NOT NULL DEFAULT '';
