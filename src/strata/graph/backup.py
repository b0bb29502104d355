"""Logical backup and restore of the whole graph, through Bolt.

A backup is one gzip'd JSON-lines file: a header (format, ontology version,
the migrations the graph records), every node (its labels and properties,
under a sequence number), every relationship (type, ends by sequence number,
properties), and a footer with the counts. It needs no admin tool, so the same
file moves between the embedded development store, docker compose and a Helm
deployment.

Restore goes into an **empty** graph: it first reads the whole file and checks
it (format, footer counts, every label and relationship type against the
whitelist, migrations it records known to this code), so a truncated or
foreign file is refused before anything is written; then it applies this
code's migrations (schema and their records), and loads nodes and
relationships in batched ``UNWIND`` writes. Node identity during the load is a
temporary ``StrataRestore`` label with an index, removed at the end.

Times keep their full precision (Neo4j ``DateTime`` values travel as ISO text
with nanoseconds and come back as the same type).
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import neo4j.time

from strata.errors import ValidationError
from strata.graph import migrations
from strata.graph.gateway import Gateway, checked_label, checked_property, checked_rel_type
from strata.ontology.model import DERIVED_LABELS, DERIVED_TYPES, STATE, Ontology

FORMAT = "strata-backup"
FORMAT_VERSION = 1
PAGE = 5000
BATCH = 2000
RESTORE_LABEL = "StrataRestore"
# Labels of Strata's own bookkeeping (not facts): written by migrations, keys, the registry.
BOOKKEEPING_LABELS = ("Migration", "RepoRegistration", "ApiKey", "LocalSource", "IndexPending")
# Derived search documents are rebuilt from the facts on the first search or reindex
# after a restore, so a backup leaves them, and their INDEXES edges, out.
DERIVED = frozenset(DERIVED_LABELS)

ALL_LABELS = "CALL db.labels() YIELD label RETURN label"
NODE_PAGE = """
MATCH (n) WHERE id(n) > $after
RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props
ORDER BY id(n) LIMIT $limit
"""
REL_PAGE = """
MATCH (a)-[r]->(b) WHERE id(r) > $after
RETURN id(r) AS id, type(r) AS type, id(a) AS src, id(b) AS dst, properties(r) AS props
ORDER BY id(r) LIMIT $limit
"""
COUNT_NODES = "MATCH (n) RETURN count(n) AS n"
CREATE_RESTORE_INDEX = (
    f"CREATE INDEX strata_restore_id IF NOT EXISTS FOR (n:{RESTORE_LABEL}) ON (n.strata_restore_id)"
)
AWAIT_INDEXES = "CALL db.awaitIndexes(300)"
DROP_RESTORE_INDEX = "DROP INDEX strata_restore_id IF EXISTS"
CREATE_NODES = """
UNWIND $rows AS row
CREATE (n:{labels}) SET n = row.props, n.strata_restore_id = row.id
"""
CREATE_RELS = """
UNWIND $rows AS row
MATCH (a:{restore} {{strata_restore_id: row.src}}), (b:{restore} {{strata_restore_id: row.dst}})
CREATE (a)-[r:{type}]->(b) SET r = row.props
"""
CLEAR_RESTORE = f"""
MATCH (n:{RESTORE_LABEL})
CALL (n) {{ REMOVE n:{RESTORE_LABEL} REMOVE n.strata_restore_id }} IN TRANSACTIONS OF 10000 ROWS
"""


@dataclass(slots=True)
class BackupSummary:
    """What a dump wrote or a restore loaded."""

    path: str
    nodes: int = 0
    relationships: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def allowed_labels(ontology: Ontology) -> frozenset[str]:
    return frozenset([*ontology.labels(), *BOOKKEEPING_LABELS])


def allowed_types(ontology: Ontology) -> frozenset[str]:
    return frozenset([STATE, *ontology.edge_types()])


# -- values -------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """A property value as JSON (typed wrappers for what JSON has no type for)."""
    if isinstance(value, neo4j.time.DateTime):
        zone = getattr(value.tzinfo, "zone", None)
        if zone and zone != "UTC":  # a named zone; the driver reads UTC offsets as "UTC"
            return {"$dt": value.iso_format(), "$tz": zone}
        return {"$dt": value.iso_format()}
    if isinstance(value, neo4j.time.Date):
        return {"$date": value.iso_format()}
    if isinstance(value, neo4j.time.Duration):
        return {"$dur": [value.months, value.days, value.seconds, value.nanoseconds]}
    if isinstance(value, bytes | bytearray):
        return {"$b64": base64.b64encode(value).decode()}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise ValidationError(f"cannot back up a property value of type {type(value).__name__}")


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "$dt" in value:
            parsed = neo4j.time.DateTime.from_iso_format(value["$dt"])
            if "$tz" in value:
                return parsed.astimezone(ZoneInfo(value["$tz"]))
            # An offset, not the named zone "UTC" the parser picks (Neo4j keeps them apart).
            return parsed.replace(tzinfo=timezone(parsed.utcoffset() or timedelta(0)))
        if "$date" in value:
            return neo4j.time.Date.from_iso_format(value["$date"])
        if "$dur" in value:
            months, days, seconds, nanos = value["$dur"]
            return neo4j.time.Duration(months=months, days=days, seconds=seconds, nanoseconds=nanos)
        if "$b64" in value:
            return base64.b64decode(value["$b64"])
        raise ValidationError(f"unknown typed value {sorted(value)} in the backup")
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def _props(raw: dict[str, Any]) -> dict[str, Any]:
    return {checked_property(k): encode(v) for k, v in raw.items()}


def _unprops(raw: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValidationError("properties must be an object")
    return {checked_property(k): decode(v) for k, v in raw.items()}


# -- dump ---------------------------------------------------------------------------


def dump(
    gateway: Gateway,
    ontology: Ontology,
    path: Path,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> BackupSummary:
    """Write every node and relationship of the graph to ``path`` (gzip'd JSON lines).

    Refuses (before writing the file) a graph that holds a label outside the
    ontology and Strata's bookkeeping, since restore would refuse it too.
    """
    started = datetime.now(UTC)
    labels_ok = allowed_labels(ontology)
    found = {row["label"] for row in gateway.read(ALL_LABELS)} - {RESTORE_LABEL} - DERIVED
    unknown = sorted(found - labels_ok)
    if unknown:
        raise ValidationError(
            f"the graph holds labels outside the ontology: {', '.join(unknown)}",
            hint="migrate or remove them before taking a backup",
        )
    summary = BackupSummary(str(path))
    recorded = [
        {"id": int(r["id"]), "name": r["name"], "checksum": r["checksum"]}
        for r in gateway.read(migrations.APPLIED, namespace=migrations.DEFAULT_NAMESPACE)
    ]
    tmp = path.with_name(path.name + ".partial")
    labels: dict[str, int] = defaultdict(int)
    types: dict[str, int] = defaultdict(int)
    with gzip.open(tmp, "wt", encoding="utf-8") as out:
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "ontology": ontology.version,
            "migrations": recorded,
            "created_at": started.isoformat(),
        }
        out.write(json.dumps(header) + "\n")
        for row in _pages(gateway, NODE_PAGE):
            if "Migration" in row["labels"] or DERIVED & set(row["labels"]):
                continue  # restore applies this code's migrations, which record themselves
            for label in row["labels"]:
                labels[label] += 1
            out.write(
                json.dumps({"n": row["id"], "l": sorted(row["labels"]), "p": _props(row["props"])})
                + "\n"
            )
            summary.nodes += 1
            if progress and summary.nodes % 10000 == 0:
                progress("nodes", summary.nodes)
        for row in _pages(gateway, REL_PAGE):
            if row["type"] in DERIVED_TYPES:
                continue
            types[row["type"]] += 1
            out.write(
                json.dumps(
                    {"r": row["type"], "s": row["src"], "e": row["dst"], "p": _props(row["props"])}
                )
                + "\n"
            )
            summary.relationships += 1
            if progress and summary.relationships % 10000 == 0:
                progress("relationships", summary.relationships)
        out.write(
            json.dumps({"end": {"nodes": summary.nodes, "relationships": summary.relationships}})
            + "\n"
        )
    tmp.replace(path)
    summary.labels, summary.types = dict(labels), dict(types)
    summary.seconds = (datetime.now(UTC) - started).total_seconds()
    return summary


def _pages(gateway: Gateway, query: str) -> Iterator[dict[str, Any]]:
    after = -1
    while True:
        rows = gateway.read(query, after=after, limit=PAGE, timeout=300)
        yield from rows
        if len(rows) < PAGE:
            return
        after = int(rows[-1]["id"])


# -- restore ------------------------------------------------------------------------


@dataclass(slots=True)
class _Loaded:
    """A backup read whole and checked: nodes grouped by label set, relationships by type."""

    name: str
    labels_ok: frozenset[str]
    types_ok: frozenset[str]
    header: dict[str, Any] | None = None
    end: dict[str, Any] | None = None
    nodes: dict[tuple[str, ...], list[dict[str, Any]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    rels: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    count_nodes: int = 0
    count_rels: int = 0

    def take(self, record: dict[str, Any], number: int) -> None:
        """One line of the file, checked."""
        where = f"{self.name} line {number}"
        if self.header is None:
            if record.get("format") != FORMAT or record.get("version") != FORMAT_VERSION:
                raise ValidationError(
                    f"{self.name} is not a Strata backup "
                    f"(format {record.get('format')!r} v{record.get('version')})"
                )
            self.header = record
        elif self.end is not None:
            raise ValidationError(f"{where}: data after the footer")
        elif "n" in record:
            group = tuple(record["l"])
            bad = [label for label in group if label not in self.labels_ok]
            if bad or not group:
                raise ValidationError(f"{where}: label {bad or group} is not declared")
            self.nodes[group].append({"id": int(record["n"]), "props": _unprops(record["p"])})
            self.count_nodes += 1
        elif "r" in record:
            if record["r"] not in self.types_ok:
                raise ValidationError(f"{where}: relationship type {record['r']!r} is not declared")
            self.rels[record["r"]].append(
                {"src": int(record["s"]), "dst": int(record["e"]), "props": _unprops(record["p"])}
            )
            self.count_rels += 1
        elif "end" in record:
            self.end = record["end"]
        else:
            raise ValidationError(f"{where}: unknown record")

    def finish(self, directory: Path) -> None:
        """The footer matches the records, and this code knows every recorded migration."""
        if self.header is None or self.end is None:
            missing = "header" if self.header is None else "footer"
            raise ValidationError(f"{self.name} is truncated (no {missing})")
        counted = {"nodes": self.count_nodes, "relationships": self.count_rels}
        if self.end != counted:
            raise ValidationError(
                f"{self.name}: footer counts {self.end} do not match the records {counted}"
            )
        known = {m.id: m.checksum for m in migrations.load_migrations(directory)}
        for recorded in self.header["migrations"]:
            if known.get(int(recorded["id"])) != recorded["checksum"]:
                raise ValidationError(
                    f"the backup was taken under migration {int(recorded['id']):04d} "
                    f"({recorded['name']}), which this code does not have",
                    hint="restore with the release that took the backup, or a newer one",
                )


def read_backup(path: Path, ontology: Ontology, directory: Path) -> _Loaded:
    """Read and check the whole file; nothing is written. Raises ValidationError."""
    loaded = _Loaded(path.name, allowed_labels(ontology), allowed_types(ontology))
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                loaded.take(json.loads(line), number)
    except ValidationError:
        raise
    except (OSError, EOFError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValidationError(f"{path.name} cannot be read as a backup: {exc}") from exc
    loaded.finish(directory)
    return loaded


def restore(
    gateway: Gateway,
    ontology: Ontology,
    path: Path,
    migrations_dir: Path,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> BackupSummary:
    """Load a backup into an empty graph (checked whole before the first write)."""
    started = datetime.now(UTC)
    loaded = read_backup(path, ontology, migrations_dir)
    rows = gateway.read(COUNT_NODES)
    present = int(rows[0]["n"]) if rows else 0
    migrated = {
        int(r["id"])
        for r in gateway.read(migrations.APPLIED, namespace=migrations.DEFAULT_NAMESPACE)
    }
    if present > len(migrated):
        raise ValidationError(
            f"the graph is not empty ({present} nodes): restore only into a fresh store",
            hint="point STRATA_NEO4J_URI at a new, empty Neo4j",
        )
    migrations.migrate(gateway, migrations_dir)
    gateway.run_autocommit(CREATE_RESTORE_INDEX)
    gateway.run_autocommit(AWAIT_INDEXES)
    summary = BackupSummary(str(path))
    restore_label = checked_label(RESTORE_LABEL)
    for group, items in loaded.nodes.items():
        text = CREATE_NODES.format(labels=":".join([*map(checked_label, group), restore_label]))
        for start in range(0, len(items), BATCH):
            batch = items[start : start + BATCH]
            gateway.write(text, rows=batch, timeout=300)
            summary.nodes += len(batch)
            if progress:
                progress("nodes", summary.nodes)
        for label in group:
            summary.labels[label] = summary.labels.get(label, 0) + len(items)
    for rel_type, items in loaded.rels.items():
        text = CREATE_RELS.format(restore=restore_label, type=checked_rel_type(rel_type))
        for start in range(0, len(items), BATCH):
            batch = items[start : start + BATCH]
            gateway.write(text, rows=batch, timeout=300)
            summary.relationships += len(batch)
            if progress:
                progress("relationships", summary.relationships)
        summary.types[rel_type] = len(items)
    gateway.run_autocommit(CLEAR_RESTORE, timeout=600)
    gateway.run_autocommit(DROP_RESTORE_INDEX)
    summary.seconds = (datetime.now(UTC) - started).total_seconds()
    return summary
