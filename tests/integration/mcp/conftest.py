"""The MCP server as a real process (stdio and Streamable HTTP) over an indexed repository."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import Ontology, load_ontology
from strata.registry import KeyRing
from strata.search.docs import Embed, SearchIndex, local_embed
from strata.security import ServerKeys
from strata.settings import Settings
from tests.conftest import TEST_SECRET, free_port, settings_env
from tests.integration.search.conftest import Indexed, build_repo

ROOT = Path(__file__).resolve().parents[3]
PYTHONPATH = os.pathsep.join(
    str(ROOT / p) for p in ("src", "services/api", "services/workers", "services/mcp")
)

# The CLI entry point of this checkout (the console script may belong to another one).
STRATA = [sys.executable, "-c", "from strata.cli.main import main; main()"]


@pytest.fixture(scope="session")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


@pytest.fixture(scope="session")
def embedder() -> Embed:
    return local_embed()


@pytest.fixture
def shop(
    gateway: Gateway, ontology: Ontology, embedder: Embed, tmp_path: Path, unique: str
) -> Indexed:
    repo, shas = build_repo(tmp_path / "shop")
    indexer = CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(tmp_path / "cache"),
        max_file_bytes=20_000,
    )
    name = f"mcp-{unique}"
    indexer.index_history(Git(repo.path), name, "main", shas)
    KnowledgeSync(FactStore(gateway, ontology), gateway).sync(Git(repo.path), name, shas[-1])
    # what `strata search --embed` does after an index: every document gets its vector
    SearchIndex(gateway, embedder).sync(name, embed_budget=None)
    return Indexed(name, shas, repo.path)


@pytest.fixture
def make_key(gateway: Gateway) -> object:
    ring = KeyRing(gateway, ServerKeys(TEST_SECRET))

    def make(scopes: str = "read", repos: str = "*") -> str:
        _, token = ring.create(scopes=scopes.split(","), repos=repos.split(","))
        return str(token)

    return make


def server_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The child's environment: the test services, this checkout's code, no stray key."""
    env = {k: v for k, v in os.environ.items() if k != "STRATA_API_KEY"}
    return {**env, **settings_env(settings), "PYTHONPATH": PYTHONPATH, **extra}


@pytest.fixture
def mcp_http(settings: Settings, gateway: Gateway) -> Iterator[str]:
    """`strata mcp --transport http` as a process; yields its endpoint URL."""
    port = free_port()
    proc = subprocess.Popen(
        [*STRATA, "mcp", "--transport", "http", "--port", str(port)],
        env=server_env(settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "exited")
            try:
                httpx.post(url, json={}, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
