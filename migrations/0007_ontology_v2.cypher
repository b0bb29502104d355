// Ontology v2: Package.ecosystem allows `composer` (PHP). No key, index or
// constraint changes, so this migration only records that v2's schema is in place.
