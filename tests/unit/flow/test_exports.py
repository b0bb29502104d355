"""Which changes of a file other files can see: the fingerprint of its exports."""

from __future__ import annotations

from strata.code.flow.exports import Seeds, changed_exports, dependents
from strata.code.flow.model import FlowCall
from strata.code.languages import parse_file
from strata.code.model import FileExtract
from tests.integration.code.test_flow_incremental import DRIVER, GARAGE

FACTORY = """\
from app.engines import Diesel, Electric


def make_engine(kind) -> {returns}:
    return registry_lookup(kind)


def describe(kind):
    text = "engine " + kind
    return text
"""

BYSTANDER = """\
def unrelated():
    return 42
"""


def _never(path: str, call: FlowCall) -> bool:
    return False


def _always(path: str, call: FlowCall) -> bool:
    return bool(call.args or call.keywords)  # every argument carries a value


def _parse(path: str, text: str) -> FileExtract:
    return parse_file(path, text.encode())


def _repo(factory: str) -> dict[str, tuple[str, FileExtract]]:
    files = {
        "app/factory.py": factory,
        "app/garage.py": GARAGE,
        "app/driver.py": DRIVER,
        "app/bystander.py": BYSTANDER,
    }
    return {p: (str(hash(t)), _parse(p, t)) for p, t in files.items()}


def _seeds(old: str, new: str, passes: bool = False) -> Seeds | None:
    return changed_exports(
        "app/factory.py",
        _parse("app/factory.py", old),
        _parse("app/factory.py", new),
        _always if passes else _never,
    )


class TestChangedExports:
    """Positions and bodies are not exports; signatures, returns and arguments are."""

    def test_a_body_only_change_exports_nothing(self) -> None:
        old = FACTORY.format(returns="Diesel")
        new = old.replace('"engine " + kind', '"motor " + kind')
        assert not _seeds(old, new)

    def test_lines_shifted_above_export_nothing(self) -> None:
        old = FACTORY.format(returns="Diesel")
        assert not _seeds(old, "# a comment\n\n" + old)

    def test_a_return_annotation_is_an_export(self) -> None:
        seeds = _seeds(FACTORY.format(returns="Diesel"), FACTORY.format(returns="Electric"))
        assert seeds is not None
        assert "make_engine" in seeds.readers

    def test_an_added_call_passing_values_seeds_its_callee(self) -> None:
        old = FACTORY.format(returns="Diesel")
        new = old + "\n\ndef extra():\n    return describe(Diesel())\n"
        quiet = _seeds(old, new)
        assert quiet is not None
        assert quiet.readers == {"extra"}
        assert not quiet.params
        loud = _seeds(old, new, passes=True)
        assert loud is not None
        assert loud.params == {"describe"}


LOCALS = """\
from app.engines import Diesel, Electric


def make_engine(kind):
    label = "engine " + kind
    engine = {engine}()
    parts = []
    parts.append({part})
    return engine, parts
"""  # `append` is not modelled: what it is passed does not move `parts`


class TestReturnedValues:
    """A function's callers see what it returns: a statement its returned values do not
    come from is not an export; one they come from is."""

    def _local(self, engine: str = "Diesel", part: str = "kind") -> str:
        return LOCALS.format(engine=engine, part=part)

    def test_a_new_local_nothing_returns_exports_nothing(self) -> None:
        old = self._local()
        new = old.replace(
            '    label = "engine " + kind\n', '    label = "engine " + kind\n    n = len(label)\n'
        )
        assert new != old
        seeds = _seeds(old, new)
        assert seeds is not None
        assert not seeds.readers

    def test_a_returned_local_assigned_anew_is_an_export(self) -> None:
        seeds = _seeds(self._local("Diesel"), self._local("Electric"))
        assert seeds is not None
        assert "make_engine" in seeds.readers

    def test_what_a_returned_call_is_passed_is_an_export(self) -> None:
        lookup = (
            "from app.engines import Diesel\n\n\n"
            "def make_engine(kind):\n"
            "    key = {key}\n"
            "    size = {size}\n"
            "    return registry_lookup(key)\n"
        )
        old = lookup.format(key="kind", size="len(kind)")
        passed = _seeds(old, lookup.format(key="Diesel", size="len(kind)"))
        assert passed is not None
        assert "make_engine" in passed.readers
        aside = _seeds(old, lookup.format(key="kind", size="len(Diesel)"))
        assert aside is not None
        assert "make_engine" not in aside.readers

    def test_a_statement_the_return_does_not_read_moves_nothing(self) -> None:
        old = self._local().replace("    parts = []\n", "    spare = Electric\n    parts = []\n")
        new = old.replace("    spare = Electric\n", "").replace(
            "    return engine, parts\n", "    spare = Electric\n    return engine, parts\n"
        )
        seeds = _seeds(old, new)
        assert seeds is not None
        assert not seeds.readers
        # The same move of a statement the return reads is an export.
        moved = old.replace("    engine = Diesel()\n", "").replace(
            "    return engine, parts\n", "    engine = Diesel()\n    return engine, parts\n"
        )
        again = _seeds(old, moved)
        assert again is not None
        assert "make_engine" in again.readers


