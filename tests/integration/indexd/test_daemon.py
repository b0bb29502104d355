"""`strata index` through the index daemon: real processes, real Neo4j and Redis."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from strata.code.reads import CodeReads
from strata.code.result import IndexResult
from strata.errors import StrataError, ValidationError
from strata.graph.gateway import Gateway
from strata.indexd import client
from strata.indexd.protocol import IndexRequest, address, log_path
from strata.ontology import load_ontology
from strata.settings import Settings
from tests.conftest import make_settings, settings_env
from tests.gitrepo import GitRepo
from tests.integration.code.cli import cli, rows
from tests.integration.workers.stack import generated_repo, module_path, module_source

FILES = 12
C1 = datetime(2025, 10, 1, tzinfo=UTC)


@pytest.fixture
def daemon_settings(
    settings: Settings, gateway: Gateway, redis_server: object, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Settings]:
    """The test services with the daemon on; this process's environment names them too
    (a daemon started from here reads its settings from it, as from a `strata index`)."""
    chosen = make_settings(index_daemon_idle_s=120)
    for name, value in settings_env(chosen).items():
        monkeypatch.setenv(name, value)
    client.stop_all(chosen)
    yield chosen
    client.stop_all(chosen)


def _change(repo: GitRepo, i: int, note: str, day: int) -> str:
    extra = f"\n\ndef {note}():\n    return helper_{i}(1)\n"
    repo.write(module_path(i), module_source(i, FILES, extra=extra))
    return repo.commit(note, C1.replace(day=day))


def _index(s: Settings, repo: GitRepo, name: str, **extra: Any) -> list[IndexResult]:
    events: list[str] = []
    request = IndexRequest(str(repo.path), name, "main", **extra)
    results = client.index(s, request, lambda phase, _: events.append(phase))
    assert results is not None
    if results[-1].mode != "unchanged":  # an unchanged head reports no progress
        assert events[-1] == "done"
    return results


def _qualnames(gateway: Gateway, settings: Settings, name: str) -> set[str]:
    reads = CodeReads(gateway, load_ontology(settings.ontology_dir))
    paths = [module_path(i) for i in range(FILES)]
    return set().union(*reads.symbol_qualnames(name, "main", paths).values())


class TestWarmRuns:
    """A second `strata index` is served by the daemon the first one started, warm."""

    def test_a_one_file_change_reads_one_file(
        self, daemon_settings: Settings, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"indexd-{unique}"
        repo, _ = generated_repo(tmp_path / name, FILES, C1)
        (first,) = _index(daemon_settings, repo, name)
        assert first.mode == "full"
        assert first.flow_files_read == FILES + 20  # modules and package __init__ files
        (daemon,) = client.running(daemon_settings)

        _change(repo, 3, "added_in_two", 2)
        (second,) = _index(daemon_settings, repo, name)
        assert (second.mode, second.files_parsed) == ("incremental", 1)
        # The flow's statement index was kept: only the changed file was read again.
        assert second.flow_files_read == 1
        assert [d["pid"] for d in client.running(daemon_settings)] == [daemon["pid"]]
        status = client.status(daemon_settings)
        assert status is not None
        assert (status["requests"], status["warm"]) == (2, True)
        assert status["peak_rss_mb"] > 0
        assert "added_in_two" in _qualnames(gateway, daemon_settings, name)

    def test_runs_in_and_out_of_the_daemon_interleave(
        self, daemon_settings: Settings, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        """The daemon's kept state is of an older head once a run outside it moved the
        graph on; its next run still indexes from the graph's head."""
        name = f"indexd-mix-{unique}"
        repo, _ = generated_repo(tmp_path / name, FILES, C1)
        path = str(repo.path)
        assert cli(daemon_settings, "index", path, "--repo", name).returncode == 0
        c2 = _change(repo, 1, "outside", 2)
        here = cli(daemon_settings, "index", path, "--repo", name, "--no-daemon")
        assert here.returncode == 0, here.stderr
        assert rows(here.stdout)[c2[:12]][1] == "incremental"
        c3 = _change(repo, 2, "inside", 3)
        again = cli(daemon_settings, "index", path, "--repo", name)
        assert again.returncode == 0, again.stderr
        assert rows(again.stdout)[c3[:12]][1] == "incremental"
        found = _qualnames(gateway, daemon_settings, name)
        assert {"outside", "inside"} <= found

    def test_history_runs_through_the_daemon(
        self, daemon_settings: Settings, tmp_path: Path, unique: str
    ) -> None:
        name = f"indexd-history-{unique}"
        repo, c1 = generated_repo(tmp_path / name, FILES, C1)
        c2 = _change(repo, 1, "two", 2)
        out = cli(daemon_settings, "index", str(repo.path), "--repo", name, "--commits", "2")
        assert out.returncode == 0, out.stderr
        table = rows(out.stdout)
        assert [table[c[:12]][1] for c in (c1, c2)] == ["full", "incremental"]


class TestBusy:
    """One index at a time: the same repository waits, another indexes elsewhere."""

    def test_another_repository_is_turned_away_the_same_one_waits(
        self, daemon_settings: Settings, tmp_path: Path, unique: str
    ) -> None:
        big, small = f"indexd-big-{unique}", f"indexd-small-{unique}"
        big_repo, _ = generated_repo(tmp_path / big, 300, C1)
        small_repo, _ = generated_repo(tmp_path / small, FILES, C1)
        answers: dict[str, list[IndexResult] | None] = {}
        threads = [
            threading.Thread(
                target=lambda: answers.setdefault("first", _index(daemon_settings, big_repo, big))
            )
        ]
        threads[0].start()
        _wait_busy(daemon_settings, [big, "main"])
        request = IndexRequest(str(small_repo.path), small, "main")
        assert client.index(daemon_settings, request, _ignore) is None  # busy: not queued
        threads.append(
            threading.Thread(
                target=lambda: answers.setdefault("again", _index(daemon_settings, big_repo, big))
            )
        )
        threads[1].start()
        for thread in threads:
            thread.join(timeout=300)
        first, again = answers["first"], answers["again"]
        assert first is not None
        assert first[0].mode == "full"
        assert again is not None
        assert again[0].mode == "unchanged"
        status = client.status(daemon_settings)
        assert status is not None
        assert status["requests"] == 2


