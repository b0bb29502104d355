"""Hybrid search over the graph: full text, vectors and graph proximity, as of any moment."""
