"""Language adapters: one per language, each a tree-sitter grammar and a query file."""
