"""A demand solver kept between runs and rebased answers what a new solver answers.

The tree is this repository's own ``src/strata`` (a few hundred Python files whose
calls go through imports, attributes, parameters and returns). After a full
resolution the solver is kept; each edit below is taken in by
:meth:`~strata.code.flow.demand.DemandSolver.rebase` (or refused, for a change
other files' lookups would see), and every file's resolution must equal the one a
new solver over the same snapshot gives.
"""

from __future__ import annotations

from itertools import chain
from pathlib import Path
from typing import Any

import pytest

from strata.code.flow.demand import DemandSolver, _VarsByFile
from strata.code.flow.statements import StatementIndex
from strata.code.languages import parse_file
from strata.code.model import FileExtract
from strata.code.modules import ModuleIndex, detect_packages
from strata.code.resolver import Resolver

SOURCE = Path(__file__).resolve().parents[3] / "src" / "strata"
TEMPORAL = "strata/temporal.py"
CACHE = "strata/code/cache.py"


def _tree() -> dict[str, bytes]:
    return {
        f"strata/{p.relative_to(SOURCE).as_posix()}": p.read_bytes()
        for p in sorted(SOURCE.rglob("*.py"))
    }


def _resolved(resolver: Resolver, paths: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path in paths:
        found = resolver.resolve_file(path)
        out[path] = (
            sorted(found.calls, key=repr),
            sorted((k or "", tuple(sorted(v))) for k, v in found.unresolved.items()),
        )
    return out


def _body_edit(text: str) -> str:
    """One more call and one more local inside the body of the file's first function."""
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("def "))
    while not lines[at].rstrip().endswith(":"):
        at += 1
    return "\n".join([*lines[: at + 1], "    _probe = str(len([1]))", *lines[at + 1 :]])


EDITS = [
    # (file, edit, whether the kept solver takes it in)
    (TEMPORAL, _body_edit, True),
    (TEMPORAL, lambda t: t + "\n\ndef _probe_helper(value):\n    return plan_set(value)\n", True),
    (TEMPORAL, lambda t: t.replace("def _probe_helper(value)", "def _probe_other(value)"), True),
    (CACHE, lambda t: "import os\n" + t, False),  # a new import: a new solver
    (CACHE, lambda t: t.replace("import os\n", "", 1) + "\nX_PROBE = 1\n", False),
    (CACHE, _body_edit, True),
]


@pytest.fixture(scope="module")
def tree() -> tuple[dict[str, bytes], dict[str, FileExtract]]:
    sources = _tree()
    return sources, {path: parse_file(path, data) for path, data in sources.items()}


@pytest.mark.parametrize("rebuilt", [False, True], ids=["noted", "rebuilt"])
def test_rebased_answers_equal_a_new_solvers(
    tree: tuple[dict[str, bytes], dict[str, FileExtract]], rebuilt: bool
) -> None:
    """``rebuilt``: before each rebase the kept solver's variables by file hold more
    than twice the live ones (as after many pushes) and are rebuilt from them."""
    sources, parsed = dict(tree[0]), dict(tree[1])
    paths = sorted(parsed)
    packages = detect_packages(paths, {})
    kept = StatementIndex()
    first = Resolver(ModuleIndex(parsed, packages), statements=kept)
    _resolved(first, paths)
    first.flow.keep()
    assert isinstance(kept.solver, DemandSolver)
    rebased_runs = 0
    for path, edit, takes_in in EDITS:
        sources[path] = edit(sources[path].decode()).encode()
        parsed[path] = parse_file(path, sources[path])
        before = kept.solver
        if rebuilt:
            before._by_file._noted = 10**9  # stale: the rebase lists them anew
        resolver = Resolver(ModuleIndex(parsed, packages), statements=kept)
        mine = _resolved(resolver, [path, *paths])
        assert (resolver.flow.solver is before) is takes_in, path
        if rebuilt and takes_in:
            assert before._by_file._noted < 10**6  # rebuilt from the live variables
        rebased_runs += int(takes_in)
        assert resolver.flow.files_read == 1
        resolver.flow.keep()
        _assert_every_variable_noted(kept.solver)
        fresh = _resolved(Resolver(ModuleIndex(parsed, packages)), paths)
        differing = [p for p in paths if mine[p] != fresh[p]]
        assert not differing, (path, differing[:5])
        assert sum(len(calls) for calls, _ in fresh.values()) > 1000
    assert rebased_runs == 4


