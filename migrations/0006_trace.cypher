// Trace settle finds where a vanished symbol went by its body hash, and the
// trace layer syncs links by scope; both are lookups, not scans.
CREATE INDEX strata_state_body_hash IF NOT EXISTS FOR ()-[r:STATE]-() ON (r.body_hash);
CREATE INDEX strata_state_shape_hash IF NOT EXISTS FOR ()-[r:STATE]-() ON (r.shape_hash);
