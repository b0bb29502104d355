"""The working state of one file's extraction: declarations and calls as found,
before and after linking (``_link`` turns them into the contract's records)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from strata.code.model import Import, SymbolKind

CLASS_LIKE: frozenset[str] = frozenset({"class", "interface", "struct", "enum", "trait"})


@dataclass(slots=True, eq=False)
class Decl:
    """One declaration as found; becomes a :class:`SymbolDef` after linking.

    ``node`` is the declaration; its byte range (or ``scope`` when given) owns the
    symbols and calls nested in it. ``outer`` is where the symbol's text starts:
    the first decorator, attribute or ``export`` keyword that belongs to it.
    """

    name: str
    kind: SymbolKind
    node: Node
    outer: Node | None = None
    scope: tuple[int, int] | None = None
    emit: bool = True  # False: prefixes qualnames but is no symbol (Rust impl)
    synthetic: bool = False  # made from a call (jest test, express route)
    owner: str | None = None  # qualname prefix not given by nesting (Go receiver type)
    self_name: str | None = None  # the method's receiver variable (Go), reads as "self"
    signature: str | None = None
    docstring: str | None = None
    bases: list[str] = field(default_factory=list)
    implements: list[str] = field(default_factory=list)
    decorators: list[str] = field(default_factory=list)
    decorator_nodes: list[Node] = field(default_factory=list)
    test_framework: str | None = None
    entrypoint: str | None = None
    framework: str | None = None
    # set by linking
    enclosing: Decl | None = None
    qualname: str = ""
    parent: str | None = None

    @property
    def start(self) -> int:
        return self.scope[0] if self.scope is not None else self.node.start_byte

    @property
    def end(self) -> int:
        return self.scope[1] if self.scope is not None else self.node.end_byte

    def first_node(self) -> Node:
        """The node the symbol's text starts at (decorators and ``export`` included)."""
        return self.outer or self.node


@dataclass(slots=True, eq=False)
class RawCall:
    """One call as found; ``caller`` is set by linking."""

    node: Node
    callee: str
    name: str
    receiver: str | None
    start: int
    line: int
    arguments: Node | None = None
    caller: Decl | None = None


@dataclass(slots=True, eq=False)
class RawType:
    """A declared type as found at byte ``start``; linking gives it its scope: the
    innermost symbol there, or for a ``member`` (a field) the innermost class-like one."""

    start: int
    name: str
    type: str
    from_call: bool = False
    member: bool = False


class Unit:
    """One file being extracted."""

    def __init__(self, path: str, source: bytes, root: Node) -> None:
        self.path = path
        self.source = source
        self.root = root
        self.decls: list[Decl] = []
        self.calls: list[RawCall] = []
        self.imports: list[Import] = []
        self.types: list[RawType] = []
        self.exports: list[tuple[str, str]] = []
        self.package: str | None = None
        self.frameworks: set[str] = set()
        self.entrypoints: list[str] = []
        self.is_test_file = False
        self._decl_keys: set[tuple[int, str]] = set()
        self._call_keys: set[int] = set()

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def add_decl(self, decl: Decl) -> bool:
        """Add ``decl`` unless a pattern already produced it (same node and name)."""
        key = (decl.node.id, decl.name)
        if key in self._decl_keys:
            return False
        self._decl_keys.add(key)
        self.decls.append(decl)
        return True

    def add_call(self, call: RawCall) -> None:
        if call.node.id not in self._call_keys:
            self._call_keys.add(call.node.id)
            self.calls.append(call)

    def add_entrypoint(self, entrypoint: str, framework: str | None = None) -> None:
        if entrypoint not in self.entrypoints:
            self.entrypoints.append(entrypoint)
        if framework is not None:
            self.frameworks.add(framework)

    def symbols(self) -> list[Decl]:
        """The emitted declarations in source order (valid after linking)."""
        return [d for d in self.decls if d.emit]