def _assert_every_variable_noted(solver: DemandSolver) -> None:
    """Every live variable is where a rebase looks for it: under its file (an
    element under its box's), and an attribute or global under its name too."""
    by_file = solver._by_file
    live = set(chain(solver.env, solver._done, solver.wide))
    assert len(live) > 1000
    paths = {var[1][1] if var[0] == "e" else var[1] for var in live}
    assert live <= set(by_file.candidates(paths, set(), False))
    named = {v for v in live if v[0] == "a" or (v[0] == "v" and v[2] is None)}
    names = {var[3] for var in named}
    assert named <= set(by_file.candidates(set(), names, False))
    elements = {v for v in live if v[0] == "e"}
    assert elements
    assert elements <= set(by_file.candidates(set(), set(), True))


def test_a_run_that_does_not_end_keeps_no_solver(
    tree: tuple[dict[str, bytes], dict[str, FileExtract]],
) -> None:
    """A run takes the kept solver; only keep() after its questions gives it back."""
    parsed = dict(tree[1])
    packages = detect_packages(sorted(parsed), {})
    kept = StatementIndex()
    first = Resolver(ModuleIndex(parsed, packages), statements=kept)
    first.resolve_file(TEMPORAL)
    first.flow.keep()
    solver = kept.solver
    second = Resolver(ModuleIndex(parsed, packages), statements=kept)
    assert second.flow.solver is solver  # nothing changed: rebased
    assert kept.solver is None  # taken: a run that fails here leaves none behind
    third = Resolver(ModuleIndex(parsed, packages), statements=kept)
    assert third.flow.solver is not solver


SMALL = {
    "app/__init__.py": "",
    "app/kinds.py": """
        class Db:
            def read(self, key):
                return key

        class Cache:
            def read(self, key):
                return None
        """,
    "app/store.py": """
        from app.kinds import Cache, Db

        class Store:
            def __init__(self, db):
                self.db = db
            def get(self, key):
                return self.db.read(key)

        def make():
            return Store(Db())

        def backend():
            return Db()
        """,
    "app/views.py": """
        from app.store import backend, make

        def view(key):
            store = make()
            return store.get(key)

        def direct(key):
            return backend().read(key)
        """,
}
# Body-only edits whose values reach other files: through a return, and through a
# parameter and an attribute (`self.db`), so a rebase that did not reset and re-run
# what read them would keep the old answers.
SMALL_EDITS = [
    ("app/store.py", "return Db()\n", "return Cache()\n"),
    ("app/store.py", "return Store(Db())", "return Store(Cache())"),
    (
        "app/store.py",
        "\n        def backend():",
        "\n        def spare():\n            return Db()\n\n        def backend():",
    ),
]


def test_rebased_follows_values_into_other_files() -> None:
    from textwrap import dedent

    sources = {p: dedent(s) for p, s in SMALL.items()}
    parsed = {p: parse_file(p, s.encode()) for p, s in sources.items()}
    paths = sorted(parsed)
    kept = StatementIndex()
    first = Resolver(ModuleIndex(parsed, []), statements=kept)
    before = _resolved(first, paths)
    first.flow.keep()
    for path, old, new in SMALL_EDITS:
        sources[path] = sources[path].replace(
            dedent(old) if old.startswith("\n") else old, new.replace("\n        ", "\n")
        )
        parsed[path] = parse_file(path, sources[path].encode())
        solver = kept.solver
        resolver = Resolver(ModuleIndex(parsed, []), statements=kept)
        mine = _resolved(resolver, paths)
        assert resolver.flow.solver is solver  # taken in, not started over
        resolver.flow.keep()
        assert mine == _resolved(Resolver(ModuleIndex(parsed, [])), paths)
    views = {(c.src_qualname, c.dst_qualname) for c in mine["app/views.py"][0]}
    assert ("direct", "Cache.read") in views
    assert ("direct", "Db.read") not in views
    assert ("view", "Store.get") in views
    store = {(c.src_qualname, c.dst_qualname) for c in mine["app/store.py"][0]}
    assert ("Store.get", "Cache.read") in store
    assert ("Store.get", "Db.read") not in store
    assert mine != before