class TestSeenBy:
    """A method's change is seen by the files that name the method, not every file that
    names its class; a constructor's by those that call the class."""

    SHOP = (
        "class Order:\n"
        "    def __init__(self, total):\n"
        "        self.total = total\n\n"
        "    def price(self):\n"
        "        return {price}\n\n\n"
        "def outer():\n"
        "    def inner():\n"
        "        return {inner}\n"
        "    return inner\n"
    )

    def _seeds(self, **changed: str) -> set[str]:
        values = {"price": "self.total", "inner": "Order"}
        old = self.SHOP.format(**values)
        new = self.SHOP.format(**(values | changed))
        found = changed_exports(
            "app/shop.py", _parse("app/shop.py", old), _parse("app/shop.py", new), _never
        )
        assert found is not None
        return found.readers

    def test_a_method_is_seen_by_its_name_not_its_class(self) -> None:
        readers = self._seeds(price="str(self.total)")
        assert "price" in readers
        assert "Order" not in readers

    def test_a_nested_function_is_seen_through_its_enclosing_function(self) -> None:
        assert {"inner", "outer"} <= self._seeds(inner="dict")

    def test_a_constructor_is_seen_by_the_callers_of_its_class(self) -> None:
        old = self.SHOP.format(price="1", inner="1")
        new = old.replace("def __init__(self, total):", "def __init__(self, total, tax=0):")
        found = changed_exports(
            "app/shop.py", _parse("app/shop.py", old), _parse("app/shop.py", new), _never
        )
        assert found is not None
        assert {"Order", "__init__"} <= found.readers


class TestDependents:
    """A changed export reaches the callers of its callers; an unused one reaches nobody."""

    def test_callers_of_callers_in_unchanged_files(self) -> None:
        old, new = FACTORY.format(returns="Diesel"), FACTORY.format(returns="Electric")
        seeds = _seeds(old, new)
        assert seeds is not None
        found = dependents(_repo(new), {"app/factory.py"}, seeds)
        assert found == {"app/garage.py", "app/driver.py"}

    def test_an_appended_function_nobody_calls_reaches_nobody(self) -> None:
        old = FACTORY.format(returns="Diesel")
        new = old + "\n\ndef race_slug(value):\n    return describe(value)\n"
        seeds = _seeds(old, new)
        assert seeds is not None
        assert dependents(_repo(new), {"app/factory.py"}, seeds) == set()


class TestElementWrites:
    """An element write (``c[k] = v``) is seen through the container it changes: the
    attribute or global that holds it, or the function that returns it; not through
    every word of the target (``self`` is in every method of a repository)."""

    STORE = (
        "REGISTRY = {{}}\n\n\n"
        "class Store:\n"
        "    def put(self, key):\n"
        "        self.data[key] = {held}\n\n"
        "    def cache(self, key):\n"
        "        rows = self.rows\n"
        "        rows[key] = {aliased}\n\n\n"
        "def register(key):\n"
        "    REGISTRY[key] = {registered}\n"
    )

    def _readers(self, **changed: str) -> set[str]:
        values = {"held": "key", "aliased": "key", "registered": "key"}
        old = self.STORE.format(**values)
        new = self.STORE.format(**(values | changed))
        found = changed_exports(
            "app/store.py", _parse("app/store.py", old), _parse("app/store.py", new), _never
        )
        assert found is not None
        return found.readers

    def test_an_attribute_container_is_seen_by_its_attribute_not_self(self) -> None:
        readers = self._readers(held="str(key)")
        assert "data" in readers
        assert "self" not in readers

    def test_a_local_alias_is_followed_to_the_attribute_it_holds(self) -> None:
        readers = self._readers(aliased="str(key)")
        assert "rows" in readers
        assert not {"self", "key"} & readers

    def test_a_global_written_inside_a_function_is_seen_by_its_name(self) -> None:
        assert "REGISTRY" in self._readers(registered="str(key)")

    def test_a_returned_container_reaches_the_callers_of_its_function(self) -> None:
        table = (
            "from app.factory import make_engine\n\n\n"
            "def table(kind):\n"
            "    d = {}\n"
            '    d["engine"] = make_engine(kind)\n'
            "    return d\n"
        )
        user = 'from app.table import table\n\n\ndef use():\n    return table("x")["engine"]\n'
        old, new = FACTORY.format(returns="Diesel"), FACTORY.format(returns="Electric")
        seeds = _seeds(old, new)
        assert seeds is not None
        files = _repo(new) | {
            p: (str(hash(t)), _parse(p, t))
            for p, t in (("app/table.py", table), ("app/user.py", user))
        }
        found = dependents(files, {"app/factory.py"}, seeds)
        assert {"app/table.py", "app/user.py"} <= found
