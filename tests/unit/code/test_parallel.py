"""Parsing in helper processes gives the extracts serial parsing gives, from any process."""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Iterator

import pytest

from strata.code import parallel
from strata.code.languages import parse_file
from strata.code.parallel import (
    CHUNK_FILES,
    ParseHelperLost,
    _Helper,
    parse_guarded,
    parse_parallel,
)
from strata.errors import ValidationError


def _items(n: int) -> list[tuple[str, bytes]]:
    return [
        (f"pkg/mod{i}.py", f"def f{i}(x):\n    return g{i}(x)\n\nclass C{i}:\n    pass\n".encode())
        for i in range(n)
    ]


@pytest.fixture
def daemonic() -> Iterator[None]:
    """This process looks like a Celery prefork child (billiard marks them daemonic)."""
    config = multiprocessing.current_process()._config  # type: ignore[attr-defined]
    before = config.get("daemon")
    config["daemon"] = True
    yield
    config["daemon"] = before


class TestParseParallel:
    """Helpers are plain subprocesses: same results, any parent, errors surface."""

    def test_same_extracts_in_the_same_order_as_serial(self) -> None:
        items = _items(150)
        assert parse_parallel(items, 2) == [parse_file(p, s) for p, s in items]

    def test_works_where_multiprocessing_refuses_children(self, daemonic: None) -> None:
        with pytest.raises(AssertionError, match="daemonic"):
            multiprocessing.get_context("spawn").Process(target=print).start()
        items = _items(70)
        assert [e.path for e in parse_parallel(items, 2)] == [p for p, _ in items]

    def test_an_error_in_a_helper_is_raised_in_the_parent(self) -> None:
        items = [*_items(3), ("notes.unknown", b"x")]
        with pytest.raises(ValidationError, match="no language adapter"):
            parse_parallel(items, 2)

    def test_a_helper_that_died_is_a_clear_error(self) -> None:
        helper = _Helper()
        helper.proc.kill()
        helper.proc.wait()
        with pytest.raises(ParseHelperLost, match=r"exited \(code -9\).*pkg/mod0.py"):
            helper.ask([(p, s, "") for p, s in _items(1)])
        helper.stop()


class TestDeadlines:
    """A parse that never ends is stopped: its file comes back None, the rest parse."""

    def test_a_looping_file_is_skipped_and_the_run_goes_on(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(parallel, "PARSE_BASE_S", 3.0)
        items = _items(90)
        items.insert(70, ("pkg/loops.py", b"x = 1\n"))  # in the second chunk
        records: list[dict[str, str]] = []
        found = parse_parallel(
            items,
            2,
            keys=[f"k{i}" for i in range(len(items))],
            sink=lambda _, files: records.append(files),
            helper_module="tests.unit.code._looping_parse_worker",
        )
        assert len(found) == len(items)
        assert found[70] is None
        expected = [parse_file(p, s) for p, s in items[:70] + items[71:]]
        assert found[:70] + found[71:] == expected
        cached = {path for files in records for path in files}
        assert cached == {p for p, _ in items} - {"pkg/loops.py"}


class TestGuarded:
    """Small runs parse in one helper the process keeps, with the same deadlines."""

    def test_same_extracts_and_the_helper_is_kept(self) -> None:
        items = _items(5)
        assert parse_guarded(items) == [parse_file(p, s) for p, s in items]
        kept = parallel._kept[parallel.HELPER_MODULE]
        assert parse_guarded(_items(2)) == [parse_file(p, s) for p, s in _items(2)]
        assert parallel._kept[parallel.HELPER_MODULE] is kept
        assert kept.proc.poll() is None

    def test_started_ahead_of_the_run(self) -> None:
        kept = parallel._kept.pop(parallel.HELPER_MODULE, None)
        if kept is not None:
            kept.stop()
        parallel.start_helper()
        started = parallel._kept[parallel.HELPER_MODULE]
        parallel.start_helper()  # running: left as it is
        assert parallel._kept[parallel.HELPER_MODULE] is started
        assert parse_guarded(_items(1)) == [parse_file(p, s) for p, s in _items(1)]
        assert parallel._kept[parallel.HELPER_MODULE] is started

    def test_an_error_is_raised_and_the_helper_kept(self) -> None:
        with pytest.raises(ValidationError, match="no language adapter"):
            parse_guarded([("notes.unknown", b"x")])
        assert parse_guarded(_items(1)) == [parse_file(p, s) for p, s in _items(1)]

    def test_a_looping_file_is_skipped(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(parallel, "PARSE_BASE_S", 2.0)
        module = "tests.unit.code._looping_parse_worker"
        items = [*_items(3), ("pkg/loops.py", b"x = 1\n"), ("pkg/after.py", b"y = 2\n")]
        found = parse_guarded(items, helper_module=module)
        assert found[3] is None
        assert found[:3] + found[4:] == [parse_file(p, s) for p, s in items[:3] + items[4:]]
        # The helper killed for the loop was replaced, and the new one is kept.
        assert parse_guarded(_items(1), helper_module=module)[0] is not None
        parallel._kept.pop(module).stop()


class TestRecords:
    """Each chunk's record reaches the sink as the cache stores entries."""

    def test_the_records_hold_every_file_with_its_key(self) -> None:
        items = _items(150)
        keys = [f"blob{i}" for i in range(len(items))]
        records: list[tuple[bytes, dict[str, str]]] = []
        extracts = parse_parallel(
            items, 2, keys=keys, sink=lambda record, files: records.append((record, files))
        )
        entries: dict[str, tuple[str, object]] = {}
        for record, files in records:
            chunk = pickle.loads(record)  # noqa: S301 - written by our helper
            assert {p: k for p, (k, _) in chunk.items()} == files
            entries.update(chunk)
        assert len(records) == -(-len(items) // CHUNK_FILES)
        assert entries == {p: (k, e) for (p, _), k, e in zip(items, keys, extracts, strict=True)}
