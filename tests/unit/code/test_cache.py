"""The extract cache: survives its process, ignores what it cannot trust, stays bounded,
and is keyed by the extractor's own code."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from strata.code import cache as cache_module
from strata.code.cache import ExtractCache, ExtractSet, version_of
from strata.code.languages import parse_file


def _set(commit: str, n: int = 3) -> ExtractSet:
    out = ExtractSet(commit=commit)
    for i in range(n):
        path = f"m{i}.py"
        out.files[path] = (f"{i:040x}", parse_file(path, f"def f{i}():\n    pass\n".encode()))
    return out


class TestDurability:
    """What a process saved is on disk after it exits, even when it exits at once."""

    def test_a_process_that_exits_right_after_save_leaves_the_file(self, tmp_path: Path) -> None:
        script = (
            "import sys\n"
            "from pathlib import Path\n"
            "from strata.code.cache import ExtractCache, ExtractSet\n"
            "from strata.code.languages import parse_file\n"
            "s = ExtractSet(commit='c1')\n"
            "for i in range(300):\n"
            "    p = f'm{i}.py'\n"
            "    s.files[p] = (f'{i:040x}', parse_file(p, b'def f():\\n    pass\\n' * 50))\n"
            f"ExtractCache(Path({str(tmp_path)!r})).save('repo', 'main', s)\n"
            "sys.exit(0)\n"  # no flush: exit must not lose the write
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        subprocess.run([sys.executable, "-c", script], check=True, env=env)
        loaded = ExtractCache(tmp_path).load("repo", "main")
        assert loaded.commit == "c1"
        assert len(loaded.files) == 300

    def test_flush_then_a_fresh_instance_reads_it(self, tmp_path: Path) -> None:
        first = ExtractCache(tmp_path)
        first.save("repo", "main", _set("c1"))
        first.flush()
        assert ExtractCache(tmp_path).load("repo", "main").commit == "c1"
        assert not list(tmp_path.glob("*.tmp"))


class TestDistrust:
    """A torn, foreign or other-version file is a miss, never an error."""

    def test_torn_and_garbage_files_are_ignored(self, tmp_path: Path) -> None:
        cache = ExtractCache(tmp_path)
        cache.save("repo", "main", _set("c1"))
        cache.flush()
        path = cache.path("repo", "main")
        whole = path.read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
        assert ExtractCache(tmp_path).load("repo", "main").files == {}
        path.write_bytes(b"not a pickle")
        assert ExtractCache(tmp_path).load("repo", "main").files == {}

    def test_a_file_cut_between_two_chunks_is_a_miss(self, tmp_path: Path) -> None:
        """A set is written as several pickles; one cut after a whole chunk (every
        pickle it still holds reads) is torn all the same, not a smaller set."""
        cache = ExtractCache(tmp_path)
        n = cache_module.CHUNK_ENTRIES * 3
        cache.save("repo", "main", _set("c1", n))
        cache.flush()
        path = cache.path("repo", "main")
        assert len(ExtractCache(tmp_path).load("repo", "main").files) == n
        ends = []
        with path.open("rb") as handle:
            for _ in range(3):  # the head and two chunks
                pickle.load(handle)  # noqa: S301 - the file this test wrote
                ends.append(handle.tell())
        path.write_bytes(path.read_bytes()[: ends[-1]])
        assert ExtractCache(tmp_path).load("repo", "main").files == {}

    def test_another_extractor_version_does_not_see_the_set(self, tmp_path: Path) -> None:
        old = ExtractCache(tmp_path, version="old")
        old.save("repo", "main", _set("c1"))
        old.flush()
        assert ExtractCache(tmp_path, version="new").load("repo", "main").files == {}
        assert ExtractCache(tmp_path, version="old").load("repo", "main").commit == "c1"

    def test_several_writers_of_one_key_leave_one_whole_file(self, tmp_path: Path) -> None:
        caches = [ExtractCache(tmp_path) for _ in range(4)]
        for round_ in range(5):
            for i, cache in enumerate(caches):
                cache.save("repo", "main", _set(f"c{round_}-{i}", 20))
        for cache in caches:
            cache.flush()
        loaded = ExtractCache(tmp_path).load("repo", "main")
        # Whichever rename came last wins (the writes race on purpose); the file is
        # always one writer's whole set, never a mix or a torn one.
        written = {f"c{r}-{i}" for r in range(5) for i in range(4)}
        assert loaded.commit in written
        assert len(loaded.files) == 20
        assert {blob for blob, _ in loaded.files.values()} == {
            blob for blob, _ in _set(loaded.commit, 20).files.values()
        }
        assert not list(tmp_path.glob("*.tmp"))


class TestBounded:
    """Past its byte cap the cache drops the least recently written sets."""

    def test_oldest_sets_go_first_and_the_new_one_stays(self, tmp_path: Path) -> None:
        probe = ExtractCache(tmp_path / "probe")
        probe.save("r", "main", _set("c", 30))
        probe.flush()
        size = probe.path("r", "main").stat().st_size
        cache = ExtractCache(tmp_path / "c", max_bytes=int(size * 2.5))
        for i in range(4):
            cache.save(f"repo{i}", "main", _set(f"c{i}", 30))
            cache.flush()
            time.sleep(0.02)  # distinct mtimes
        kept = {p.name for p in (tmp_path / "c").glob("*.pickle")}
        assert kept == {cache.path(f"repo{i}", "main").name for i in (2, 3)}

    def test_stale_temporaries_of_killed_writers_are_removed(self, tmp_path: Path) -> None:
        tmp_path.mkdir(exist_ok=True)
        stale = tmp_path / "x.pickle.123.abcd.tmp"
        stale.write_bytes(b"half")
        old = time.time() - cache_module.STALE_TMP_S - 5
        os.utime(stale, (old, old))
        fresh = tmp_path / "y.pickle.456.abcd.tmp"
        fresh.write_bytes(b"being written")
        cache = ExtractCache(tmp_path)
        cache.save("repo", "main", _set("c1"))
        cache.flush()
        assert not stale.exists()
        assert fresh.exists()


class TestExtractorVersion:
    """The version follows every source of the extractor, found generically."""

    @pytest.fixture
    def code_dir(self, tmp_path: Path) -> Path:
        target = tmp_path / "code"
        source = cache_module.CODE_DIR
        shutil.copytree(source / "languages", target / "languages")
        if (source / "queries").is_dir():
            shutil.copytree(source / "queries", target / "queries")
        shutil.copy(source / "model.py", target / "model.py")
        return target

    def test_a_query_edit_changes_it(self, code_dir: Path) -> None:
        before = version_of(code_dir)
        [query, *_] = sorted(code_dir.rglob("*.scm"))
        query.write_text(query.read_text() + "\n; a new capture\n")
        assert version_of(code_dir) != before

    def test_a_new_adapter_module_in_a_new_subpackage_changes_it(self, code_dir: Path) -> None:
        before = version_of(code_dir)
        (code_dir / "languages" / "family").mkdir()
        (code_dir / "languages" / "family" / "kotlin.py").write_text("X = 1\n")
        assert version_of(code_dir) != before

    def test_a_model_edit_changes_it(self, code_dir: Path) -> None:
        before = version_of(code_dir)
        (code_dir / "model.py").write_text((code_dir / "model.py").read_text() + "\n# x\n")
        assert version_of(code_dir) != before

    def test_other_files_and_bytecode_do_not(self, code_dir: Path) -> None:
        before = version_of(code_dir)
        (code_dir / "languages" / "NOTES.md").write_text("notes")
        (code_dir / "languages" / "__pycache__").mkdir(exist_ok=True)
        (code_dir / "languages" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
        assert version_of(code_dir) == before

    def test_it_is_stable_and_the_default_of_a_cache(self, tmp_path: Path) -> None:
        assert version_of(cache_module.CODE_DIR) == cache_module.extractor_version()
        assert ExtractCache(tmp_path).version == cache_module.extractor_version()


def test_held_is_the_set_in_memory_only(tmp_path: Path) -> None:
    cache = ExtractCache(tmp_path)
    assert cache.held("repo", "main") is None
    saved = _set("c1")
    cache.save("repo", "main", saved)
    cache.flush()
    assert cache.held("repo", "main") is saved
    assert ExtractCache(tmp_path).held("repo", "main") is None  # on disk, not in memory
