"""Function values assigned, passed, returned and stored in containers reach their calls."""

from __future__ import annotations

from tests.unit.flow._pipeline import edges, unresolved

PIPELINE = """\
def clean(text):
    return text


def tokenize(text):
    return text


def count(text):
    return 1


STEPS = [clean, tokenize]
HANDLERS = {"count": count}


def choose(name):
    if name == "clean":
        return clean
    return tokenize


def apply(step, text):
    return step(text)


def run(text):
    first = clean
    first(text)
    for step in STEPS:
        step(text)
    HANDLERS["count"](text)
    picked = choose("x")
    picked(text)
    apply(count, text)


class Registry:
    def __init__(self):
        self.hooks = {"after": count}
        self.callback = tokenize

    def fire(self, text):
        self.hooks["after"](text)
        self.callback(text)
"""


class TestFunctionValues:
    """Every way a function travels as a value ends at the function."""

    def test_run(self) -> None:
        assert {e for e in edges({"p.py": PIPELINE}) if e[0] == "run"} == {
            ("run", "clean", "flow"),  # assigned, and an element of STEPS
            ("run", "tokenize", "flow"),  # element of STEPS, returned by choose
            ("run", "count", "flow"),  # a dict value
            ("run", "choose", "local"),
            ("run", "apply", "local"),
        }

    def test_parameter_bound_at_the_call(self) -> None:
        assert ("apply", "count", "flow") in edges({"p.py": PIPELINE})

    def test_stored_on_self(self) -> None:
        assert {e for e in edges({"p.py": PIPELINE}) if e[0] == "Registry.fire"} == {
            ("Registry.fire", "count", "flow"),
            ("Registry.fire", "tokenize", "flow"),
        }

    def test_nothing_left_unresolved(self) -> None:
        assert unresolved({"p.py": PIPELINE}, "p.py") == {}


class TestElementCalls:
    """A call of a container element is never guessed from the container's name."""

    def test_unknown_container(self) -> None:
        files = {
            "a.py": "def table():\n    pass\n",
            "b.py": "def go(table):\n    table[0]()\n",
        }
        assert edges(files, "b.py") == set()
        assert unresolved(files, "b.py") == {"go": ["table[0]@2"]}