class TestFailures:
    """Errors reach the caller as the same typed error; the daemon serves the next run."""

    def test_an_error_is_the_callers_error(
        self, daemon_settings: Settings, tmp_path: Path, unique: str
    ) -> None:
        not_git = tmp_path / "plain"
        not_git.mkdir()
        inside = cli(daemon_settings, "index", str(not_git), "--repo", f"x-{unique}")
        outside = cli(
            daemon_settings, "index", str(not_git), "--repo", f"x-{unique}", "--no-daemon"
        )
        assert (inside.returncode, outside.returncode) == (1, 1)
        assert inside.stderr.strip()
        assert inside.stderr == outside.stderr
        # Typed: the class the run raised, not a generic failure.
        with pytest.raises(StrataError) as caught:
            client.index(daemon_settings, IndexRequest(str(not_git), "x", "main"), _ignore)
        outside_class = _raised_here(daemon_settings, not_git)
        assert type(caught.value) is outside_class

        name = f"after-error-{unique}"
        repo, _ = generated_repo(tmp_path / name, FILES, C1)
        assert _index(daemon_settings, repo, name)[0].mode == "full"

    def test_a_caller_that_leaves_stops_its_run(
        self, daemon_settings: Settings, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"indexd-left-{unique}"
        repo, _ = generated_repo(tmp_path / name, FILES, C1)
        log = log_path(daemon_settings)
        seen = log.stat().st_size if log.exists() else 0

        def leave(phase: str, counters: dict[str, Any]) -> None:
            if phase == "parsing":
                raise KeyboardInterrupt  # the user's Ctrl-C in `strata index`

        request = IndexRequest(str(repo.path), name, "main")
        with pytest.raises(KeyboardInterrupt):
            client.index(daemon_settings, request, leave)
        (result,) = _index(daemon_settings, repo, name)  # served once the run stopped
        assert result.mode == "full"  # the left run never recorded a head
        assert "indexd.caller_gone" in log.read_bytes()[seen:].decode()
        assert "helper_0" in _qualnames(gateway, daemon_settings, name)

    def test_a_bad_request_is_refused(self, daemon_settings: Settings) -> None:
        with pytest.raises(ValidationError, match="path must be absolute"):
            client.index(daemon_settings, IndexRequest("relative/path", "x", "main"), _ignore)

    def test_a_killed_daemon_is_replaced(
        self, daemon_settings: Settings, tmp_path: Path, unique: str
    ) -> None:
        name = f"indexd-killed-{unique}"
        repo, _ = generated_repo(tmp_path / name, FILES, C1)
        _index(daemon_settings, repo, name)
        (daemon,) = client.running(daemon_settings)
        os.kill(daemon["pid"], signal.SIGKILL)
        _wait_gone(daemon["pid"])
        assert address(daemon_settings).socket.exists()  # left behind, refusing connections

        _change(repo, 4, "after_kill", 2)
        (result,) = _index(daemon_settings, repo, name)
        assert result.mode == "incremental"
        (replacement,) = client.running(daemon_settings)
        assert replacement["pid"] != daemon["pid"]


class TestLifetime:
    """A daemon exits when idle or told to, and removes its socket."""

    def test_idle_daemon_exits(
        self, daemon_settings: Settings, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        brief = make_settings(index_daemon_idle_s=1)
        for name, value in settings_env(brief).items():
            monkeypatch.setenv(name, value)
        with pytest.raises(StrataError):  # not a repository: answered, then idle
            client.index(brief, IndexRequest(str(tmp_path), "x", "main"), _ignore)
        (daemon,) = client.running(brief)
        _wait_gone(daemon["pid"], timeout_s=20)
        assert not address(brief).socket.exists()
        assert client.running(brief) == []

    def test_stop_all_stops_it(self, daemon_settings: Settings, tmp_path: Path) -> None:
        with pytest.raises(StrataError):
            client.index(daemon_settings, IndexRequest(str(tmp_path), "x", "main"), _ignore)
        (daemon,) = client.running(daemon_settings)
        assert client.stop_all(daemon_settings) == [daemon["pid"]]
        _wait_gone(daemon["pid"])
        assert not address(daemon_settings).socket.exists()


def _ignore(phase: str, counters: dict[str, Any]) -> None:
    return None


def _raised_here(settings: Settings, path: Path) -> type[BaseException]:
    from strata.code.service import CodeService

    with Gateway.connect(settings) as gateway:
        service = CodeService(settings, gateway, load_ontology(settings.ontology_dir))
        try:
            service.index_path(path, repo="x", ref="main")
        except StrataError as exc:
            return type(exc)
    raise AssertionError("indexing a folder that is not a repository succeeded")


def _wait_busy(settings: Settings, slot: list[str], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = client.status(settings)
        if status is not None and status["busy"] == slot:
            return
        time.sleep(0.02)
    raise AssertionError(f"the daemon never indexed {slot}")


def _wait_gone(pid: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # Our child when this process started it: reap it, or it stays a zombie.
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still runs after {timeout_s}s")
