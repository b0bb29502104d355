"""Only the git package starts git: every other module asks it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_STARTS_GIT = re.compile(r"""\[\s*["']git["']""")


def test_no_module_outside_the_git_package_runs_git() -> None:
    package = ROOT / "src" / "strata" / "git"
    offenders = [
        str(path.relative_to(ROOT))
        for top in ("src", "services")
        for path in (ROOT / top).rglob("*.py")
        if package not in path.parents and _STARTS_GIT.search(path.read_text())
    ]
    assert offenders == []


def test_the_package_has_one_subprocess_call() -> None:
    package = ROOT / "src" / "strata" / "git"
    calls = [
        path.name
        for path in package.glob("*.py")
        for _ in re.finditer(r"subprocess\.(?:run|Popen|check_output|call)\(", path.read_text())
    ]
    assert calls == ["runner.py"]
