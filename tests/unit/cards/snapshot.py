"""A hand-built package graph snapshot for the pure card tests."""

from __future__ import annotations

from datetime import UTC, datetime

from strata.cards.graph import ChangeRow, LinkRow, PackageRow, Snapshot, SymbolRow

AT = datetime(2025, 5, 1, tzinfo=UTC)


def sym(path: str, qualname: str, kind: str = "function", **extra: str | None) -> SymbolRow:
    return SymbolRow(
        key=f"k:{path}:{qualname}",
        path=path,
        qualname=qualname,
        name=qualname.rsplit(".", 1)[-1],
        kind=kind,
        qualified_name=qualname,
        body_hash=f"h-{qualname}",
        docstring=extra.get("docstring"),
        test=extra.get("test"),
        entrypoint=extra.get("entrypoint"),
    )


def snapshot() -> Snapshot:
    snap = Snapshot(
        "demo",
        "main",
        "c" * 40,
        AT,
        {
            "core": PackageRow("core", "core", "python", "core/pyproject.toml"),
            "web": PackageRow("web", "web-app", "npm", "web/package.json"),
        },
    )
    snap.files = {
        "core": {"core/calc.py": "f1", "core/test_calc.py": "f2"},
        "web": {"web/app.js": "f3"},
    }
    snap.package_of = {p: pkg for pkg, files in snap.files.items() for p in files}
    snap.tests = {"core/test_calc.py"}
    snap.symbols = {
        "core/calc.py": [
            sym("core/calc.py", "add", docstring="Add two numbers.\n\nMore."),
            sym("core/calc.py", "Calc", "class"),
            sym("core/calc.py", "Calc.run", "method"),
            sym("core/calc.py", "_hidden"),
        ],
        "core/test_calc.py": [sym("core/test_calc.py", "test_add", test="pytest")],
        "web/app.js": [sym("web/app.js", "handler", entrypoint="http GET /sum")],
    }
    snap.imports = {("web", "core"): 2}
    snap.calls = {("web", "core"): 3}
    snap.callees = {"web": {"add", "core/calc.py:add"}}
    snap.links = [
        LinkRow("REQ-7", "Sums shall be exact.", "IMPLEMENTED_BY", "VALIDATED", "core/calc.py:add")
    ]
    snap.changes = [ChangeRow("core/calc.py:add", AT, "c" * 40)]
    snap.owners = {"core": ["@core-team"]}
    return snap
