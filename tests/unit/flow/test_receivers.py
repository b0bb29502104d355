"""Receiver types from constructors, annotations and returns pick the right method."""

from __future__ import annotations

from tests.unit.flow._pipeline import edges, lines

KITCHEN = """\
from typing import Optional


class Oven:
    def heat(self):
        return 180


class Grill:
    def heat(self):
        return 300


class Timer:
    def ring(self):
        pass


class Cook:
    timer: Optional[Timer]

    def __init__(self, spare: "Grill | None" = None) -> None:
        self.spare = spare

    def equip(self):
        self.oven = Oven()

    def pick(self) -> Grill:
        return Grill()

    def bake(self, backup: Optional[Oven]):
        self.oven.heat()
        backup.heat()
        self.spare.heat()
        self.timer.ring()
        g = self.pick()
        g.heat()
        self.pick().heat()


def dinner():
    o = Oven()
    o.heat()
    t: Timer = make_timer()
    t.ring()


def make_timer():
    return Timer()
"""


class TestConstructors:
    """`x = C(); x.m()` and `self.x = C()` in any method reach C.m, not a same-named m."""

    def test_local_instance(self) -> None:
        found = edges({"kitchen.py": KITCHEN})
        assert ("dinner", "Oven.heat", "flow") in found
        assert ("dinner", "Grill.heat", "flow") not in found

    def test_attribute_set_in_another_method(self) -> None:
        found = lines({"kitchen.py": KITCHEN}, "kitchen.py")
        assert found[("Cook.bake", "Oven.heat")] == (32, 33)


class TestAnnotations:
    """Parameter, attribute, variable and return annotations type their values."""

    def test_every_heat_call_of_bake(self) -> None:
        found = lines({"kitchen.py": KITCHEN}, "kitchen.py")
        assert found[("Cook.bake", "Oven.heat")] == (32, 33)  # self.oven, Optional[Oven]
        assert found[("Cook.bake", "Grill.heat")] == (34, 37, 38)  # "Grill | None", -> Grill
        assert found[("Cook.bake", "Timer.ring")] == (35,)  # class-level annotation

    def test_annotated_local_wins_over_unknown_return(self) -> None:
        assert ("dinner", "Timer.ring", "flow") in edges({"kitchen.py": KITCHEN})

    def test_exact_edges_of_bake(self) -> None:
        found = {e for e in edges({"kitchen.py": KITCHEN}) if e[0] == "Cook.bake"}
        assert found == {
            ("Cook.bake", "Oven.heat", "flow"),
            ("Cook.bake", "Grill.heat", "flow"),
            ("Cook.bake", "Timer.ring", "flow"),
            ("Cook.bake", "Cook.pick", "self"),
        }


class TestReturns:
    """What a repository function returns types the caller's variable."""

    def test_return_of_a_plain_function(self) -> None:
        source = KITCHEN.replace("t: Timer = make_timer()", "t = make_timer()")
        assert ("dinner", "Timer.ring", "flow") in edges({"kitchen.py": source})

    def test_return_through_another_module(self) -> None:
        files = {
            "pkg/__init__.py": "",
            "pkg/kitchen.py": KITCHEN,
            "pkg/menu.py": (
                "from pkg.kitchen import Cook\n\n\n"
                "def serve(cook: Cook):\n"
                "    grill = cook.pick()\n"
                "    grill.heat()\n"
            ),
        }
        assert edges(files, "pkg/menu.py") == {
            ("serve", "pkg/kitchen.py:Cook.pick", "flow"),
            ("serve", "pkg/kitchen.py:Grill.heat", "flow"),
        }


REASSIGNED = """\
class Pen:
    def write(self):
        pass


class Brush:
    def write(self):
        pass


def draw(fancy):
    tool = Pen()
    tool = Brush()
    tool.write()
    other = Pen()
    if fancy:
        other = Brush()
    other.write()
    for _ in range(2):
        other.write()
        other = Pen()
"""


class TestStraightLineOrder:
    """In one block the last assignment before a read decides; branches and loops join."""

    def test_reassigned(self) -> None:
        found = lines({"r.py": REASSIGNED}, "r.py")
        assert found[("draw", "Brush.write")] == (14, 18, 20)
        assert found[("draw", "Pen.write")] == (18, 20)
