// Strata's own bookkeeping: the migration records (also ensured by the runner).
CREATE CONSTRAINT strata_migration_id IF NOT EXISTS
FOR (m:Migration) REQUIRE m.id IS UNIQUE;
