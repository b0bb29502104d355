"""Decorators, implicit protocol calls and lambdas."""

from __future__ import annotations

from tests.unit.flow._pipeline import edges

DECORATED = """\
import functools


def retry(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@retry
def fetch(url):
    return url


class Page:
    @property
    def title(self):
        return "t"

    @staticmethod
    def slug(text):
        return text

    def render(self):
        self.slug(self.title)
        return Page.slug("x")
"""

PROTOCOLS = """\
class Rows:
    def __iter__(self):
        return self

    def __next__(self):
        raise StopIteration


class Session:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def commit(self):
        pass


def export():
    for row in Rows():
        print(row)
    with Session() as session:
        session.commit()
    for item in [1, 2]:
        print(item)
"""

LAMBDAS = """\
def helper():
    pass


def other():
    pass


def use():
    later = lambda: helper()
    later()
    alias = other
    alias()
"""


class TestDecorators:
    """A repository decorator receives the function; builtin decorators keep the method."""

    def test_wrapper_calls_the_decorated_function(self) -> None:
        assert ("retry.wrapper", "fetch", "flow") in edges({"d.py": DECORATED})

    def test_staticmethod_and_property(self) -> None:
        assert {e for e in edges({"d.py": DECORATED}) if e[0] == "Page.render"} == {
            ("Page.render", "Page.slug", "self"),
        }


class TestImplicitCalls:
    """`for` and `with` over a repository class's instance reach its protocol methods."""

    def test_export(self) -> None:
        assert edges({"p.py": PROTOCOLS}) == {
            ("export", "Rows", "local"),
            ("export", "Rows.__iter__", "implicit"),
            ("export", "Rows.__next__", "implicit"),
            ("export", "Session", "local"),
            ("export", "Session.__enter__", "implicit"),
            ("export", "Session.__exit__", "implicit"),
            ("export", "Session.commit", "flow"),
        }


class TestLambdas:
    """A lambda is no symbol: its calls belong to the enclosing function, and a call of a
    lambda-valued name resolves to nothing (not to what the lambda calls)."""

    def test_use(self) -> None:
        assert edges({"l.py": LAMBDAS}) == {
            ("use", "helper", "local"),
            ("use", "other", "flow"),
        }


APPLIED = """\
def timed(fn):
    def inner(*args):
        return fn(*args)

    return inner


def route(path):
    def register(fn):
        return fn

    return register


@timed
def slow():
    return 1


@route("/home")
def home():
    return 2


def main():
    slow()
    home()


class Pot:
    def boil(self):
        pass


def kitchen():
    pots = [Pot(), Pot()]
    return [p.boil() for p in pots]
"""


class TestDecoratorApplication:
    """Applying a decorator calls it; calling the decorated name runs what it returned."""

    def test_applied_at_file_level(self) -> None:
        found = {e for e in edges({"a.py": APPLIED}) if e[0] is None}
        assert found == {
            (None, "timed", "implicit"),
            (None, "route", "local"),  # route("/home") is a call as written
            (None, "route.register", "implicit"),
        }

    def test_calling_the_decorated_name(self) -> None:
        assert {e for e in edges({"a.py": APPLIED}) if e[0] == "main"} == {
            ("main", "slow", "local"),
            ("main", "timed.inner", "flow"),
            ("main", "home", "local"),  # register returns fn itself
        }


class TestComprehensions:
    """A comprehension's loop variable holds the iterated elements."""

    def test_elements_of_a_list(self) -> None:
        assert {e for e in edges({"a.py": APPLIED}) if e[0] == "kitchen"} == {
            ("kitchen", "Pot", "local"),
            ("kitchen", "Pot.boil", "flow"),
        }

    def test_the_wrapper_calls_the_original(self) -> None:
        assert {e for e in edges({"a.py": APPLIED}) if e[0] == "timed.inner"} == {
            ("timed.inner", "slow", "flow"),
        }
