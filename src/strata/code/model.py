"""What parsing one file yields: the language-neutral extraction contract.

Language adapters (``strata.code.languages``) turn source bytes into a
:class:`FileExtract`; nothing here knows about Neo4j or other files. Call and
import targets are kept as written; the resolver links them to declarations.

Conventions shared by every adapter:

- Lines are 1-based and inclusive; ``line_end`` is the last line of the node.
- ``qualname`` is the name path *inside the file*: ``Outer.Inner.method``,
  ``function``, ``Class``; Go methods are ``Receiver.Method``; Rust impl
  methods are ``Type.method``; overloads (Java, C#) get ``name#2``, ``name#3``
  in source order for the second and later ones.
- ``signature`` is the declaration head on one line (no body), at most 300
  characters; ``docstring`` at most 1000 characters, with comment markers or
  quotes removed.
- ``body_hash`` is a hash of the symbol's full text with whitespace runs
  collapsed, so re-indenting a file does not change it but any token change does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal

from strata.code.reduction import by_constructor

if TYPE_CHECKING:
    from strata.code.flow.model import FileFlow

SymbolKind = Literal[
    "class",
    "interface",
    "struct",
    "enum",
    "trait",
    "function",
    "method",
    "constant",
    "type",
    "module",
]


@dataclass(frozen=True, slots=True)
class SymbolDef:
    """One declaration in a file."""

    qualname: str
    name: str
    kind: SymbolKind
    line_start: int
    line_end: int
    body_hash: str
    signature: str | None = None
    docstring: str | None = None
    parent: str | None = None  # qualname of the enclosing symbol
    bases: tuple[str, ...] = ()  # superclasses / extends, as written
    implements: tuple[str, ...] = ()  # interfaces implemented, as written
    decorators: tuple[str, ...] = ()  # decorators / annotations / attributes, as written
    test_framework: str | None = (
        None  # pytest, unittest, jest, vitest, go, junit, cargo, xunit, nunit, mstest
    )
    entrypoint: str | None = None  # "http GET /users", "cli main", "__main__", "func main"
    framework: str | None = (
        None  # fastapi, flask, django, express, nestjs, spring, aspnet, nethttp, ...
    )
    shape_hash: str | None = None  # body_hash with the symbol's own name masked: survives renames


@dataclass(frozen=True, slots=True)
class CallSite:
    """A call as written: ``receiver.name(...)`` or ``name(...)``."""

    caller: str | None  # qualname of the innermost enclosing symbol; None at file level
    callee: str  # the callee expression text, e.g. "self.save", "os.path.join", "helper"
    name: str  # the called identifier, e.g. "save", "join", "helper"
    receiver: str | None  # "self", "this", "os.path", "obj", "super", or None
    line: int
    arity: int | None = None  # arguments written; None: unknown (a spread, no list)


RETURNS = "()"  # DeclaredType.name of a function's result


@dataclass(frozen=True, slots=True)
class DeclaredType:
    """The type a name is declared or constructed with, as written: what a call on it
    reaches (``svc: Service``, ``x = new Repo()``, ``x := NewStore()``, a field).

    ``scope`` is the function the name is a local or parameter of, or the class-like
    symbol it is a field of (``None``: file level); ``name`` is :data:`RETURNS` for a
    function's declared result. ``type`` is a type name as written without pointers,
    references and type arguments (``Repo``, ``models.Repo``, ``crate::a::Repo``,
    ``Self``), or, with ``from_call``, the callee whose result the name holds.
    """

    scope: str | None
    name: str
    type: str
    from_call: bool = False


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module or name.

    ``from a.b import c as d`` is ``Import(module="a.b", names=("c",), alias="d")``;
    ``import numpy as np`` is ``Import(module="numpy", alias="np")``;
    ``import { x as y } from "./m"`` is ``Import(module="./m", names=("x",), alias="y")``;
    a wildcard import has ``names=("*",)``.
    """

    module: str
    line: int
    names: tuple[str, ...] = ()
    alias: str | None = None


@dataclass(frozen=True, slots=True)
class FileExtract:
    """Everything one file declares, imports and calls."""

    path: str  # repository-relative, "/" separated
    language: str  # python, typescript, tsx, javascript, go, java, rust, csharp
    lines: int
    symbols: tuple[SymbolDef, ...] = ()
    calls: tuple[CallSite, ...] = ()
    imports: tuple[Import, ...] = ()
    package: str | None = None  # Go package, Java package, C# namespace, Rust crate path
    has_errors: bool = False  # tree-sitter had to recover from syntax errors
    is_test_file: bool = False
    frameworks: tuple[str, ...] = ()
    entrypoints: tuple[str, ...] = field(default=())  # file-level: "__main__", "func main"
    # declared receiver types (languages without flow); before ``flow``, which stays last
    types: tuple[DeclaredType, ...] = ()
    # exported name -> local name, where the export renames (``module.exports = Foo``
    # is ("default", "Foo"); ``exports.run = start`` is ("run", "start"))
    exports: tuple[tuple[str, str], ...] = ()
    flow: FileFlow | None = None  # value flow for strata.code.flow; None: not extracted

    def __setstate__(self, state: list[object]) -> None:
        # Pickles from before a field was added hold fewer values: the rest keep defaults.
        for spec, value in zip(fields(self), state, strict=False):
            object.__setattr__(self, spec.name, value)
        for spec in fields(self)[len(state) :]:
            object.__setattr__(self, spec.name, spec.default)


by_constructor(__name__)
