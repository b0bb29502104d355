"""Load and check ``ontology/strata.vN.yaml`` into the frozen models.

Released versions are frozen: ``ontology/RELEASED`` pins each released file
by sha256, and loading refuses a directory where a released file changed (a
change is a new ``strata.vN+1.yaml`` plus a migration; see ontology/README.md).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, cast, get_args

import yaml

from strata.errors import OntologyViolation
from strata.ontology.model import (
    LABEL_RE,
    PROPERTY_RE,
    REL_TYPE_RE,
    STATE,
    EdgeType,
    Layer,
    NodeType,
    Ontology,
    PropertySet,
    PropertySpec,
    ScalarType,
    Writer,
)

_FILE = re.compile(r"^strata\.v(\d+)\.yaml$")
RELEASED_FILE = "RELEASED"
_RELEASED_LINE = re.compile(r"^(strata\.v(\d+)\.yaml)\s+([0-9a-f]{64})$")
_SCALARS = set(get_args(ScalarType))
_WRITERS = set(get_args(Writer))


class _Problems:
    """Collects every problem of a file, so one run reports them all."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[str] = []

    def add(self, where: str, what: str) -> None:
        self.items.append(f"{where}: {what}")

    def raise_if_any(self) -> None:
        if self.items:
            raise OntologyViolation(
                f"invalid ontology {self.source}:\n  - " + "\n  - ".join(self.items),
                rule="ontology_file",
                problems=self.items,
            )


def ontology_files(directory: Path) -> dict[int, Path]:
    """Version number to file, for every ``strata.vN.yaml`` in the directory."""
    found: dict[int, Path] = {}
    for path in directory.glob("strata.v*.yaml"):
        match = _FILE.match(path.name)
        if match:
            found[int(match.group(1))] = path
    return found


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, as ``RELEASED`` records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def released_versions(directory: Path) -> dict[int, str]:
    """Version number to pinned sha256, from ``RELEASED`` (empty when there is none).

    Each line is ``strata.vN.yaml <sha256>``; blank lines and ``#`` comments pass.
    """
    path = directory / RELEASED_FILE
    if not path.exists():
        return {}
    pinned: dict[int, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        match = _RELEASED_LINE.match(text)
        if match is None:
            raise OntologyViolation(
                f"{RELEASED_FILE} line {number}: expected 'strata.vN.yaml <sha256>'",
                rule="ontology_released",
            )
        pinned[int(match.group(2))] = match.group(3)
    return pinned


def check_released(directory: Path) -> None:
    """Refuse the directory if a released version's file is missing or was changed."""
    files = ontology_files(directory)
    for version, pinned in sorted(released_versions(directory).items()):
        if version not in files:
            raise OntologyViolation(
                f"released ontology v{version} is missing from {directory}",
                rule="ontology_released",
            )
        actual = file_sha256(files[version])
        if actual != pinned:
            newest = max(files)
            raise OntologyViolation(
                f"ontology v{version} is released and frozen, but {files[version].name} "
                f"changed (sha256 {actual[:12]}..., released {pinned[:12]}...)",
                hint=f"restore it and put the change in strata.v{newest + 1}.yaml "
                "with a migration (ontology/README.md)",
                rule="ontology_released",
            )


def load_ontology(directory: Path, version: int | None = None) -> Ontology:
    """Load the newest version (or ``version``) from the ontology directory.

    Every released version's file is checked against its pin first, so a
    process never runs on a silently edited contract.
    """
    files = ontology_files(directory)
    if not files:
        raise OntologyViolation(f"no strata.vN.yaml in {directory}", rule="ontology_file")
    check_released(directory)
    chosen = max(files) if version is None else version
    if chosen not in files:
        raise OntologyViolation(
            f"ontology version {chosen} not found in {directory} (have {sorted(files)})",
            rule="ontology_file",
        )
    return load_file(files[chosen])


def load_file(path: Path) -> Ontology:
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise OntologyViolation(f"{path} is not valid YAML: {exc}", rule="ontology_file") from exc
    ontology = parse(raw, source=str(path))
    match = _FILE.match(path.name)
    if match and int(match.group(1)) != ontology.version:
        raise OntologyViolation(
            f"{path.name} declares version {ontology.version}", rule="ontology_file"
        )
    return ontology


def parse(raw: Any, *, source: str = "<ontology>") -> Ontology:
    """Build the models from parsed YAML, reporting every problem at once."""
    problems = _Problems(source)
    if not isinstance(raw, dict):
        problems.add("top level", "must be a mapping")
        problems.raise_if_any()
    version = raw.get("version")
    if not isinstance(version, int) or version < 1:
        problems.add("version", "must be a positive integer")
    layers = tuple(raw.get("layers") or ())
    if set(layers) != {"code", "knowledge", "trace"}:
        problems.add("layers", "must be exactly code, knowledge, trace")
    facts = _property_set(
        {"required": {}, "optional": raw.get("fact_properties") or {}}, "fact_properties", problems
    )
    nodes: dict[str, NodeType] = {}
    for label, spec in (raw.get("nodes") or {}).items():
        node = _node(label, spec, layers, problems)
        if node is not None:
            nodes[label] = node
    edges: dict[str, EdgeType] = {}
    for rel_type, spec in (raw.get("edges") or {}).items():
        edge = _edge(rel_type, spec, layers, nodes, problems)
        if edge is not None:
            edges[rel_type] = edge
    if not nodes:
        problems.add("nodes", "at least one node type is required")
    problems.raise_if_any()
    return Ontology(
        version=cast(int, version),
        name=str(raw.get("name") or "strata"),
        layers=cast(tuple[Layer, ...], layers),
        fact_properties=facts,
        nodes=nodes,
        edges=edges,
    )


def _prop(name: Any, spec: Any, where: str, problems: _Problems) -> PropertySpec | None:
    if not isinstance(name, str) or not PROPERTY_RE.fullmatch(name):
        problems.add(where, f"property name {name!r} must be snake_case")
        return None
    if isinstance(spec, dict) and set(spec) == {"enum"}:
        values = spec["enum"]
        if (
            not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) for v in values)
        ):
            problems.add(f"{where}.{name}", "enum must be a non-empty list of strings")
            return None
        return PropertySpec(name, "enum", tuple(values))
    if spec not in _SCALARS:
        problems.add(f"{where}.{name}", f"unknown type {spec!r} (use {sorted(_SCALARS)} or enum)")
        return None
    return PropertySpec(name, cast(ScalarType, spec))


