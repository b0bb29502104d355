"""The hot reads are planned as key lookups on the real Neo4j, not as scans.

A read that names its node without a label cannot use a key index: Neo4j scans
every node (or, as the callees step did, every edge of a type) and the answer
costs seconds on a graph holding a large repository, while a small test graph
answers it in a millisecond. These tests read the plan (``EXPLAIN``) instead of
the clock, so they fail on such a query at any graph size.
"""

from __future__ import annotations

from typing import Any

import pytest

from strata.code.changes import SYMBOL_VERSIONS
from strata.code.reads import CALLEES_STEP, CALLERS_STEP, SYMBOL_BY_KEY
from strata.graph.gateway import Gateway
from strata.search.lookup import FUZZY_IN_REPO
from strata.search.service import NEIGHBOURS
from strata.temporal import AsOf
from strata.trace.reads import LINK_TYPES, LINKS_FROM, LINKS_INTO

KEY = "r|main|a.py|f"
WALK = {"frontier": [KEY], "cap": 100, "repos": None, "guesses": False}
LINKS = {"key": KEY, "types": LINK_TYPES, "first": 10}
WINDOW = {
    "repo": "r",
    "ref": None,
    "start": "2026-01-01T00:00:00Z",
    "end": "2026-02-01T00:00:00Z",
    "cap": 100,
}
SEEDS = {
    "seeds": [{"key": KEY, "label": "Symbol"}],
    "known": [KEY],
    "repo": "r",
    "labels": ["Symbol"],
    "ref": None,
}
POINT = {"key": KEY, "file": "r|main|a.py", "sep": "\x1f", "repos": None}
FUZZY = {
    "needle": "get",
    "suffix": None,
    "name": None,
    "qualified_name": None,
    "path": None,
    "repo": "r",
    "ref": None,
    "kind": None,
    "first": 20,
    "after": "",
    "repos": None,
}

READS: list[tuple[str, str, dict[str, Any], str]] = [
    ("callees step", CALLEES_STEP, WALK, "NodeUniqueIndexSeek"),
    ("callers step", CALLERS_STEP, WALK, "NodeUniqueIndexSeek"),
    ("links from a requirement", LINKS_FROM, LINKS, "NodeUniqueIndexSeek"),
    ("links into a symbol", LINKS_INTO, LINKS, "NodeUniqueIndexSeek"),
    ("search neighbours", NEIGHBOURS, SEEDS, "NodeUniqueIndexSeek"),
    ("symbol by key", SYMBOL_BY_KEY, POINT, "NodeUniqueIndexSeek"),
    ("changes window", SYMBOL_VERSIONS, WINDOW, "NodeIndexSeek"),
    ("name part in a repository", FUZZY_IN_REPO, FUZZY, "NodeIndexSeek"),
]


@pytest.mark.parametrize(("name", "text", "params", "seek"), READS, ids=[r[0] for r in READS])
def test_hot_reads_start_from_an_index(
    gateway: Gateway, name: str, text: str, params: dict[str, Any], seek: str
) -> None:
    operators = gateway.plan(text, **params, **AsOf.at().params())
    assert seek in operators, f"{name}: {operators}"
    scans = [
        op
        for op in operators
        if op in ("AllNodesScan", "NodeByLabelScan") or op.startswith("DirectedRelationshipIndex")
    ]
    assert not scans, f"{name} scans the graph: {operators}"
