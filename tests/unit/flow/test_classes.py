"""Constructors, ``cls``/``type[X]``, ``super()`` and subclass overrides."""

from __future__ import annotations

from tests.unit.flow._pipeline import edges

SHAPES = """\
class Shape:
    def __init__(self, name):
        self.name = name

    @classmethod
    def named(cls, name):
        return cls(name)

    def describe(self):
        return self.area()

    def area(self):
        return 0

    def draw(self):
        self.outline()


class Square(Shape):
    def area(self):
        return super().area() + 1

    def outline(self):
        pass


class Circle(Shape):
    def __init__(self, name):
        super().__init__(name)

    def area(self):
        return 3

    def outline(self):
        pass


def build(kind: type[Shape]):
    return kind("k")


def main():
    Square("s")
    Circle("c")
    c = Circle.named("c")
    c.describe()
"""


class TestConstructors:
    """`C(...)` also reaches `C.__init__`, found through the bases."""

    def test_init_through_bases(self) -> None:
        found = {e for e in edges({"s.py": SHAPES}) if e[0] == "main"}
        assert found == {
            ("main", "Square", "local"),
            ("main", "Shape.__init__", "constructor"),  # Square has none of its own
            ("main", "Circle", "local"),
            ("main", "Circle.__init__", "constructor"),
            ("main", "Shape.named", "qualified"),
            ("main", "Shape.describe", "flow"),  # c: what Shape.named returns
        }


class TestClassValues:
    """`cls(...)` in a classmethod and a `type[X]` parameter construct X."""

    def test_cls(self) -> None:
        found = {e for e in edges({"s.py": SHAPES}) if e[0] == "Shape.named"}
        assert found == {
            ("Shape.named", "Shape", "flow"),
            ("Shape.named", "Shape.__init__", "constructor"),
        }

    def test_type_annotation(self) -> None:
        found = {e for e in edges({"s.py": SHAPES}) if e[0] == "build"}
        assert found == {("build", "Shape", "flow"), ("build", "Shape.__init__", "constructor")}


class TestSuper:
    """`super().m()` reaches the base's m."""

    def test_super(self) -> None:
        found = edges({"s.py": SHAPES})
        assert ("Square.area", "Shape.area", "hierarchy") in found
        assert ("Circle.__init__", "Shape.__init__", "hierarchy") in found


class TestOverrides:
    """`self.m()` reaches subclasses' m (marked `override`) when the class has no concrete
    m of its own; a concrete own m keeps the call (the same-name trap)."""

    def test_concrete_own_method_keeps_the_call(self) -> None:
        assert {e for e in edges({"s.py": SHAPES}) if e[0] == "Shape.describe"} == {
            ("Shape.describe", "Shape.area", "self"),
        }

    def test_hook_only_subclasses_define(self) -> None:
        assert {e for e in edges({"s.py": SHAPES}) if e[0] == "Shape.draw"} == {
            ("Shape.draw", "Square.outline", "override"),
            ("Shape.draw", "Circle.outline", "override"),
        }

    def test_abstract_method(self) -> None:
        source = (
            "import abc\n\n\n"
            "class Job(abc.ABC):\n"
            "    @abc.abstractmethod\n"
            "    def step(self):\n"
            "        ...\n\n"
            "    def run(self):\n"
            "        self.step()\n\n\n"
            "class Nightly(Job):\n"
            "    def step(self):\n"
            "        pass\n"
        )
        assert edges({"j.py": source}) == {
            ("Job.run", "Job.step", "self"),
            ("Job.run", "Nightly.step", "override"),
        }


DIAMOND = """\
class Root:
    def greet(self):
        return "root"


class Left(Root):
    pass


class Right(Root):
    def greet(self):
        return "right"


class Both(Left, Right):
    pass


def hello():
    b = Both()
    b.greet()
"""


class TestMethodOrder:
    """A member is looked up in C3 order: the second base's override beats the root."""

    def test_diamond(self) -> None:
        assert edges({"d.py": DIAMOND}) == {
            ("hello", "Both", "local"),
            ("hello", "Right.greet", "flow"),
        }
