"""The language-neutral code layer names no language: per-language rules live in the
adapters and their module systems (``strata.code.languages``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from strata.code.languages import ADAPTERS

CODE = Path(__file__).resolve().parents[3] / "src" / "strata" / "code"
NEUTRAL = ("modules.py", "projection.py", "resolver.py", "receivers.py")
NAMES = {a.language for a in ADAPTERS} | {a.module_system.family for a in ADAPTERS}


def _code_words(source: str) -> set[str]:
    """Identifiers and string constants of a module, docstrings left out."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                words.add(node.value.lower())
        elif isinstance(node, ast.Name):
            words.add(node.id.lower())
        elif isinstance(node, ast.Attribute):
            words.add(node.attr.lower())
    return words


class TestNeutralModules:
    """No language or module family name in the code of the shared modules."""

    @pytest.mark.parametrize("module", NEUTRAL)
    def test_no_language_names(self, module: str) -> None:
        words = _code_words((CODE / module).read_text(encoding="utf-8"))
        assert not words & NAMES, sorted(words & NAMES)
