"""The code layer: parse source with tree-sitter, resolve references, write facts."""

from strata.code.native import guard

guard()  # before any compiled module is imported: a stale build must not run
