"""The extract cache in real index runs: it survives the CLI process, it is keyed by the
extractor's code, and the parallel-parse threshold holds on its upper side."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.code import cache as cache_module
from strata.code.cache import ExtractCache
from strata.code.indexer import PARALLEL_PARSE_MIN_FILES, CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.code.cli import cli as _cli
from tests.integration.code.cli import rows as _rows
from tests.integration.workers.stack import generated_repo, module_path, module_source

C1 = datetime(2025, 9, 1, tzinfo=UTC)
C2 = datetime(2025, 9, 2, tzinfo=UTC)
C3 = datetime(2025, 9, 3, tzinfo=UTC)


def _indexer(gateway: Gateway, ontology: Ontology, cache: ExtractCache) -> CodeIndexer:
    return CodeIndexer(FactStore(gateway, ontology), Reads(gateway, ontology), cache=cache)


def _touch(repo: GitRepo, i: int, files: int, when: datetime, note: str) -> str:
    repo.write(module_path(i), module_source(i, files, extra=f"\n\ndef {note}():\n    pass\n"))
    return repo.commit(note, when)


@pytest.fixture
def copied_extractor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The extractor's version computed from a copy of its sources that a test may edit."""
    code = tmp_path / "extractor"
    source = cache_module.CODE_DIR
    shutil.copytree(source / "languages", code / "languages")
    if (source / "queries").is_dir():
        shutil.copytree(source / "queries", code / "queries")
    shutil.copy(source / "model.py", code / "model.py")
    monkeypatch.setattr(cache_module, "CODE_DIR", code)
    cache_module.extractor_version.cache_clear()
    yield code
    cache_module.extractor_version.cache_clear()


class TestKeyedByTheExtractor:
    """A changed query re-parses every file by itself; an unchanged one reuses the cache."""

    def test_a_query_change_reparses(
        self,
        copied_extractor: Path,
        gateway: Gateway,
        ontology: Ontology,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"version-{unique}"
        repo, c1 = generated_repo(tmp_path / name, 30, C1)
        directory = tmp_path / "cache"
        git = Git(repo.path)

        first = _indexer(gateway, ontology, ExtractCache(directory))
        assert first.index(git, name, "main", c1).files_parsed == 50
        first.cache.flush()

        c2 = _touch(repo, 3, 30, C2, "second")
        same = _indexer(gateway, ontology, ExtractCache(directory))  # same extractor
        assert same.index(git, name, "main", c2).files_parsed == 1
        same.cache.flush()

        [query] = [q for q in copied_extractor.rglob("*.scm") if q.stem == "python"]
        query.write_text(query.read_text() + "\n; a changed query\n")
        cache_module.extractor_version.cache_clear()  # a new process, in effect
        c3 = _touch(repo, 4, 30, C3, "third")
        changed = _indexer(gateway, ontology, ExtractCache(directory))
        assert changed.cache.version != same.cache.version
        assert changed.index(git, name, "main", c3).files_parsed == 50


class TestThreshold:
    """At exactly the threshold the files parse in helpers; a one-file change reuses the rest."""

    def test_at_the_threshold(
        self, gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str
    ) -> None:
        name = f"at-{unique}"
        modules = PARALLEL_PARSE_MIN_FILES - 20
        repo, c1 = generated_repo(tmp_path / name, modules, C1)
        indexer = _indexer(gateway, ontology, ExtractCache(tmp_path / "cache"))
        full = indexer.index(Git(repo.path), name, "main", c1)
        assert full.files_parsed == PARALLEL_PARSE_MIN_FILES
        assert full.parse_workers == (2 if (os.cpu_count() or 1) >= 2 else 0)

        c2 = _touch(repo, 7, modules, C2, "changed")
        step = indexer.index(Git(repo.path), name, "main", c2)
        assert (step.mode, step.files_parsed, step.parse_workers) == ("incremental", 1, 0)


class TestTheCli:
    """Each `strata index` is its own process: the next one finds its parses."""

    def test_a_one_file_change_parses_one_file_in_the_next_process(
        self, settings: Settings, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"cli-cache-{unique}"
        repo, c1 = generated_repo(tmp_path / name, 60, C1)
        first = _cli(settings, "index", str(repo.path), "--repo", name)
        assert first.returncode == 0, first.stderr
        assert _rows(first.stdout)[c1[:12]][1:4] == ["full", "80/80", "80"]

        c2 = _touch(repo, 5, 60, C2, "edited")
        second = _cli(settings, "index", str(repo.path), "--repo", name)
        assert second.returncode == 0, second.stderr
        row = _rows(second.stdout)[c2[:12]]
        assert row[1] == "incremental"
        assert row[3] == "1"  # parsed: the changed file only
