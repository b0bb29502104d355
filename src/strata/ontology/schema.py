"""The Neo4j schema an ontology needs: key constraints and as-of indexes.

`strata ontology schema` prints these statements so that a new ontology
version's migration can be written from them; the test suite checks that the
migrated database holds a uniqueness constraint for every key.
"""

from __future__ import annotations

from strata.ontology.model import STATE, Ontology

# Identity lookups the read side relies on (beyond each label's key).
NODE_INDEXES: dict[str, tuple[tuple[str, ...], ...]] = {
    "Symbol": (("name",), ("repo", "ref", "path")),
    "File": (("repo", "ref"),),
    "Requirement": (("req_id",),),
    "Commit": (("sha",),),
}

# Per fact relationship type: scope (the re-sync of a file or a document reads what
# a scope holds open). Reads reach versions from their nodes (a key index) and filter
# times there; a range index per time on every fact type (migration 0002) cost ~25%
# of Neo4j's CPU per written version and no read seeks by it (0014 drops them).
FACT_INDEXES: tuple[tuple[str, ...], ...] = (("scope",),)
# STATE also by transaction time: the search documents' cursor seeks what is new.
STATE_INDEXES: tuple[tuple[str, ...], ...] = (("created_at",),)


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def constraint_name(label: str) -> str:
    return f"strata_{_snake(label)}_key"


def key_property(ontology: Ontology, label: str) -> str:
    """Strata's own labels are keyed by the composed ``key``; graphiti's by ``uuid``."""
    node = ontology.node(label)
    return "key" if node.writer == "strata" else node.key[0]


def schema_statements(ontology: Ontology) -> list[str]:
    """Idempotent statements (IF NOT EXISTS) for constraints and indexes."""
    statements: list[str] = []
    for label in ontology.nodes:
        prop = key_property(ontology, label)
        statements.append(
            f"CREATE CONSTRAINT {constraint_name(label)} IF NOT EXISTS "
            f"FOR (n:{label}) REQUIRE n.{prop} IS UNIQUE"
        )
    for label, indexes in NODE_INDEXES.items():
        ontology.node(label)
        for props in indexes:
            name = f"strata_{_snake(label)}_{'_'.join(props)}"
            columns = ", ".join(f"n.{p}" for p in props)
            statements.append(f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON ({columns})")
    for rel in ontology.fact_types():
        for props in FACT_INDEXES + (STATE_INDEXES if rel == STATE else ()):
            name = f"strata_{rel.lower()}_{'_'.join(props)}"
            columns = ", ".join(f"r.{p}" for p in props)
            statements.append(
                f"CREATE INDEX {name} IF NOT EXISTS FOR ()-[r:{rel}]-() ON ({columns})"
            )
    return statements
