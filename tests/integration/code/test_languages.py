"""Every language's fixture project, indexed end to end: the same-name trap resolves exactly.

Each fixture has ``Item.validate`` and ``Cart.validate`` (a subclass or, in Go,
an embedding struct; in Rust two unrelated impls): ``Item.save`` calls its own
``validate`` through self/this, ``Cart.checkout`` calls the cart's, and, where
the language has inheritance or embedding, ``Cart.validate`` reaches the
item's through super/base or the embedded field.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.git import Git
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "code"
WHEN = datetime(2025, 7, 1, tzinfo=UTC)

CASES = {
    "python": ("shop/models.py", "validate", "save", "checkout"),
    "typescript": ("src/models.ts", "validate", "save", "checkout"),
    "javascript": ("lib/models.js", "validate", "save", "checkout"),
    "go": ("shop/models.go", "Validate", "Save", "Checkout"),
    "java": ("src/main/java/com/example/shop/Cart.java", "validate", "save", "checkout"),
    "csharp": ("Shop/Models.cs", "Validate", "Save", "Checkout"),
    "rust": ("src/models.rs", "validate", "save", "checkout"),
    "kotlin": ("src/main/kotlin/com/example/shop/Cart.kt", "validate", "save", "checkout"),
    "php": ("src/Models/Cart.php", "validate", "save", "checkout"),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_same_name_trap(
    language: str, tmp_path: Path, indexer: CodeIndexer, code_reads: CodeReads, unique: str
) -> None:
    path, validate, save, checkout = CASES[language]
    shutil.copytree(FIXTURES / language, tmp_path / language)
    repo = GitRepo(tmp_path / language)
    sha = repo.commit("fixture", WHEN)
    name = f"{language}-{unique}"
    result = indexer.index(Git(repo.path), name, "main", sha)
    assert result.parse_errors == 1  # each fixture has one deliberately broken file
    as_of = AsOf.at(WHEN + timedelta(days=1))

    def callers(qualname: str) -> set[tuple[str, str]]:
        key = f"{name}|main|{path}|{qualname}"
        return {
            (h.key.rsplit("|", 1)[-1], h.resolution)
            for h in code_reads.callers(key, as_of, first=50)
        }

    item = callers(f"Item.{validate}")
    cart = callers(f"Cart.{validate}")
    assert (f"Item.{save}", "self") in item
    assert (f"Cart.{checkout}", "self") in cart
    if language != "rust":  # Rust has no inheritance; its Cart.validate calls items' impls
        assert (f"Cart.{validate}", "hierarchy") in item
    assert not any(caller == f"Item.{save}" for caller, _ in cart)
    assert not any(caller == f"Cart.{checkout}" for caller, _ in item)
