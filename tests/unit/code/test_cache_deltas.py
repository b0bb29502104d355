"""The extract cache writes a push's few changed files as a delta beside the set file."""

from __future__ import annotations

from pathlib import Path

from strata.code.cache import MAX_DELTAS, ExtractCache, ExtractSet
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
