"""Layer writers: each bound to exactly one layer of the ontology.

A writer refuses, before anything is written, a label or edge type of another
layer. Writers never import each other; layers meet only through node keys.
"""

from strata.writers.base import CodeWriter, KnowledgeWriter, LayerWriter, TraceWriter

__all__ = ["CodeWriter", "KnowledgeWriter", "LayerWriter", "TraceWriter"]
