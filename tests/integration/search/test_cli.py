"""`strata search` in a pipe: whole lines, JSON that parses, clear errors."""

from __future__ import annotations

import json
import subprocess

from strata.settings import Settings
from tests.integration.mcp.conftest import STRATA, server_env
from tests.integration.search.conftest import Indexed


def run(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*STRATA, "search", *args],
        env=server_env(settings),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


class TestSearchCommand:
    """The three formats print every hit whole when stdout is not a terminal."""

    def test_formats(self, settings: Settings, shop: Indexed) -> None:
        table = run(settings, "grand total", "--repo", shop.repo, "--embed")
        assert table.returncode == 0, table.stderr
        assert "embedded" in table.stderr
        first = table.stdout.splitlines()[1]
        assert "web/cart.ts:ShoppingCartStore.computeGrandTotal" in first
        assert "web/cart.ts:3" in first
        assert shop.shas[0][:12] in first
        compact = run(settings, "capture_payment", "--repo", shop.repo, "--format", "compact")
        fields = compact.stdout.splitlines()[0].split("\t")
        assert fields[1:5] == [
            "function",
            "billing.payments.capture_payment",
            "billing/payments.py:16-20",
            shop.shas[1][:12],
        ]
        answer = json.loads(
            run(settings, "refund", "--repo", shop.repo, "--format", "json", "--first", "3").stdout
        )
        assert len(answer["hits"]) <= 3
        assert answer["hits"][0]["evidence"]["path"] == "billing/payments.py"

    def test_files(self, settings: Settings, shop: Indexed) -> None:
        query = "capture payment gateway"
        done = run(settings, query, "--repo", shop.repo, "--files", "--format", "compact")
        assert done.returncode == 0, done.stderr
        rows = [line.split("\t") for line in done.stdout.splitlines()]
        assert rows[0][1] == "billing/payments.py"
        assert rows[0][2].startswith(shop.repo)
        answer = json.loads(
            run(settings, query, "--repo", shop.repo, "--format", "json", "--first", "2").stdout
        )
        assert 1 <= len(answer["files"]) <= 2
        assert answer["files"][0]["path"] == "billing/payments.py"

    def test_unknown_repository(self, settings: Settings) -> None:
        done = run(settings, "x", "--repo", "no-such-repository-here")
        assert done.returncode == 1
        assert "not indexed" in done.stderr