def _props(raw: Any, where: str, problems: _Problems) -> tuple[PropertySpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        problems.add(where, "must be a mapping of property name to type")
        return ()
    specs = [_prop(name, spec, where, problems) for name, spec in raw.items()]
    return tuple(s for s in specs if s is not None)


def _property_set(raw: Any, where: str, problems: _Problems) -> PropertySet:
    raw = raw or {}
    if not isinstance(raw, dict) or set(raw) - {"required", "optional"}:
        problems.add(where, "must have only `required` and `optional` maps")
        return PropertySet()
    required = _props(raw.get("required"), f"{where}.required", problems)
    optional = _props(raw.get("optional"), f"{where}.optional", problems)
    both = {p.name for p in required} & {p.name for p in optional}
    if both:
        problems.add(where, f"declared both required and optional: {sorted(both)}")
    return PropertySet(required, optional)


def _layer(value: Any, layers: tuple[str, ...], where: str, problems: _Problems) -> Layer | None:
    if value not in layers:
        problems.add(where, f"layer {value!r} is not one of {list(layers)}")
        return None
    return cast(Layer, value)


def _writer(value: Any, where: str, problems: _Problems) -> Writer:
    value = value or "strata"
    if value not in _WRITERS:
        problems.add(where, f"writer {value!r} is not one of {sorted(_WRITERS)}")
        return "strata"
    return cast(Writer, value)


def _node(label: Any, spec: Any, layers: tuple[str, ...], problems: _Problems) -> NodeType | None:
    where = f"nodes.{label}"
    if not isinstance(label, str) or not LABEL_RE.fullmatch(label):
        problems.add(where, "label must be PascalCase letters and digits")
        return None
    if not isinstance(spec, dict):
        problems.add(where, "must be a mapping")
        return None
    unknown = set(spec) - {"layer", "identity", "key", "state", "writer"}
    if unknown:
        problems.add(where, f"unknown fields {sorted(unknown)}")
    layer = _layer(spec.get("layer"), layers, f"{where}.layer", problems)
    identity = _props(spec.get("identity"), f"{where}.identity", problems)
    names = {p.name for p in identity}
    key = tuple(spec.get("key") or ())
    if not key:
        problems.add(f"{where}.key", "a key (list of identity fields) is required")
    missing = [k for k in key if k not in names]
    if missing:
        problems.add(f"{where}.key", f"key fields {missing} are not identity fields")
    writer = _writer(spec.get("writer"), f"{where}.writer", problems)
    partition = "group_id" if writer == "graphiti" else "repo"
    if partition not in names:
        problems.add(f"{where}.identity", f"must include `{partition}` (the access partition)")
    state = _property_set(spec.get("state"), f"{where}.state", problems)
    clash = names & set(state.all)
    if clash:
        problems.add(where, f"properties both identity and state: {sorted(clash)}")
    if layer is None:
        return None
    return NodeType(label, layer, identity, key, state, writer)


def _edge(
    rel_type: Any,
    spec: Any,
    layers: tuple[str, ...],
    nodes: dict[str, NodeType],
    problems: _Problems,
) -> EdgeType | None:
    where = f"edges.{rel_type}"
    if not isinstance(rel_type, str) or not REL_TYPE_RE.fullmatch(rel_type) or rel_type == STATE:
        problems.add(where, f"type must be UPPER_SNAKE and not the reserved {STATE}")
        return None
    if not isinstance(spec, dict):
        problems.add(where, "must be a mapping")
        return None
    unknown = set(spec) - {"layer", "from", "to", "required", "optional", "writer"}
    if unknown:
        problems.add(where, f"unknown fields {sorted(unknown)}")
    layer = _layer(spec.get("layer"), layers, f"{where}.layer", problems)
    ends: dict[str, tuple[str, ...]] = {}
    for end in ("from", "to"):
        labels = tuple(spec.get(end) or ())
        if not labels:
            problems.add(f"{where}.{end}", "at least one label is required")
        undeclared = [label for label in labels if label not in nodes]
        if undeclared:
            problems.add(f"{where}.{end}", f"undeclared labels {undeclared}")
        ends[end] = labels
    props = _property_set(
        {"required": spec.get("required"), "optional": spec.get("optional")}, where, problems
    )
    writer = _writer(spec.get("writer"), f"{where}.writer", problems)
    if layer is None:
        return None
    return EdgeType(rel_type, layer, ends["from"], ends["to"], props, writer)
