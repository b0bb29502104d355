"""Unresolved sites found through the full-text index answer exactly what reading every
symbol state of the repository answers (the reads' fallback), on the real Neo4j."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code import reads as reads_module
from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.code.unseen import Unresolved
from strata.git import Git
from strata.ontology import Ontology
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

C1 = datetime(2025, 5, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 1, tzinfo=UTC)

LIB = """\
def save(x):
    return x


def save_model(x):
    return x


def h2():
    return 1
"""

USE = """\
def use(obj, mod):
    obj.save_model(1)
    obj.save(1)
    obj.deep.save(2)
    mod.h2()
    return obj.saver()


def more(thing):
    thing.save(3)


thing.save(4)
"""


def key(ontology: Ontology, repo: str, path: str, qualname: str) -> str:
    node = ontology.node("Symbol")
    return node.make_key({"repo": repo, "ref": "main", "path": path, "qualname": qualname})


def scanned(
    code_reads: CodeReads, keys: list[str], as_of: AsOf, monkeypatch: pytest.MonkeyPatch
) -> Unresolved:
    with monkeypatch.context() as patch:
        patch.setattr(reads_module, "lucene_query", lambda names: None)
        return code_reads.unresolved_matching(keys, as_of)


def test_the_index_finds_what_the_scan_finds(
    tmp_path: Path,
    indexer: CodeIndexer,
    code_reads: CodeReads,
    ontology: Ontology,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = GitRepo(tmp_path / "unresolved")
    repo.write("lib.py", LIB)
    repo.write("use.py", USE)
    first = repo.commit("first", C1)
    name = f"unresolved-{unique}"
    indexer.index(Git(repo.path), name, "main", first)
    indexer.index(Git(repo.path), f"{name}-twin", "main", first)  # the same sites elsewhere
    repo.write("use.py", USE.replace("    thing.save(3)\n", "    return thing\n"))
    second = repo.commit("more no longer saves", C2)
    indexer.index(Git(repo.path), name, "main", second)

    save, h2 = key(ontology, name, "lib.py", "save"), key(ontology, name, "lib.py", "h2")
    model = key(ontology, name, "lib.py", "save_model")
    for keys in ([save], [h2], [save, h2, model]):
        for when in (C1, C2):
            as_of = AsOf.at(when + timedelta(days=1))
            indexed = code_reads.unresolved_matching(keys, as_of)
            assert indexed == scanned(code_reads, keys, as_of, monkeypatch), (keys, when)
    then = code_reads.unresolved_matching([save], AsOf.at(C1 + timedelta(days=1)))
    now = code_reads.unresolved_matching([save], AsOf.at(C2 + timedelta(days=1)))
    assert then.by_name.get("save", 0) == now.by_name.get("save", 0) + 1  # thing.save(3) left
    assert now.by_name.get("save", 0) >= 1  # obj.save and thing.save are not linked
    assert all(s.callee != "obj.save_model" for s in now.sample)  # another name's site
