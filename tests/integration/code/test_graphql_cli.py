"""`strata graphql --format` against the real API process: rows, cut lists, reasons, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.registry import KeyRing
from strata.security import ServerKeys
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.code.test_absence_graphql import BEFORE, C1, LIB

IMPACT = "query($id: ID!) { impact(symbol: $id, first: 1) { callers { qualifiedName depth } " \
    "truncated truncatedLists } }"  # fmt: skip
CALLERS = "query($id: ID!, $asOf: AsOfInput) { callers(symbol: $id, depth: 2, asOf: $asOf) " \
    "{ qualifiedName depth evidence { path lineStart } } }"  # fmt: skip


def strata_graphql(
    base: str, token: str, query: str, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from strata.cli.main import main; main()", "graphql", query,
         "--url", base, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "STRATA_API_KEY": token, "COLUMNS": "80"},
    )  # fmt: skip


class TestGraphqlFormats:
    """One query, three shapes; what the rows cannot show goes to stderr as notes."""

    def test_formats_against_the_api(
        self,
        tmp_path: Path,
        settings: Settings,
        gateway: Gateway,
        indexer: CodeIndexer,
        api_process: tuple[str, subprocess.Popen[bytes]],
        unique: str,
    ) -> None:
        git = GitRepo(tmp_path / "cli")
        git.write("lib.py", LIB)
        sha = git.commit("first", C1)
        name = f"cli-{unique}"
        indexer.index(Git(git.path), name, "main", sha)
        ring = KeyRing(gateway, ServerKeys(settings.secret_key.get_secret_value()))
        _, token = ring.create(scopes=["read"], repos=[name])
        base, _ = api_process
        base_key = json.dumps({"id": f"{name}|main|lib.py|base"})

        compact = strata_graphql(
            base, token, CALLERS, "--variables", base_key, "--format", "compact"
        )
        assert compact.returncode == 0, compact.stderr
        lines = sorted(compact.stdout.splitlines())
        assert lines == ["lib.a\t1\tlib.py\t6", "lib.b\t1\tlib.py\t10", "lib.c\t2\tlib.py\t14"]

        table = strata_graphql(base, token, CALLERS, "--variables", base_key, "--format", "table")
        assert table.returncode == 0, table.stderr
        header = table.stdout.splitlines()[0].split()
        assert header == ["qualifiedName", "depth", "evidence.path", "evidence.lineStart"]
        assert all(len(line) <= 80 for line in table.stdout.splitlines())

        cut = strata_graphql(base, token, IMPACT, "--variables", base_key, "--format", "compact")
        assert cut.returncode == 0, cut.stderr
        assert len(cut.stdout.splitlines()) == 1
        assert "note: impact.callers is cut" in cut.stderr

        early = json.dumps({"id": f"{name}|main|lib.py|base", "asOf": {"validAt": BEFORE}})
        empty = strata_graphql(base, token, CALLERS, "--variables", early, "--format", "compact")
        assert empty.returncode == 0, empty.stderr
        assert empty.stdout == ""
        assert "note: callers is empty" in empty.stderr
        assert "note: BEFORE_HISTORY at callers:" in empty.stderr

        whole = strata_graphql(base, token, CALLERS, "--variables", early)
        assert json.loads(whole.stdout)["extensions"]["reasons"][0]["code"] == "BEFORE_HISTORY"

        bad = strata_graphql(base, token, CALLERS, "--variables", '{"id": "nope"}', "--format",
                             "compact")  # fmt: skip
        assert bad.returncode == 1
        assert "error: VALIDATION_ERROR at callers:" in bad.stderr
