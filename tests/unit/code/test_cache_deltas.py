"""The extract cache writes a push's few changed files as a delta beside the set file."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata.code import cache as cache_module
from strata.code.cache import MAX_DELTAS, EarlySet, ExtractCache, ExtractSet, chunk_record
from strata.code.languages import parse_file


def _set(commit: str, n: int, changed: int | None = None) -> ExtractSet:
    out = ExtractSet(commit)
    for i in range(n):
        body = f"def f{i}():\n    return {i if i != changed else -1}\n"
        out.files[f"m{i}.py"] = (f"blob{i}-{i == changed}", parse_file(f"m{i}.py", body.encode()))
    return out


class TestDeltas:
    """A one-file save is a small delta; a new process reads set and deltas back as one."""

    def test_a_small_change_is_a_delta_read_back_by_another_process(self, tmp_path: Path) -> None:
        cache = ExtractCache(tmp_path, version="v")
        cache.save("r", "main", _set("c1", 40))
        cache.flush()
        cache.save("r", "main", _set("c2", 40, changed=3))
        cache.flush()
        main = cache.path("r", "main")
        assert main.with_name(main.name + ".1.delta").exists()
        loaded = ExtractCache(tmp_path, version="v").load("r", "main")
        assert loaded.commit == "c2"
        assert loaded.files["m3.py"][0] == "blob3-True"
        assert len(loaded.files) == 40

    def test_another_writers_set_ends_the_chain(self, tmp_path: Path) -> None:
        ours, theirs = ExtractCache(tmp_path, version="v"), ExtractCache(tmp_path, version="v")
        ours.save("r", "main", _set("c1", 40))
        ours.flush()
        theirs.save("r", "main", _set("x1", 40, changed=5))  # a whole set: theirs knew none
        theirs.flush()
        ours.save("r", "main", _set("c2", 40, changed=3))  # a delta on c1, now foreign
        ours.flush()
        loaded = ExtractCache(tmp_path, version="v").load("r", "main")
        assert loaded.commit == "x1"
        assert loaded.files["m5.py"][0] == "blob5-True"

    def test_the_set_is_rewritten_after_max_deltas(self, tmp_path: Path) -> None:
        cache = ExtractCache(tmp_path, version="v")
        cache.save("r", "main", _set("c0", 40))
        for k in range(1, MAX_DELTAS + 2):
            cache.save("r", "main", _set(f"c{k}", 40, changed=k % 40))
        cache.flush()
        main = cache.path("r", "main")
        assert not main.with_name(main.name + f".{MAX_DELTAS}.delta").exists()
        assert ExtractCache(tmp_path, version="v").load("r", "main").commit == f"c{MAX_DELTAS + 1}"


class TestStaging:
    """A staged set is written before the graph write and is seen only once saved."""

    def test_a_staged_set_is_not_read_until_saved(self, tmp_path: Path) -> None:
        cache = ExtractCache(tmp_path, version="v")
        cache.save("r", "main", _set("c1", 40))
        cache.flush()
        staged = _set("c2", 40, changed=3)
        cache.stage("r", "main", staged)
        cache.flush()  # written, not yet in place
        assert ExtractCache(tmp_path, version="v").load("r", "main").commit == "c1"
        cache.save("r", "main", staged)
        loaded = ExtractCache(tmp_path, version="v").load("r", "main")
        assert loaded.commit == "c2"
        assert loaded.files["m3.py"][0] == "blob3-True"
        assert not list(tmp_path.glob("*.tmp"))

    def test_a_discarded_set_leaves_the_head_set_and_no_temporary(self, tmp_path: Path) -> None:
        """The indexer discards when its write failed: the graph still has the old
        head, and the next process must find that head's set, not the failed run's."""
        cache = ExtractCache(tmp_path, version="v")
        cache.save("r", "main", _set("c1", 40))
        cache.flush()
        cache.stage("r", "main", _set("c2", 40, changed=7))
        cache.discard()
        assert ExtractCache(tmp_path, version="v").load("r", "main").commit == "c1"
        assert not list(tmp_path.glob("*.tmp"))
        cache.save("r", "main", _set("c3", 40, changed=1))  # the next run writes on as before
        cache.flush()
        assert ExtractCache(tmp_path, version="v").load("r", "main").commit == "c3"

    def test_a_first_set_staged_then_saved_is_whole(self, tmp_path: Path) -> None:
        cache = ExtractCache(tmp_path, version="v")
        first = _set("c1", 200)
        cache.stage("r", "main", first)
        cache.save("r", "main", first)
        loaded = ExtractCache(tmp_path, version="v").load("r", "main")
        assert (loaded.commit, len(loaded.files)) == ("c1", 200)


class TestEarlySet:
    """A set written while its files were parsed is published as it is."""

    @staticmethod
    def _early(cache: ExtractCache, extracts: ExtractSet, skip: int = 0) -> EarlySet:
        early = cache.early("r", "main", extracts.commit)
        items = list(extracts.files.items())[skip:]
        for i in range(0, len(items), 16):  # records of 16 files, as the helpers answer
            chunk = dict(items[i : i + 16])
            early.add(chunk_record(chunk), {p: blob for p, (blob, _) in chunk.items()})
        return early

    def test_a_whole_early_set_is_published_without_pickling_again(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        cache = ExtractCache(tmp_path, version="v")
        extracts = _set("c1", 40)
        early = self._early(cache, extracts)

        def no_pickling(*args: object) -> Path:
            raise AssertionError("the set was pickled again")

        monkeypatch.setattr(cache_module, "_write_tmp", no_pickling)
        cache.stage("r", "main", extracts, early=early)
        cache.save("r", "main", extracts)
        loaded = ExtractCache(tmp_path, version="v").load("r", "main")
        assert loaded.commit == "c1"
        assert loaded.files == extracts.files
        assert not list(tmp_path.glob("*.tmp"))

    def test_an_early_set_that_misses_files_is_dropped_for_the_whole_set(
        self, tmp_path: Path
    ) -> None:
        """Some files came from the cache by blob, not from the helpers."""
        cache = ExtractCache(tmp_path, version="v")
        extracts = _set("c1", 40)
        cache.stage("r", "main", extracts, early=self._early(cache, extracts, skip=5))
        cache.save("r", "main", extracts)
        loaded = ExtractCache(tmp_path, version="v").load("r", "main")
        assert loaded.files == extracts.files
        assert not list(tmp_path.glob("*.tmp"))

    def test_a_discarded_early_set_leaves_nothing(self, tmp_path: Path) -> None:
        cache = ExtractCache(tmp_path, version="v")
        extracts = _set("c1", 40)
        cache.stage("r", "main", extracts, early=self._early(cache, extracts))
        cache.discard()
        assert ExtractCache(tmp_path, version="v").load("r", "main").files == {}
        assert not list(tmp_path.iterdir())
