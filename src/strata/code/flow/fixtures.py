"""pytest fixtures: a test's parameter holds what the fixture of that name returns or yields.

``def test_x(runner): runner.invoke(...)`` receives the value of the ``runner``
fixture: a function decorated ``@pytest.fixture`` (or ``@fixture``,
``@pytest.fixture(...)``, ``@pytest_asyncio.fixture``) in the test's own file
(its class first), else in the nearest ``conftest.py`` of its directory or a
parent directory, as pytest looks them up. Only parameters of functions in test
files are read this way, and only unannotated ones (an annotation says more).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

from strata.code.flow.model import FileFlow, Function, Param
from strata.code.model import FileExtract

Target = tuple[str, str]  # (path, qualname) of a fixture function
_FIXTURE_DECORATORS = ("fixture", "pytest.fixture", "pytest_asyncio.fixture")


def is_fixture(decorators: tuple[str, ...] | list[str]) -> bool:
    """Whether the decorators (as written, without ``@``) make a pytest fixture."""
    return any(d.split("(", 1)[0].strip() in _FIXTURE_DECORATORS for d in decorators)


class Fixtures:
    """The fixtures of a repository's test files, by file and name."""

    def __init__(self, files: dict[str, FileExtract], flows: dict[str, FileFlow]) -> None:
        # Read per file on first ask: a push asks about a few test files of a large set.
        self._by_file: dict[str, dict[str, list[str]]] = {}
        self._files = files
        self._flows = flows

    def _of(self, path: str) -> dict[str, list[str]]:
        """The fixtures one file declares, by name."""
        found = self._by_file.get(path)
        if found is None:
            found = self._by_file[path] = defaultdict(list)
            extract = self._files.get(path)
            if extract is not None and extract.is_test_file and path in self._flows:
                for symbol in extract.symbols:
                    if symbol.kind in ("function", "method") and is_fixture(symbol.decorators):
                        found[symbol.name].append(symbol.qualname)
        return found

    def params(self, path: str, function: Function) -> list[tuple[Param, Target]]:
        """The parameters of ``function`` (in ``path``) that a fixture fills, with it."""
        extract = self._files.get(path)
        if extract is None or not extract.is_test_file:
            return []
        found = []
        for param in function.params:
            if param.annotation or param.kind != "pos" or param.name in ("self", "cls"):
                continue
            target = self.find(path, function.qualname, param.name)
            if target is not None and target != (path, function.qualname):
                found.append((param, target))
        return found

    def find(self, path: str, qualname: str, name: str) -> Target | None:
        """The fixture ``name`` as seen from ``qualname`` in ``path``."""
        own = self._of(path).get(name, [])
        owner = qualname.rsplit(".", 1)[0] if "." in qualname else ""
        for candidate in own:  # the test's class first, then the module
            if owner and candidate == f"{owner}.{name}":
                return (path, candidate)
        if name in own:
            return (path, name)
        directory = posixpath.dirname(path)
        while True:
            conftest = posixpath.join(directory, "conftest.py") if directory else "conftest.py"
            if conftest != path and name in self._of(conftest).get(name, []):
                return (conftest, name)
            if not directory:
                return None
            directory = posixpath.dirname(directory)
