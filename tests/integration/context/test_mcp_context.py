"""The MCP `context` tool and readable `changes`, with the SDK's own client over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from strata.graph.gateway import Gateway
from strata.registry import KeyRing
from strata.security import ServerKeys
from strata.settings import Settings
from tests.conftest import TEST_SECRET, settings_env
from tests.integration.context.conftest import Shop

# tests/integration/mcp/conftest.py imports strata.code.git, which is gone: its helpers are
# not importable, so the few needed here are restated.
ROOT = Path(__file__).resolve().parents[3]
PYTHONPATH = os.pathsep.join(
    str(ROOT / p) for p in ("src", "services/api", "services/workers", "services/mcp")
)
STRATA = [sys.executable, "-c", "from strata.cli.main import main; main()"]


@pytest.fixture
def make_key(gateway: Gateway) -> Callable[..., str]:
    ring = KeyRing(gateway, ServerKeys(TEST_SECRET))

    def make(scopes: str = "read", repos: str = "*") -> str:
        _, token = ring.create(scopes=scopes.split(","), repos=repos.split(","))
        return str(token)

    return make


def stdio(settings: Settings, key: str) -> Client:
    env = {k: v for k, v in os.environ.items() if k != "STRATA_API_KEY"}
    env = {**env, **settings_env(settings), "PYTHONPATH": PYTHONPATH, "STRATA_API_KEY": key}
    params = StdioServerParameters(command=STRATA[0], args=[*STRATA[1:], "mcp"], env=env)
    return Client(params, read_timeout_seconds=120)


def test_context_and_readable_changes(
    settings: Settings, shop: Shop, make_key: Callable[..., str]
) -> None:
    async def go() -> dict[str, Any]:
        async with stdio(settings, make_key("read", shop.name)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "context" in tools
            assert tools["context"].output_schema is not None
            pack = await client.call_tool(
                "context",
                {
                    "task": "which tests cover Cart.total?",
                    "repository": shop.name,
                    "budget_tokens": 300,
                },
            )
            bad = await client.call_tool(
                "context",
                {"task": "explain `discount`", "repository": shop.name, "budget_tokens": 10},
            )
            missing = await client.call_tool(
                "context", {"task": "explain `discount`", "repository": "no-such-repo-here"}
            )
            changes = await client.call_tool(
                "changes",
                {
                    "repository": shop.name,
                    "start": "2025-05-15T00:00:00Z",
                    "end": "2025-08-01T00:00:00Z",
                    "readable": True,
                    "change": "renamed",
                },
            )
            return {"pack": pack, "bad": bad, "missing": missing, "changes": changes}

    answers = anyio.run(go)
    pack = answers["pack"]
    assert not pack.is_error, pack.content
    out = pack.structured_content
    assert out["intent"] == "find_tests"
    assert out["sufficient"] is True
    assert out["tokens"] <= 300
    tests = next(s for s in out["sections"] if s["title"] == "Tests")
    assert tests["lines"][0]["text"] == "test `test_cart.test_total` reaches it (depth 1)"
    assert tests["lines"][0]["citation"] == f"test_cart.py:4@{shop.shas[0][:12]}"
    assert out["markdown"].startswith("# Context (find_tests): cart.Cart.total")
    assert answers["bad"].is_error
    assert answers["missing"].is_error
    assert "NOT_FOUND: repository" in answers["missing"].content[0].text
    code = answers["changes"].structured_content["code"]
    assert code["total"] == 1
    renamed = code["commits"][0]["changes"][0]
    assert (renamed["change"], renamed["previous_qualname"]) == ("renamed", "legacy_total")
    assert code["commits"][0]["commit"] == shop.shas[1]


def test_cli_context(settings: Settings, shop: Shop) -> None:
    """`strata context` prints the pack as JSON (and markdown by default), or a clear error."""
    env = {**os.environ, **settings_env(settings), "PYTHONPATH": PYTHONPATH}
    task = "trace the flow of `discount`"
    base = [*STRATA, "context", task, "--repo", shop.name, "--source", str(shop.path)]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *extra], check=False, env=env, capture_output=True, text=True)

    done = run("--format", "json", "--budget", "300")
    assert done.returncode == 0, done.stderr
    pack = json.loads(done.stdout)
    assert pack["intent"] == "trace_flow"
    assert pack["tokens"] <= 300
    outline = next(s for s in pack["sections"] if s["title"] == "Outline")
    assert outline["lines"][0]["citation"] == f"pricing.py:9@{shop.shas[1][:12]}"
    text = run()
    assert text.stdout.startswith("# Context (trace_flow): pricing.discount\n")
    bad = run("--budget", "0")
    assert bad.returncode != 0
    assert "budget 0 is outside 50..20000" in bad.stderr + bad.stdout
