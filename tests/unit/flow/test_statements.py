"""The flow's writers' index kept between runs: refreshed per changed file, equal to a fresh one."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

from strata.code.flow.statements import StatementIndex, StatementIndexes
from strata.code.languages import parse_file
from strata.code.model import FileExtract
from strata.code.modules import ModuleIndex
from strata.code.resolver import Resolver

BASE = {
    "app/__init__.py": "",
    "app/store.py": """
        class Store:
            def __init__(self, db):
                self.db = db
            def get(self, key):
                return self.db.read(key)

        def make():
            return Store(Db())
        """,
    "app/db.py": """
        class Db:
            def read(self, key):
                return key
        """,
    "app/views.py": """
        from app.store import make

        def view(key):
            store = make()
            handler = store.get
            return handler(key)
        """,
    "tests/conftest.py": """
        import pytest
        from app.store import make

        @pytest.fixture
        def store():
            return make()
        """,
    "tests/test_views.py": """
        def test_get(store):
            assert store.get("k")
        """,
}
CHANGED = {
    # a renamed method, a new writer of `db` and a new call of `make`
    "app/store.py": """
        class Store:
            def __init__(self, db):
                self.db = db
            def fetch(self, key):
                return self.db.read(key)

        def make():
            return Store(Db())

        def again():
            s = make()
            s.db = Db()
            return s.fetch(1)
        """,
    "app/extra.py": """
        from app.store import make

        def other():
            return make().fetch(2)
        """,
}


def parse(files: dict[str, str]) -> dict[str, FileExtract]:
    return {p: parse_file(p, dedent(s).encode()) for p, s in files.items()}


def resolver(extracts: dict[str, FileExtract], statements: StatementIndex | None) -> Resolver:
    return Resolver(ModuleIndex(extracts, []), statements=statements)


def snapshot(index: StatementIndex) -> dict[str, Any]:
    """Every table of the index, statements named by (kind, path, id of their item)."""

    def name(statement: tuple[str, str, object, object]) -> tuple[str, str, int, int]:
        return (statement[0], statement[1], id(statement[2]), id(statement[3]))

    out: dict[str, Any] = {
        "functions": {k: id(v) for k, v in index.functions.items()},
        "locals": {k: sorted(v) for k, v in index.locals.items()},
        "sites_of": dict(index.sites_of),
    }
    for table in ("static", "by_attr_in", "items_in", "by_attr", "calls_by_name",
                  "decorated_by", "items", "_shared_calls"):  # fmt: skip
        out[table] = {k: [name(s) for s in v] for k, v in getattr(index, table).items()}
    out["call_statement"] = {k: name(s) for k, s in index.call_statement.items()}
    return out


def edges(found: Resolver, paths: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    return {
        p: [(e.src_qualname, e.dst_path, e.dst_qualname, e.resolution) for e in calls]
        for p in paths
        for calls in [found.resolve_file(p).calls]
    }


class TestRefresh:
    """A refreshed index holds exactly what a fresh build over the same snapshot holds."""

    def test_refreshed_equals_fresh(self) -> None:
        old = parse(BASE)
        new = {**old, **parse(CHANGED)}  # unchanged files keep their extract objects
        kept = StatementIndex()
        resolver(old, kept).flow.solver  # noqa: B018 - building the solver fills the index
        assert len(kept) == len(old)
        refreshed = resolver(new, kept).flow.solver.refreshed
        assert refreshed == 2  # the changed file and the added one, nothing else
        fresh = StatementIndex()
        resolver(new, fresh).flow.solver  # noqa: B018
        assert snapshot(kept) == snapshot(fresh)

    def test_resolution_is_the_same_as_a_fresh_resolver(self) -> None:
        old = parse(BASE)
        new = {**old, **parse(CHANGED)}
        kept = StatementIndex()
        edges(resolver(old, kept), sorted(old))
        again = edges(resolver(new, kept), sorted(new))
        assert again == edges(resolver(new, None), sorted(new))
        assert ("again", "app/store.py", "Store.fetch", "flow") in again["app/store.py"]

    def test_a_file_gone_leaves_nothing_behind(self) -> None:
        old = parse(BASE)
        kept = StatementIndex()
        resolver(old, kept).flow.solver  # noqa: B018
        gone = {p: e for p, e in old.items() if p != "app/store.py"}
        resolver(gone, kept).flow.solver  # noqa: B018
        fresh = StatementIndex()
        resolver(gone, fresh).flow.solver  # noqa: B018
        assert snapshot(kept) == snapshot(fresh)
        assert not any(k[0] == "app/store.py" for k in kept.functions)

    def test_a_new_parse_of_the_same_blob_is_read_again(self) -> None:
        """Identity, not content, decides: a set re-read from disk is re-indexed whole."""
        old = parse(BASE)
        kept = StatementIndex()
        resolver(old, kept).flow.solver  # noqa: B018
        reread = parse(BASE)  # equal content, new objects (a restart, a reload)
        assert resolver(reread, kept).flow.solver.refreshed == len(reread)
        fresh = StatementIndex()
        resolver(reread, fresh).flow.solver  # noqa: B018
        assert snapshot(kept) == snapshot(fresh)

    def test_back_and_forth_ends_where_a_fresh_build_is(self) -> None:
        old = parse(BASE)
        changed = parse(CHANGED)
        kept = StatementIndex()
        for step in (old, {**old, **changed}, old, {**old, **changed}):
            resolver(step, kept).flow.solver  # noqa: B018
        fresh = StatementIndex()
        resolver({**old, **changed}, fresh).flow.solver  # noqa: B018
        assert snapshot(kept) == snapshot(fresh)

    def test_a_copied_file_shares_its_call_sites_until_one_copy_goes(self) -> None:
        """One parse at two paths (a copied blob): the later path's statement answers,
        and taking either copy out leaves what a fresh build of the rest holds."""
        old = parse(BASE)
        copied = {**old, "app/store_copy.py": old["app/store.py"]}
        kept = StatementIndex()
        resolver(copied, kept).flow.solver  # noqa: B018
        call = old["app/store.py"].flow.calls[0]
        assert kept.call_statement[id(call)][1] == "app/store_copy.py"
        fresh = StatementIndex()
        resolver(copied, fresh).flow.solver  # noqa: B018
        assert snapshot(kept) == snapshot(fresh)
        for gone in ("app/store_copy.py", "app/store.py"):
            rest = {p: e for p, e in copied.items() if p != gone}
            kept = StatementIndex()
            resolver(copied, kept).flow.solver  # noqa: B018
            resolver(rest, kept).flow.solver  # noqa: B018
            fresh = StatementIndex()
            resolver(rest, fresh).flow.solver  # noqa: B018
            assert snapshot(kept) == snapshot(fresh)
            left = "app/store.py" if gone == "app/store_copy.py" else "app/store_copy.py"
            assert kept.call_statement[id(call)][1] == left


class TestIndexes:
    """One index per repository and ref in a process, the least recently used dropped."""

    def test_two_repositories_do_not_share_an_index(self) -> None:
        indexes = StatementIndexes()
        first = indexes.get("a", "main")
        resolver(parse(BASE), first).flow.solver  # noqa: B018
        second = indexes.get("b", "main")
        assert second is not first
        assert len(second) == 0
        resolver(parse(CHANGED), second).flow.solver  # noqa: B018
        assert indexes.get("a", "main") is first
        assert len(first) == len(BASE)
        assert indexes.get("a", "dev") is not first

    def test_the_least_recently_used_goes(self) -> None:
        indexes = StatementIndexes(limit=2)
        a = indexes.get("a", "main")
        indexes.get("b", "main")
        indexes.get("a", "main")
        indexes.get("c", "main")  # b goes, a was used since
        assert indexes.get("a", "main") is a
        assert len(indexes.get("b", "main")) == 0
