"""A GraphQL answer as rows: the first list in ``data`` becomes the table.

`strata graphql --format table|compact` shows the rows an agent asked for
without making it parse JSON: the first list found in the answer (document
order, depth first) gives one row per item, nested objects flatten to dotted
columns (``evidence.path``), and the fields beside that list (``hasNextPage``,
``truncated``, a reason, ...) go into a note when the list is cut or empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from strata.cli.output import cell

# Page-info fields a caller must not miss: they say the list is not the whole answer.
CUT_FLAGS = ("hasNextPage", "truncated")


@dataclass(frozen=True)
class Rows:
    """The rows of one list in an answer, with what sat next to it."""

    path: str  # where the list was, e.g. "callers.nodes"
    headers: list[str]
    rows: list[list[Any]]
    beside: dict[str, Any] = field(default_factory=dict)  # scalar fields next to the list

    @property
    def cut(self) -> bool:
        """True when a field beside the list says it was cut."""
        return any(
            value is True and name.rsplit(".", 1)[-1] in CUT_FLAGS
            for name, value in self.beside.items()
        )

    def notes(self) -> list[str]:
        """What a reader of only the rows would otherwise miss: an empty or a cut list."""
        pairs = ", ".join(f"{k}={cell(v)}" for k, v in self.beside.items())
        said: list[str] = []
        if not self.rows:
            said.append(f"{self.path or 'data'} is empty" + (f" ({pairs})" if pairs else ""))
        elif self.cut:
            said.append(f"{self.path} is cut, more rows than shown ({pairs})")
        return said


def rows_of(data: Any) -> Rows:
    """The first list in ``data`` as rows; without a list, ``data`` itself as one row."""
    if data is None:
        return Rows("", [], [])
    found = _first_list(data, "")
    if found is None:
        flat = flatten(data) if isinstance(data, Mapping) else {"value": data}
        return Rows("", list(flat), [list(flat.values())])
    path, key, parent = found
    rest = {k: v for k, v in parent.items() if k != key}
    beside = {k: v for k, v in flatten(rest).items() if not isinstance(v, list)}
    flats = [flatten(i) if isinstance(i, Mapping) else {"value": i} for i in parent[key]]
    headers: list[str] = []
    for flat in flats:
        headers += [k for k in flat if k not in headers]
    return Rows(path, headers, [[f.get(h) for h in headers] for f in flats], beside)


def flatten(obj: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted keys; lists stay values (a cell shows them as JSON)."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _first_list(node: Any, path: str) -> tuple[str, str, Mapping[str, Any]] | None:
    """(dotted path, key, the object holding it) of the first list, depth first."""
    if not isinstance(node, Mapping):
        return None
    for key, value in node.items():
        here = f"{path}.{key}" if path else key
        if isinstance(value, list):
            return here, key, node
        deeper = _first_list(value, here)
        if deeper is not None:
            return deeper
    return None
