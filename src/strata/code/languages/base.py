"""What every language adapter shares: grammar and query loading, the text
helpers of :mod:`._text` (re-exported here), and the extraction pipeline
(queries find the nodes, small walks name them).

An adapter subclasses :class:`LanguageAdapter`, names its grammar, extensions and
query file, and overrides the hooks it needs. :meth:`LanguageAdapter.extract`
runs the query once over the tree, hands every match to the handler of its role
capture (see ``queries/README.md``), links symbols and calls to their enclosing
symbols (:mod:`._link`), then lets the adapter mark tests and entrypoints.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import resources
from typing import ClassVar, cast, get_args

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from strata.code.languages._link import build_extract, link
from strata.code.languages._text import (
    MAX_RECEIVER,
    body_hash,
    clean_doc,
    collapse,
    decode,
    doc_comments_above,
    field_signature,
    plain_type,
    signature,
    strip_block_comment,
    strip_line_comments,
    unquote,
)
from strata.code.languages._unit import Decl, RawCall, RawType, Unit
from strata.code.languages.module_system import ModuleSystem
from strata.code.model import RETURNS, FileExtract, Import, SymbolKind

__all__ = [
    "Decl",
    "LanguageAdapter",
    "RawCall",
    "Unit",
    "body_hash",
    "build_extract",
    "clean_doc",
    "collapse",
    "compiled_query",
    "decode",
    "doc_comments_above",
    "field_signature",
    "plain_type",
    "signature",
    "strip_block_comment",
    "strip_line_comments",
    "unquote",
]

_QUERIES: dict[tuple[str, str], Query] = {}
_QUERIES_LOCK = threading.Lock()
Handler = Callable[[Unit, str, dict[str, list[Node]]], None]
_KINDS = frozenset(get_args(SymbolKind))
_INCLUDE = ";; include:"


def query_text(stem: str) -> str:
    """``queries/<stem>.scm``, each ``;; include: <other>`` line replaced by that file's
    text (what two grammars share is written once)."""
    text = resources.files("strata.code").joinpath("queries", f"{stem}.scm")
    lines = text.read_text(encoding="utf-8").split("\n")
    return "\n".join(
        query_text(line.removeprefix(_INCLUDE).strip()) if line.startswith(_INCLUDE) else line
        for line in lines
    )


def compiled_query(language: Language, stem: str) -> Query:
    """The query ``queries/<stem>.scm`` compiled for ``language``, once per process."""
    key = (stem, str(language.name or id(language)))
    query = _QUERIES.get(key)
    if query is None:
        with _QUERIES_LOCK:
            query = _QUERIES.get(key)
            if query is None:
                query = Query(language, query_text(stem))
                _QUERIES[key] = query
    return query


class LanguageAdapter:
    """Turns one language's source bytes into a :class:`FileExtract`.

    Subclasses set the class attributes (``module_system`` included), implement
    :meth:`grammar` and override the ``on_*`` handlers and the
    ``describe``/``before_link``/``finish`` hooks.
    """

    language: ClassVar[str]
    extensions: ClassVar[tuple[str, ...]]
    query_file: ClassVar[str]
    # how files of this language see each other (shared by adapters that import each other)
    module_system: ClassVar[ModuleSystem]
    # (module prefix, framework): an import of the prefix marks the file's framework
    framework_imports: ClassVar[tuple[tuple[str, str], ...]] = ()
    # receivers that mean "the parent class" in this language, normalized to "super"
    super_receivers: ClassVar[frozenset[str]] = frozenset({"super"})
    # declared "types" that leave the type to the value (`var x = new C()`)
    inferred_types: ClassVar[frozenset[str]] = frozenset()
    # Parse a file that does not end in a newline with one added (a grammar whose
    # scanner never returns on some inputs cut off at the end: see KotlinAdapter).
    # Offsets and the line count are the same either way.
    final_newline: ClassVar[bool] = False

    def __init__(self) -> None:
        self._language: Language | None = None
        self._handlers: dict[str, Handler] | None = None

    # ---- grammar and query

    def grammar(self) -> object:
        """The grammar capsule, e.g. ``tree_sitter_python.language()``."""
        raise NotImplementedError

    def ts_language(self) -> Language:
        """The tree-sitter language, built once per adapter."""
        if self._language is None:
            self._language = Language(self.grammar())
        return self._language

    def query(self) -> Query:
        """This language's extraction query (compiled once per process)."""
        return compiled_query(self.ts_language(), self.query_file)

    # ---- pipeline

    def extract(self, path: str, source: bytes) -> FileExtract:
        """Parse ``source`` (the file at repository-relative ``path``) and extract it."""
        if self.final_newline and source and not source.endswith(b"\n"):
            source += b"\n"
        tree = Parser(self.ts_language()).parse(source)
        unit = Unit(path, source, tree.root_node)
        unit.is_test_file = self.is_test_path(path)
        handlers = self._role_handlers()
        for _, captures in QueryCursor(self.query()).matches(unit.root):
            for key in captures:
                handler = handlers.get(key)
                if handler is not None:
                    handler(unit, key, captures)
                    break
        for module in {imp.module for imp in unit.imports}:
            framework = self.framework_of_import(module)
            if framework is not None:
                unit.frameworks.add(framework)
        self.before_link(unit)
        link(unit)
        self.finish(unit)
        return build_extract(unit, self.language, has_errors=tree.root_node.has_error)

    def _role_handlers(self) -> dict[str, Handler]:
        if self._handlers is None:
            query = self.query()
            handlers: dict[str, Handler] = {}
            for index in range(query.capture_count):
                name = query.capture_name(index)
                role = name.split(".", 1)[0]
                if role == "definition" and "." in name:
                    if name.split(".", 1)[1] not in _KINDS:
                        raise ValueError(f"{self.query_file}.scm: unknown symbol kind in @{name}")
                    handlers[name] = self._on_definition_capture
                elif role == "scope" and "." in name:
                    handlers[name] = self.on_scope
                elif name == "reference.call":
                    handlers[name] = self.on_call
                elif role == "reference" and "." in name:
                    handlers[name] = self.on_reference
                elif name == "import":
                    handlers[name] = self.on_import
                elif role == "import" and "." in name:
                    handlers[name] = self.on_import_form
                elif role in ("export", "typed") and "." in name:
                    handlers[name] = self.on_export if role == "export" else self.on_typed
                elif name == "package":
                    handlers[name] = self.on_package
                elif role == "entrypoint" and "." in name:
                    handlers[name] = self.on_entrypoint
            self._handlers = handlers
        return self._handlers

    # ---- hooks (defaults are the generic behaviour)

    def is_test_path(self, path: str) -> bool:
        """Whether the file name alone makes this a test file."""
        return False

    def framework_of_import(self, module: str) -> str | None:
        for prefix, framework in self.framework_imports:
            if module == prefix or (
                module.startswith(prefix) and module[len(prefix) : len(prefix) + 1] in "./:"
            ):
                return framework
        return None

    def _on_definition_capture(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        kind = cast(SymbolKind, role.split(".", 1)[1])  # checked in _role_handlers
        node = caps[role][0]
        name_node = caps["name"][0]
        decl = self.on_definition(unit, kind, node, name_node, caps)
        if decl is not None and unit.add_decl(decl):
            self.describe(unit, decl)

    def on_definition(
        self, unit: Unit, kind: SymbolKind, node: Node, name: Node, caps: dict[str, list[Node]]
    ) -> Decl | None:
        """A :class:`Decl` for a ``@definition.<kind>`` match, or None to skip it."""
        return Decl(name=unit.text(name), kind=kind, node=node)

    def describe(self, unit: Unit, decl: Decl) -> None:
        """Fill signature, docstring, decorators, bases and implements of ``decl``."""

    def on_scope(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """A ``@scope.<what>`` match (none by default)."""

    def on_call(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        node = caps[role][0]
        name_node = caps["name"][0]
        receiver_nodes = caps.get("receiver")
        receiver = receiver_nodes[0] if receiver_nodes else None
        callee_nodes = caps.get("callee")
        if callee_nodes:
            callee_text = unit.text(callee_nodes[0])
        else:
            start = receiver.start_byte if receiver is not None else name_node.start_byte
            callee_text = decode(unit.source[start : name_node.end_byte])
        args = caps.get("arguments")
        arguments = args[0] if args else None
        self.add_call(
            unit, node, callee_text, unit.text(name_node), receiver=receiver, arguments=arguments
        )

    def add_call(
        self,
        unit: Unit,
        node: Node,
        callee_text: str,
        name: str,
        *,
        receiver: Node | None,
        arguments: Node | None,
    ) -> None:
        """Record one call; receivers are collapsed, normalized and capped."""
        callee = collapse(callee_text)
        receiver_text: str | None = None
        if receiver is not None:
            receiver_text = self.normalize_receiver(collapse(unit.text(receiver)))
            if len(receiver_text) > MAX_RECEIVER:
                receiver_text = receiver_text[:MAX_RECEIVER]
                callee = f"{receiver_text}.{name}"
        unit.add_call(
            RawCall(
                node=node,
                callee=callee,
                name=name,
                receiver=receiver_text,
                start=node.start_byte,
                line=node.start_point.row + 1,
                arguments=arguments,
            )
        )

    def normalize_receiver(self, text: str) -> str:
        return "super" if text in self.super_receivers else text

    def on_reference(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """A language-specific ``@reference.<other>`` match (none by default)."""

    def on_import(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        module_node = caps["module"][0]
        names: tuple[str, ...] = ()
        alias: str | None = None
        if "wildcard" in caps:
            names = ("*",)
        elif "imported" in caps:
            names = (unit.text(caps["imported"][0]),)
        if "default" in caps:
            names, alias = ("default",), unit.text(caps["default"][0])
        elif "alias" in caps:
            alias = unit.text(caps["alias"][0])
        line = caps[role][0].start_point.row + 1
        unit.imports.append(
            Import(module=self.module_text(unit, module_node), line=line, names=names, alias=alias)
        )

    def module_text(self, unit: Unit, node: Node) -> str:
        return collapse(unit.text(node))

    def on_import_form(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """A language-specific ``@import.<form>`` match (none by default)."""

    def on_export(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """An ``@export.<form>`` match: a name exported under another (none by default)."""

    def on_typed(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """``@typed.local`` (a local or parameter), ``@typed.member`` (a field) or
        ``@typed.return`` (a function's result): ``@name`` has the type ``@type``, or
        holds what ``@call`` (a callee expression) returns."""
        form = role.split(".", 1)[1]
        name = RETURNS if form == "return" else unit.text(caps["name"][0])
        if "call" in caps:
            node, from_call = caps["call"][0], True
            written: str | None = collapse(unit.text(node))
        else:
            node, from_call = caps["type"][0], False
            written = self.type_name(unit, node)
        if not written or not name:
            return
        unit.types.append(
            RawType(node.start_byte, name, written, from_call=from_call, member=form == "member")
        )

    def type_name(self, unit: Unit, node: Node) -> str | None:
        """A declared type as a name a call can be looked up on (None: not one: an
        array, a function type, a union of several types)."""
        written = plain_type(unit.text(node))
        return None if written in self.inferred_types else written

    def on_package(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        if unit.package is None:
            unit.package = collapse(unit.text(caps[role][0]))

    def on_entrypoint(self, unit: Unit, role: str, caps: dict[str, list[Node]]) -> None:
        """A file-level ``@entrypoint.<what>`` match (none by default)."""

    def before_link(self, unit: Unit) -> None:
        """Runs after matching, before nesting: add synthetic symbols here."""

    def finish(self, unit: Unit) -> None:
        """Runs after linking (qualnames known): mark tests and entrypoints here."""
