// Fact-type time indexes no read uses (issue 11, write throughput). 0002 and 0006
// created a range index on valid_at, invalid_at, created_at, expired_at and
// invalidated_at of every fact relationship type, for `changes` on either axis.
// Every read, `changes` included, now reaches versions from their nodes through a
// key index and filters the times there (tests/integration/test_query_plans.py
// checks the plans), so these indexes were only written, never read: on
// bench/temporal.py they cost ~25% of Neo4j's CPU per written version (220 us ->
// 164 us with STATE's five dropped). Kept: every fact type's scope index (re-sync)
// and STATE's created_at (the search documents' cursor seeks new states by it).
// Nothing else changes: no fact is touched.
DROP INDEX strata_affects_created_at IF EXISTS;
DROP INDEX strata_affects_expired_at IF EXISTS;
DROP INDEX strata_affects_invalid_at IF EXISTS;
DROP INDEX strata_affects_invalidated_at IF EXISTS;
DROP INDEX strata_affects_valid_at IF EXISTS;
DROP INDEX strata_at_commit_created_at IF EXISTS;
DROP INDEX strata_at_commit_expired_at IF EXISTS;
DROP INDEX strata_at_commit_invalid_at IF EXISTS;
DROP INDEX strata_at_commit_invalidated_at IF EXISTS;
DROP INDEX strata_at_commit_valid_at IF EXISTS;
DROP INDEX strata_calls_created_at IF EXISTS;
DROP INDEX strata_calls_expired_at IF EXISTS;
DROP INDEX strata_calls_invalid_at IF EXISTS;
DROP INDEX strata_calls_invalidated_at IF EXISTS;
DROP INDEX strata_calls_valid_at IF EXISTS;
DROP INDEX strata_constrains_created_at IF EXISTS;
DROP INDEX strata_constrains_expired_at IF EXISTS;
DROP INDEX strata_constrains_invalid_at IF EXISTS;
DROP INDEX strata_constrains_invalidated_at IF EXISTS;
DROP INDEX strata_constrains_valid_at IF EXISTS;
DROP INDEX strata_contains_created_at IF EXISTS;
DROP INDEX strata_contains_expired_at IF EXISTS;
DROP INDEX strata_contains_invalid_at IF EXISTS;
DROP INDEX strata_contains_invalidated_at IF EXISTS;
DROP INDEX strata_contains_valid_at IF EXISTS;
DROP INDEX strata_defines_created_at IF EXISTS;
DROP INDEX strata_defines_expired_at IF EXISTS;
DROP INDEX strata_defines_invalid_at IF EXISTS;
DROP INDEX strata_defines_invalidated_at IF EXISTS;
DROP INDEX strata_defines_valid_at IF EXISTS;
DROP INDEX strata_implemented_by_created_at IF EXISTS;
DROP INDEX strata_implemented_by_expired_at IF EXISTS;
DROP INDEX strata_implemented_by_invalid_at IF EXISTS;
DROP INDEX strata_implemented_by_invalidated_at IF EXISTS;
DROP INDEX strata_implemented_by_valid_at IF EXISTS;
DROP INDEX strata_implements_type_created_at IF EXISTS;
DROP INDEX strata_implements_type_expired_at IF EXISTS;
DROP INDEX strata_implements_type_invalid_at IF EXISTS;
DROP INDEX strata_implements_type_invalidated_at IF EXISTS;
DROP INDEX strata_implements_type_valid_at IF EXISTS;
DROP INDEX strata_imports_created_at IF EXISTS;
DROP INDEX strata_imports_expired_at IF EXISTS;
DROP INDEX strata_imports_invalid_at IF EXISTS;
DROP INDEX strata_imports_invalidated_at IF EXISTS;
DROP INDEX strata_imports_valid_at IF EXISTS;
DROP INDEX strata_inherits_created_at IF EXISTS;
DROP INDEX strata_inherits_expired_at IF EXISTS;
DROP INDEX strata_inherits_invalid_at IF EXISTS;
DROP INDEX strata_inherits_invalidated_at IF EXISTS;
DROP INDEX strata_inherits_valid_at IF EXISTS;
DROP INDEX strata_state_expired_at IF EXISTS;
DROP INDEX strata_state_invalid_at IF EXISTS;
DROP INDEX strata_state_invalidated_at IF EXISTS;
DROP INDEX strata_state_valid_at IF EXISTS;
DROP INDEX strata_supersedes_created_at IF EXISTS;
DROP INDEX strata_supersedes_expired_at IF EXISTS;
DROP INDEX strata_supersedes_invalid_at IF EXISTS;
DROP INDEX strata_supersedes_invalidated_at IF EXISTS;
DROP INDEX strata_supersedes_valid_at IF EXISTS;
DROP INDEX strata_verified_by_created_at IF EXISTS;
DROP INDEX strata_verified_by_expired_at IF EXISTS;
DROP INDEX strata_verified_by_invalid_at IF EXISTS;
DROP INDEX strata_verified_by_invalidated_at IF EXISTS;
DROP INDEX strata_verified_by_valid_at IF EXISTS;
