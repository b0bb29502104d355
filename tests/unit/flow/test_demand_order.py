"""A call site's flow answer does not depend on which questions came before it."""

from __future__ import annotations

from strata.code.flow import demand
from strata.code.languages import parse_file
from strata.code.modules import ModuleIndex, detect_packages
from strata.code.resolver import Resolver

ROUTING = b"""\
class Route:
    def url_path_for(self, name):
        return name


class Router:
    def __init__(self, routes):
        self.routes = routes

    def url_path_for(self, name):
        for route in self.routes:
            return route.url_path_for(name)
"""

TESTS = b"""\
from routing import Route, Router

app = Router([Route()])


def test_url_path_for():
    assert app.url_path_for("home")
"""


def _edges(files: dict[str, bytes], order: list[str]) -> dict[str, set[tuple[str, str]]]:
    extracts = {path: parse_file(path, source) for path, source in files.items()}
    resolver = Resolver(ModuleIndex(extracts, detect_packages(sorted(files), {})))
    return {
        path: {(c.src_qualname or "", c.dst_qualname) for c in resolver.resolve_file(path).calls}
        for path in order
    }


def test_a_call_first_run_deep_in_a_demand_chain_is_answered_again(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # With no depth at all, every variable read inside a statement is cut off: the
    # call of test_url_path_for runs (as a passer of Router.url_path_for's `name`)
    # while `app` is unknown. Its answer must still come out right.
    monkeypatch.setattr(demand, "MAX_DEMAND", 1)
    files = {"routing.py": ROUTING, "test_routing.py": TESTS}
    alone = _edges(files, ["test_routing.py"])["test_routing.py"]
    after = _edges(files, ["routing.py", "test_routing.py"])["test_routing.py"]
    assert ("test_url_path_for", "Router.url_path_for") in alone
    assert after == alone
