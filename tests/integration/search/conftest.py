"""A small indexed repository (two commits) to search in, on the real Neo4j."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import Ontology, load_ontology
from strata.search.docs import Embed, local_embed
from strata.settings import Settings
from tests.gitrepo import GitRepo
from tests.integration.api.conftest import api, make_api  # noqa: F401 - the API fixtures

C1 = datetime(2025, 1, 1, tzinfo=UTC)
C2 = datetime(2025, 3, 1, tzinfo=UTC)

PAYMENTS_V1 = '''\
"""Payments: charging cards through the gateway."""


class PaymentGateway:
    """Talks to the card processor."""

    def authorize(self, amount):
        """Reserve the amount on the customer's card."""
        return amount > 0

    def refund(self, amount):
        """Give money back to the customer."""
        return -amount


def charge_card(gateway, amount):
    """Charge the customer's credit card for an order total."""
    if gateway.authorize(amount):
        return amount
    return 0
'''

PAYMENTS_V2 = PAYMENTS_V1.replace("charge_card", "capture_payment")

ORDERS_V1 = '''\
from billing.payments import PaymentGateway, charge_card


def place_order(total):
    """Place an order and take the payment."""
    return charge_card(PaymentGateway(), total)


def apply_discount(total, percent):
    """Reduce a total by a percentage coupon."""
    return total * (100 - percent) / 100
'''

ORDERS_V2 = ORDERS_V1.replace("charge_card", "capture_payment")

CART = """\
export class ShoppingCartStore {
  addLineItem(sku: string): void {}
  computeGrandTotal(): number { return 0; }
}

export function renderCheckoutPage(store: ShoppingCartStore): string {
  return String(store.computeGrandTotal());
}
"""

TESTS = '''\
from billing.orders import place_order


def test_place_order():
    """Placing an order charges the card."""
    assert place_order(10) == 10
'''


@dataclass(frozen=True, slots=True)
class Indexed:
    repo: str
    shas: list[str]
    path: Path


@pytest.fixture(scope="session")
def ontology(settings: Settings) -> Ontology:
    return load_ontology(settings.ontology_dir)


@pytest.fixture(scope="session")
def embed() -> Embed:
    return local_embed()


def build_repo(path: Path) -> tuple[GitRepo, list[str]]:
    repo = GitRepo(path)
    repo.write("billing/__init__.py", "")
    repo.write("billing/payments.py", PAYMENTS_V1)
    repo.write("billing/orders.py", ORDERS_V1)
    repo.write("web/cart.ts", CART)
    repo.write("tests/test_orders.py", TESTS)
    repo.write(
        "docs/requirements.md",
        "# Requirements\n\n- [ ] REQ-001: When an order is placed, the service shall capture "
        "the payment from the customer's card.\n",
    )
    shas = [repo.commit("initial", C1)]
    repo.write("billing/payments.py", PAYMENTS_V2)
    repo.write("billing/orders.py", ORDERS_V2)
    shas.append(repo.commit("rename charge_card to capture_payment", C2))
    return repo, shas


@pytest.fixture
def shop(gateway: Gateway, ontology: Ontology, tmp_path: Path, unique: str) -> Indexed:
    repo, shas = build_repo(tmp_path / "shop")
    indexer = CodeIndexer(
        FactStore(gateway, ontology),
        Reads(gateway, ontology),
        cache=ExtractCache(tmp_path / "cache"),
        max_file_bytes=20_000,
    )
    name = f"shop-{unique}"
    indexer.index_history(Git(repo.path), name, "main", shas)
    KnowledgeSync(FactStore(gateway, ontology), gateway).sync(Git(repo.path), name, shas[-1])
    return Indexed(name, shas, repo.path)
