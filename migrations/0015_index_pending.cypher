// Files a code write of several transactions was re-syncing when it stopped
// (strata.code.pending): bookkeeping, not a fact. The next run of the same
// repository and ref reads them back from the graph instead of trusting git's diff.
CREATE CONSTRAINT strata_index_pending_key IF NOT EXISTS FOR (p:IndexPending) REQUIRE p.key IS UNIQUE;
