"""A file's identifiers are one ``Name`` object each (and ``self.x`` one ``Attr``):
what that shares must not merge the statements of different functions."""

from __future__ import annotations

from textwrap import dedent

from strata.code.flow.model import Attr, FileFlow, Name
from strata.code.languages import parse_file
from tests.unit.flow._pipeline import edges

SOURCE = """\
class Engine:
    def start(self):
        return 1


class Pump:
    def start(self):
        return 2


engine = Engine()
pump = Pump()


def first():
    return engine


def second():
    return engine


def other():
    return pump


def use_first():
    first().start()


def use_second():
    second().start()


def use_other():
    other().start()
"""


def _flow(source: str) -> FileFlow:
    flow = parse_file("machines.py", dedent(source).encode()).flow
    assert isinstance(flow, FileFlow)
    return flow


def test_two_functions_returning_one_shared_name_both_return_it() -> None:
    returned = {f.qualname: f.returns for f in _flow(SOURCE).functions}
    # The premise: both functions return the very same object.
    assert returned["first"][0] is returned["second"][0]
    found = edges({"machines.py": SOURCE})
    assert ("use_first", "Engine.start", "flow") in found
    assert ("use_second", "Engine.start", "flow") in found
    assert ("use_other", "Pump.start", "flow") in found
    assert not {e for e in found if e[0] == "use_second" and e[1] == "Pump.start"}


def test_names_and_attributes_of_names_are_shared_literals_are_not() -> None:
    flow = _flow(
        """\
        class Box:
            def fill(self):
                self.items = []
                self.items = []
                self.items.append(1)
        """
    )
    first, second = flow.assigns[0], flow.assigns[1]
    assert isinstance(first.target, Attr)
    assert isinstance(first.target.obj, Name)
    assert first.target is second.target  # `self.items`, twice
    assert first.value is not second.value  # two lists: each a value of its own
