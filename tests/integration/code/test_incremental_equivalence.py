"""An incremental push leaves the graph a full index of the same commit would.

The tree is this repository's own ``src/strata`` (a few hundred Python files whose
calls go through imports, attributes and the value flow), so the check runs on
real code offline. Commit two inserts a line at the top of one module and
changes a function body in another; the current call edges, symbols and files
after (full, incremental) must equal those of a full index of commit two.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from tests.gitrepo import GitRepo

SOURCE = Path(__file__).resolve().parents[3] / "src" / "strata"
C1 = datetime(2025, 9, 1, tzinfo=UTC)
C2 = datetime(2025, 9, 2, tzinfo=UTC)
SHIFTED = "strata/code/projection.py"  # a line inserted at its top
EDITED = "strata/temporal.py"  # a body-only change at its end

CURRENT_CALLS = """
MATCH (a)-[r:CALLS]->(b)
WHERE r.repo = $repo AND r.expired_at IS NULL AND r.invalid_at IS NULL
RETURN coalesce(a.path, '') + ':' + coalesce(a.qualname, '') AS caller,
       b.path + ':' + b.qualname AS callee, r.resolution AS resolution,
       coalesce(r.offset, r.line) AS at
"""
CURRENT_NODES = """
MATCH (n)-[st:STATE]->(n)
WHERE st.repo = $repo AND st.expired_at IS NULL AND st.invalid_at IS NULL
  AND (n:Symbol OR n:File)
RETURN labels(n)[0] AS label, n.path AS path, coalesce(n.qualname, '') AS qualname,
       st.hash AS hash
"""


def _tree(repo: GitRepo) -> int:
    count = 0
    for path in sorted(SOURCE.rglob("*.py")):
        repo.write(f"strata/{path.relative_to(SOURCE).as_posix()}", path.read_bytes())
        count += 1
    return count


def _indexer(
    gateway: Gateway, ontology: Ontology, cache: Path | ExtractCache, batch_size: int = 2000
) -> CodeIndexer:
    return CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=cache if isinstance(cache, ExtractCache) else ExtractCache(cache),
        batch_size=batch_size,
    )


def _graph(gateway: Gateway, repo: str) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    calls = {tuple(r.values()) for r in gateway.read(CURRENT_CALLS, repo=repo)}
    nodes = {tuple(r.values()) for r in gateway.read(CURRENT_NODES, repo=repo)}
    return calls, nodes


class TestIncrementalEqualsFull:
    # The push's facts fit one batch (one transaction), or are sent in batches of five.
    @pytest.mark.parametrize("batch_size", [2000, 5])
    def test_shift_and_body_change(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str, batch_size: int
    ) -> None:
        repo = GitRepo(tmp_path / "tree")
        files = _tree(repo)
        assert files > 150  # the repository's own source: real size, real flow
        first = repo.commit("the tree", C1)
        shifted = (SOURCE / SHIFTED.removeprefix("strata/")).read_text()
        repo.write(SHIFTED, "# one line inserted at the top\n" + shifted)
        edited = (SOURCE / EDITED.removeprefix("strata/")).read_text()
        repo.write(EDITED, edited + "\n\ndef _added_helper(value):\n    return value\n")
        second = repo.commit("shift one module, add a helper to another", C2)

        pushed, full = f"incr-{unique}", f"full-{unique}"
        cache = ExtractCache(tmp_path / "cache-a")  # the second indexer finds the first's parse
        _indexer(gateway, ontology, cache).index(Git(repo.path), pushed, "main", first)
        incremental = _indexer(gateway, ontology, cache, batch_size)
        result = incremental.index(Git(repo.path), pushed, "main", second)
        _indexer(gateway, ontology, tmp_path / "cache-b").index(
            Git(repo.path), full, "main", second
        )

        assert result.mode == "incremental"
        assert result.files_written <= 3  # the two changed files (and no dependents)
        assert 5 < result.facts <= 2000  # one side of the one-transaction bound each
        pushed_calls, pushed_nodes = _graph(gateway, pushed)
        full_calls, full_nodes = _graph(gateway, full)
        assert len(full_calls) > 1000
        assert pushed_calls - full_calls == set()
        assert full_calls - pushed_calls == set()
        assert pushed_nodes == full_nodes
