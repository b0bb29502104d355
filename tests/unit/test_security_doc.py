"""docs/api-security.md's checklists name the test behind each row: every named test
exists (a renamed or deleted test makes its row untrue), and every row names one or
says why it has none."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api-security.md"
# The abbreviations the checklist section declares.
PREFIXES = {"int/": "tests/integration/", "unit/": "tests/unit/"}
FINDINGS = "tests/integration/api/test_outside_findings.py"
NO_TEST = ("—", "code review", "deployment validation")


def _checklist_rows() -> list[tuple[str, str]]:
    """(recommendation, kept-true-by cell) of every row under section 9."""
    text = DOC.read_text().split("## 9.", 1)[1]
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("recommendation", "guidance") or set(cells[0]) <= {"-"}:
            continue
        rows.append((cells[0], cells[2]))
    return rows


def _defined(path: Path) -> set[str]:
    """``Class``, ``Class::method`` and ``function`` names a test module defines."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}::{item.name}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
    return names


def _expand(ref: str) -> str:
    if ref.startswith("findings"):
        return FINDINGS + ref[len("findings") :]
    for short, full in PREFIXES.items():
        if ref.startswith(short):
            return full + ref[len(short) :]
    return ref


def _references(cell: str) -> list[tuple[Path, str]]:
    """(module, name) of each backticked reference; a bare name continues the module
    (and class) of the reference before it in the same cell."""
    out: list[tuple[Path, str]] = []
    module: str | None = None
    klass: str | None = None
    for written in re.findall(r"`([^`]+)`", cell):
        ref = _expand(written)
        head, _, rest = ref.partition("::")
        if head.endswith(".py"):
            module, name = head, rest
            klass = rest.split("::")[0] if rest.startswith("Test") else None
        elif module is None:
            raise AssertionError(f"{ref!r} names no test module")
        elif ref.startswith("Test") or klass is None:
            name = ref
            klass = ref.split("::")[0] if ref.startswith("Test") else klass
        else:
            name = f"{klass}::{ref}"
        out.append((ROOT / module, name))
    return out


ROWS = _checklist_rows()


def test_both_checklists_are_there() -> None:
    assert len(ROWS) >= 25


@pytest.mark.parametrize(("row", "cell"), ROWS, ids=[r for r, _ in ROWS])
def test_each_row_names_existing_tests_or_says_why_not(row: str, cell: str) -> None:
    if cell.startswith(NO_TEST):  # a reason instead of a test; what it names exists
        for named in re.findall(r"`([^`]+)`", cell):
            assert (ROOT / named).exists(), f"{row}: no {named}"
        return
    refs = _references(cell)
    assert refs, f"{row}: names no test and no reason"
    for module, name in refs:
        assert module.is_file(), f"{row}: no test module {module.relative_to(ROOT)}"
        if not name:
            continue
        defined = _defined(module)
        if name.endswith("*"):
            assert any(d.startswith(name[:-1]) for d in defined), f"{row}: no {name} in {module}"
        else:
            assert name in defined, f"{row}: no {name} in {module.relative_to(ROOT)}"
