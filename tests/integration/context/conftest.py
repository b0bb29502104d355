"""A small repository indexed over three commits into the real Neo4j, for context packs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.context.builder import ContextBuilder
from strata.context.sources import git_blobs
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import Ontology, load_ontology
from strata.search.docs import SearchIndex
from strata.search.service import SearchService
from strata.settings import Settings
from tests.gitrepo import GitRepo

C1 = datetime(2025, 5, 1, tzinfo=UTC)
C2 = datetime(2025, 6, 1, tzinfo=UTC)
C3 = datetime(2025, 7, 1, tzinfo=UTC)

PRICING = '''\
"""Prices and discounts."""


def discount(total, code):
    """The discount for a promotion code.

    Unknown codes give no discount.
    """
    if code == "VIP":
        return total * 0.2
    elif code == "HALF":
        return total / 2
    for ch in code:
        if not ch.isalnum():
            raise ValueError(code)
    return 0


def round_price(value):
    return round(value, 2)


def legacy_total(items):
    total = 0
    for item in items:
        total += item
    return total
'''

CART = '''\
import typer

from pricing import discount, round_price

app = typer.Typer()


class Cart:
    """A shopping cart."""

    def __init__(self):
        self.items = []

    def total(self, code):
        gross = sum(self.items)
        return round_price(gross - discount(gross, code))


@app.command()
def checkout(code: str):
    return Cart().total(code)
'''

TESTS = """\
from cart import Cart


def test_total():
    assert Cart().total("") == 0
"""

UTIL = """\
def slugify(text):
    return text.lower().replace(" ", "-")
"""


@dataclass(frozen=True)
class Shop:
    name: str
    shas: list[str]
    path: Path


def build_shop(root: Path) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(root)
    repo.write("pricing.py", PRICING)
    repo.write("cart.py", CART)
    repo.write("test_cart.py", TESTS)
    repo.write("util.py", UTIL)
    shas = [repo.commit("first shop", C1)]
    # modify discount's body, rename legacy_total (same body), move slugify to text.py
    repo.write(
        "pricing.py",
        PRICING.replace("total * 0.2", "total * 0.25").replace("def legacy_total", "def sum_items"),
    )
    repo.delete("util.py")
    repo.write("text.py", UTIL)
    shas.append(repo.commit("VIP discount 25%, rename legacy_total, move slugify", C2))
    repo.write("cart.py", CART + "\n\ndef empty():\n    return Cart()\n")
    shas.append(repo.commit("add empty()", C3))
    return repo, shas


@pytest.fixture(scope="session")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


@pytest.fixture
def shop(gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str) -> Shop:
    repo, shas = build_shop(tmp_path / "shop")
    indexer = CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(tmp_path / "cache"),
        max_file_bytes=20_000,
    )
    name = f"ctx-{unique}"
    indexer.index_history(Git(repo.path), name, "main", shas)
    return Shop(name, shas, repo.path)


@pytest.fixture
def builder(gateway: Gateway, ontology: Ontology, shop: Shop) -> ContextBuilder:
    search = SearchService(gateway, SearchIndex(gateway, None))
    return ContextBuilder(
        gateway, ontology, search, git_blobs(lambda repo: shop.path if repo == shop.name else None)
    )
