// Where `strata index PATH` read a repository from (strata.locations): bookkeeping,
// not a fact. Readers of blobs (search body words, context packs, cards) look a
// repository up here when it has no registered path and no mirror.
CREATE CONSTRAINT strata_local_source_repo IF NOT EXISTS FOR (s:LocalSource) REQUIRE s.repo IS UNIQUE;
