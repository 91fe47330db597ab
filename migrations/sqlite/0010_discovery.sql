-- Discovery jobs (PROFILE_MODE_DISCOVER, issue 15): the candidate table a succeeded discovery job
-- reported (a serialized npuperf.v1.DiscoveryResult, bounded by the server's limits); NULL for
-- every other job and for a discovery job that has not succeeded.
ALTER TABLE jobs ADD COLUMN discovery BLOB;
