"""Symbol identity and the exported API on the pure pipeline: overload stubs fold into their
implementation (Python and TypeScript), and public_api follows __all__ and re-exports."""

from __future__ import annotations

from strata.code.languages import parse_file
from strata.code.modules import ModuleIndex
from strata.code.resolver import Resolver

STUBS = b"""\
from typing import overload


class R:
    @overload
    def it(self, a: int) -> int: ...
    @overload
    def it(self, a: str) -> str: ...
    def it(self, a):
        return a

    @property
    def x(self):
        return 1

    @x.setter
    def x(self, v):
        pass


def plain():
    return 1


def plain():
    return 2
"""

ONLY_STUBS = b"""\
from typing import overload

@overload
def f(a: int) -> int: ...
@overload
def f(a: str) -> str: ...
"""

TS = b"""\
export function f(a: string): string;
export function f(a: number): number;
export function f(a: any): any { return a; }
class C {
  m(a: string): void;
  m(a: any): void { f(a); }
}
"""


def qualnames(path: str, source: bytes) -> list[tuple[str, int]]:
    return [(s.qualname, s.line_start) for s in parse_file(path, source).symbols]


class TestOverloads:
    def test_python_stubs_are_the_implementation(self) -> None:
        found = qualnames("m.py", STUBS)
        assert ("R.it", 9) in found
        assert not [q for q, _ in found if q.startswith("R.it#")]
        # Not overloads: a property setter and a plain redefinition keep their numbers.
        assert {"R.x", "R.x#2", "plain", "plain#2"} <= {q for q, _ in found}

    def test_stubs_without_implementation_keep_the_first(self) -> None:
        assert qualnames("m.pyi", ONLY_STUBS) == [("f", 3)]  # from its decorator

    def test_typescript_signatures_are_the_implementation(self) -> None:
        assert qualnames("o.ts", TS) == [("f", 3), ("C", 4), ("C.m", 6)]


def public(files: dict[str, bytes]) -> dict[str, list[str]]:
    extracts = {p: parse_file(p, s) for p, s in files.items()}
    resolver = Resolver(ModuleIndex(extracts, []))
    return {p: sorted(resolver.resolve_file(p).public_api) for p in sorted(extracts)}


class TestPublicApi:
    def test_all_reexports_and_stars(self) -> None:
        found = public(
            {
                "lib/__init__.py": b"from .api import get as get\nfrom .api import _hidden\n"
                b"from .sub import *\nimport os\n\ndef top():\n    from .api import inner\n"
                b"    return inner()\n",
                "lib/api.py": b'__all__ = ["get", "post"]\ndef get(): pass\ndef post(): pass\n'
                b"def inner(): pass\ndef _hidden(): pass\ndef other(): pass\n",
                "lib/sub/__init__.py": b"from .impl import *\n",
                "lib/sub/impl.py": b"def starred(): pass\ndef _private(): pass\n",
                "tests/__init__.py": b"from lib.api import other\n",
            }
        )
        assert found == {
            "lib/__init__.py": ["top"],
            "lib/api.py": ["get", "post"],
            "lib/sub/__init__.py": [],
            "lib/sub/impl.py": ["starred"],
            "tests/__init__.py": [],
        }
