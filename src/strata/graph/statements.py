"""The fact store's Cypher, as named templates.

``{label}``, ``{rel}``, ``{src}`` and ``{dst}`` are filled only with names the
ontology declared and the gateway's identifier checks passed
(:meth:`strata.graph.store.FactStore._cypher`); every value is a parameter.
Times travel as wire strings (:func:`strata.temporal.to_wire`) and are parsed
by ``datetime()`` in the database: the driver's datetime codec costs far more.

A new version's properties go in with ``SET r += row.props, r.valid_at = ...``
on a relationship just created (the same result as ``SET r = map``). Neo4j
5.26 still plans an Eager (rows buffered) between the map and the scalar sets;
measured, it is not where the time goes: writing the ~16 properties is.
"""

from __future__ import annotations

# Current versions are read with their hash and times only: remainders are
# copied server-side (COPY_VERSIONS), so content never makes the round trip.
SLIM_PROJECTION = (
    "{hash: r.hash, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at), "
    "created_at: toString(r.created_at), invalidated_at: toString(r.invalidated_at)}"
)

# What both lock-and-read statements do once their row's node is found: lock it,
# then read its current versions under the lock.
_LOCK_THEN_READ = """
SET n._lock = true
REMOVE n._lock
WITH n, row
OPTIONAL MATCH (n)-[r:STATE]->(n)
WHERE r.expired_at IS NULL AND (r.invalid_at IS NULL OR r.invalid_at > datetime(row.since))
RETURN row.key AS key, elementId(n) AS node, elementId(r) AS ref,
       CASE WHEN r IS NULL THEN null ELSE {projection} END AS props
"""

# Merge the nodes of a batch's state slots, lock each (``SET _lock`` then
# ``REMOVE``: Neo4j's documented way to take a write lock before reading), and
# read, under that lock, the current versions that end after the earliest
# change planned for the slot (older valid history is never read): one
# statement and one key lookup per slot. A node without such a version answers
# one row with a null ``ref``; ``node`` addresses it in the writes that follow.
MERGE_LOCK_READ = (
    """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = datetime($tx)"""
    + _LOCK_THEN_READ
)

# The same for slots whose facts only close (no identity to create a node
# from): a node that does not exist has nothing to close and answers no row.
LOCK_READ = (
    """
UNWIND $rows AS row
MATCH (n:{label} {{key: row.key}})"""
    + _LOCK_THEN_READ
)

LOCK_NODES = """
UNWIND $keys AS key
MATCH (n:{label} {{key: key}})
SET n._lock = true
REMOVE n._lock
RETURN key
"""

CURRENT_EDGES = """
UNWIND $slots AS slot
MATCH (a:{src} {{key: slot.src}})-[r:{rel}]->(b:{dst} {{key: slot.dst}})
WHERE r.expired_at IS NULL AND (r.invalid_at IS NULL OR r.invalid_at > datetime(slot.since))
RETURN slot.src AS src, slot.dst AS dst, elementId(r) AS ref, {projection} AS props
"""

EXPIRE = """
UNWIND $refs AS ref
MATCH ()-[r]->()
WHERE elementId(r) = ref AND r.expired_at IS NULL
SET r.expired_at = datetime($tx)
RETURN count(r) AS expired
"""

CLOSE = """
UNWIND $rows AS row
MATCH ()-[r]->()
WHERE elementId(r) = row.ref AND r.expired_at IS NULL AND r.invalid_at IS NULL
SET r.invalid_at = datetime(row.invalid_at), r.invalidated_at = datetime($tx)
RETURN count(r) AS closed
"""

# A new state version on a node the same transaction locked (by element id:
# a direct record lookup instead of a second key-index seek).
CREATE_STATE_AT = """
UNWIND $rows AS row
MATCH (n)
WHERE elementId(n) = row.node
CREATE (n)-[r:STATE]->(n)
SET r += row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
RETURN count(r) AS created
"""

CREATE_STATE = """
UNWIND $rows AS row
MATCH (n:{label} {{key: row.key}})
CREATE (n)-[r:STATE]->(n)
SET r += row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
"""

COPY_VERSIONS = """
UNWIND $rows AS row
MATCH (a)-[old:{rel}]->(b)
WHERE elementId(old) = row.copy_of
CREATE (a)-[r:{rel}]->(b)
SET r = properties(old), r.valid_at = datetime(row.valid_at),
    r.invalid_at = datetime(row.invalid_at), r.created_at = datetime(row.created_at)
REMOVE r.expired_at, r.invalidated_at
"""

CREATE_EDGES = """
UNWIND $rows AS row
MATCH (a:{src} {{key: row.src}})
MATCH (b:{dst} {{key: row.dst}})
CREATE (a)-[r:{rel}]->(b)
SET r += row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
RETURN count(r) AS created
"""

# A fresh slot's node and first version in one pass: one key lookup per row, not two.
MERGE_FRESH_STATE = """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = datetime($tx)
CREATE (n)-[r:STATE]->(n)
SET r += row.props, r.valid_at = datetime(row.valid_at), r.invalid_at = datetime(row.invalid_at),
    r.created_at = datetime(row.created_at)
"""

MERGE_FRESH = """
UNWIND $rows AS row
MERGE (n:{label} {{key: row.key}})
ON CREATE SET n += row.identity, n.created_at = datetime($tx)
"""

# A failed first write's versions in some scopes, retracted: Strata stops believing
# them at $tx (never before their own transaction time; nothing is deleted). Only
# versions recorded since $since and still believed: what the scopes held before the
# write (closed history of a deleted branch, say) is left as it was; a STATE is
# retracted only on the layer's own labels ($labels; null for an edge type).
RETRACT_IN_SCOPES = """
UNWIND $scopes AS scope
MATCH (a)-[r:{rel} {{scope: scope}}]->()
WHERE r.expired_at IS NULL AND r.created_at >= datetime($since)
  AND ($labels IS NULL OR labels(a)[0] IN $labels)
SET r.expired_at = CASE WHEN r.created_at > datetime($tx) THEN r.created_at
                        ELSE datetime($tx) END
RETURN count(r) AS retracted
"""

# The open versions of one fact type in some scopes; each row says its type, so the
# reads of several types join into one statement with UNION ALL (one round trip).
OPEN_IN_SCOPES = """
UNWIND $scopes AS scope
MATCH (a)-[r:{rel} {{scope: scope}}]->(b)
WHERE r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN '{rel}' AS rel, labels(a)[0] AS src_label, a.key AS src, labels(b)[0] AS dst_label,
       b.key AS dst, r.hash AS hash, toString(r.valid_at) AS valid_at
"""
