// Strata's own bookkeeping: the migration records (also ensured by the runner).
CREATE CONSTRAINT strata_migration_uid IF NOT EXISTS
FOR (m:Migration) REQUIRE m.uid IS UNIQUE;
