"""The code layer: parse source with tree-sitter, resolve references, write facts."""
