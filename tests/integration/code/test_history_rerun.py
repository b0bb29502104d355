"""`strata index --commits N` run again: what the indexed head covers is skipped, exit 0."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from strata.graph.gateway import Gateway
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.code.cli import cli, rows
from tests.integration.workers.stack import generated_repo, module_path, module_source

C1 = datetime(2025, 9, 1, tzinfo=UTC)
C2 = datetime(2025, 9, 2, tzinfo=UTC)
C3 = datetime(2025, 9, 3, tzinfo=UTC)
C4 = datetime(2025, 9, 4, tzinfo=UTC)


def _touch(repo: GitRepo, i: int, files: int, when: datetime, note: str) -> str:
    repo.write(module_path(i), module_source(i, files, extra=f"\n\ndef {note}():\n    pass\n"))
    return repo.commit(note, when)


class TestHistoryAgain:
    """Re-running the same history changes nothing; a longer one indexes only what is new."""

    def test_indexing_the_same_commits_twice_is_a_no_op(
        self, settings: Settings, gateway: Gateway, tmp_path: Path, unique: str
    ) -> None:
        name = f"cli-history-{unique}"
        repo, c1 = generated_repo(tmp_path / name, 5, C1)
        c2 = _touch(repo, 1, 5, C2, "two")
        c3 = _touch(repo, 2, 5, C3, "three")
        first = cli(settings, "index", str(repo.path), "--repo", name, "--commits", "3")
        assert first.returncode == 0, first.stderr
        table = rows(first.stdout)
        assert [table[c[:12]][1] for c in (c1, c2, c3)] == ["full", "incremental", "incremental"]

        again = cli(settings, "index", str(repo.path), "--repo", name, "--commits", "3")
        assert again.returncode == 0, again.stderr
        assert list(rows(again.stdout)) == [c3[:12]]
        assert rows(again.stdout)[c3[:12]][1] == "unchanged"

        c4 = _touch(repo, 3, 5, C4, "four")
        more = cli(settings, "index", str(repo.path), "--repo", name, "--commits", "3")
        assert more.returncode == 0, more.stderr
        modes = {k: v[1] for k, v in rows(more.stdout).items()}
        assert modes == {c3[:12]: "unchanged", c4[:12]: "incremental"}
