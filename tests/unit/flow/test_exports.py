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
