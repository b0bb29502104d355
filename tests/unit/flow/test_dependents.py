"""Which files must be re-resolved when a file changes: those its values reach."""

from __future__ import annotations

from tests.integration.code.test_flow_incremental import DRIVER, ENGINES, FACTORY, GARAGE
from tests.unit.flow._pipeline import edges, resolver

FILES = {
    "app/__init__.py": "",
    "app/engines.py": ENGINES,
    "app/factory.py": FACTORY.format(returns="Diesel"),
    "app/garage.py": GARAGE,
    "app/driver.py": DRIVER,
    "app/unrelated.py": "def idle():\n    return 1\n",
}


class TestDependents:
    """A return type changed in one file reaches the callers of its callers."""

    def test_callers_of_callers_depend_on_the_factory(self) -> None:
        flow = resolver(FILES).flow
        assert flow.dependents({"app/factory.py"}) == {"app/garage.py", "app/driver.py"}

    def test_the_edge_moves_with_the_annotation(self) -> None:
        before = edges(FILES, "app/driver.py")
        after = edges(dict(FILES, **{"app/factory.py": FACTORY.format(returns="Electric")}))
        assert ("drive", "app/engines.py:Diesel.start", "flow") in before
        assert ("drive", "app/engines.py:Electric.start", "flow") in after
        assert ("drive", "app/engines.py:Diesel.start", "flow") not in after