OVERRIDES = {
    "app/__init__.py": "",
    "app/base.py": """
        from abc import abstractmethod

        class Base:
            @abstractmethod
            def run(self):
                ...

            def go(self):
                return self.run()
        """,
    "app/child.py": """
        from app.base import Base

        class Child(Base):
            def run(self):
                return 1
        """,
}


def _overrides(resolver: Resolver) -> set[tuple[str, str]]:
    found = resolver.resolve_file("app/base.py").calls
    return {(c.src_qualname, f"{c.dst_path}:{c.dst_qualname}") for c in found}


def test_kept_subclass_map_is_rebuilt_when_a_base_name_moves() -> None:
    """A rebased run takes in the last run's subclass map unless a free function that
    came or went is named in some class's bases; either way its answers are a new
    resolver's."""
    from textwrap import dedent

    sources = {p: dedent(s) for p, s in OVERRIDES.items()}
    parsed = {p: parse_file(p, s.encode()) for p, s in sources.items()}
    kept = StatementIndex()
    first = Resolver(ModuleIndex(parsed, []), statements=kept)
    assert ("Base.go", "app/child.py:Child.run") in _overrides(first)
    first.flow.keep()
    edits = [
        # (the edit to app/child.py, whether the kept map is taken in)
        (lambda t: t + "\ndef spare():\n    return Child()\n", True),
        (lambda t: t + "\ndef Base():\n    return None\n", False),
    ]
    for edit, taken in edits:
        sources["app/child.py"] = edit(sources["app/child.py"])
        parsed["app/child.py"] = parse_file("app/child.py", sources["app/child.py"].encode())
        held, solver = kept.subclasses, kept.solver
        resolver = Resolver(ModuleIndex(parsed, []), statements=kept)
        mine = _overrides(resolver)
        assert resolver.flow.solver is solver  # rebased: only free functions came
        resolver.flow.keep()
        assert (kept.subclasses is held) is taken
        assert mine == _overrides(Resolver(ModuleIndex(parsed, [])))
    assert ("Base.go", "app/child.py:Child.run") not in mine  # Child's base is the function


def test_variables_by_file_are_rebuilt_past_twice_the_live_ones() -> None:
    """The lists a rebase reads its variables from: a superset of the live ones,
    noted once each, and rebuilt from the live ones past twice as many (plus 10,000)."""
    by_file = _VarsByFile()
    local, attr, glob = (
        ("v", "a.py", "f", "x"),
        ("a", "b.py", "C", "size"),
        ("v", "c.py", None, "size"),
    )
    element = ("e", ("i", "a.py", "C"))
    for var in (local, attr, glob, element):
        by_file.note(var)
    assert set(by_file.candidates({"a.py"}, set(), False)) == {local, element}
    assert set(by_file.candidates(set(), {"size"}, False)) == {attr, glob}
    assert set(by_file.candidates(set(), set(), True)) == {element}
    live = 4
    for n in range(2 * live + 10_000 - 4):
        by_file.note(("s", "d.py", n))  # noted, then forgotten by a rebase
    assert not by_file.stale(live)
    by_file.note(("s", "d.py", -1))
    assert by_file.stale(live)
    by_file.rebuild([local, attr, glob, element, local])
    assert not by_file.stale(live)
    assert list(by_file.candidates({"d.py"}, set(), False)) == []
    assert list(by_file.candidates({"a.py", "b.py"}, set(), False)).count(local) == 1
