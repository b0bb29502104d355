"""The versioned ontology: the contract every write is checked against."""

from strata.ontology.loader import load_ontology
from strata.ontology.model import STATE, EdgeType, NodeType, Ontology, PropertySpec

__all__ = ["STATE", "EdgeType", "NodeType", "Ontology", "PropertySpec", "load_ontology"]
