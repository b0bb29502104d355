"""Call, inheritance and import resolution: each reference to one declaration.

A call is linked through, in order: the enclosing scopes and the file itself
(``local``), ``self``/``this`` on the caller's class (``self``) and its bases
(``hierarchy``), import bindings and namespace siblings (``import``), a class
or module receiver, or a name the file's module system knows fully qualified
(``qualified``), and, only when exactly one declaration in
the repository has that method or function name, ``name_only`` with a low
confidence. In files without a value flow, a receiver of a declared type is
answered first by :mod:`strata.code.receivers`; overloads told apart by arity
are picked there too. Anything else stays an unresolved reference (name and line) on
the caller; calls into external modules are counted, not linked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from strata.code.flow.guess import guessable, never_guessed
from strata.code.flow.imports import scoped
from strata.code.flow.index import FlowIndex, build_flow
from strata.code.flow.public_api import exported_api
from strata.code.flow.statements import StatementIndex
from strata.code.model import CallSite, FileExtract, SymbolDef
from strata.code.modules import (
    Binding,
    FileScope,
    ModuleIndex,
    ModuleTarget,
    SymbolTarget,
    binding_paths,
)
from strata.code.receivers import ReceiverTypes
from strata.code.symbols import SymbolTable

CONFIDENCE = {
    "local": 1.0,
    "self": 1.0,
    "import": 0.95,
    "qualified": 0.9,
    "hierarchy": 0.9,
    "name_only": 0.5,
    # strata.code.flow: values followed through names, attributes, parameters, returns
    "flow": 0.9,
    "constructor": 0.9,  # C(...) reaches C.__init__ (through the bases)
    "implicit": 0.85,  # for/with reach __iter__/__next__/__enter__/__exit__
    "override": 0.7,  # self.m() may run a subclass's m
}
SELF_RECEIVERS = frozenset({"self", "this", "cls", "Self", "me"})
SUPER_RECEIVERS = frozenset({"super", "base"})
TYPE_KINDS = frozenset({"class", "struct", "enum", "interface", "trait"})
MAX_LINES = 50
MAX_UNRESOLVED = 100
MAX_BASE_DEPTH = 10
MAX_REEXPORT_DEPTH = 4  # `from .a import *` chains followed for a module attribute


@dataclass(frozen=True, slots=True)
class CallEdge:
    src_path: str
    src_qualname: str | None  # None: a call at file level (the edge starts at the File)
    dst_path: str
    dst_qualname: str
    line: int
    lines: tuple[int, ...]
    confidence: float
    resolution: str


@dataclass(frozen=True, slots=True)
class TypeEdge:
    type: str  # INHERITS | IMPLEMENTS_TYPE
    src_path: str
    src_qualname: str
    dst_path: str
    dst_qualname: str
    line: int
    confidence: float


@dataclass(frozen=True, slots=True)
class ImportEdge:
    src_path: str
    line: int
    module: str
    paths: tuple[str, ...]  # files of the repository it reaches; empty: external
    alias: str | None
    names: tuple[str, ...]


@dataclass(slots=True)
class FileResolution:
    calls: list[CallEdge] = field(default_factory=list)
    types: list[TypeEdge] = field(default_factory=list)
    imports: list[ImportEdge] = field(default_factory=list)
    unresolved: dict[str | None, list[str]] = field(default_factory=dict)
    external_calls: int = 0
    # Qualnames of the file's symbols that are its library's exported API (public_api).
    public_api: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Hit:
    target: SymbolTarget
    resolution: str


class Resolver:
    """Resolves references of any file against one repository snapshot."""

    # What release() drops: the compiled build (strata.code.native) deletes only these.
    __deletable__ = (
        "index",
        "symbols",
        "symbol_names",
        "_by_name",
        "_scopes",
        "_bases",
        "_has_local_imports",
        "_in_modules",
        "_public",
        "flow",
        "receivers",
    )

    def __init__(self, index: ModuleIndex, *, statements: StatementIndex | None = None) -> None:
        """``statements``: the flow's writers' index kept between runs of a repository
        (:class:`~strata.code.flow.statements.StatementIndexes`), updated here for the
        files that changed; without it the flow reads every file."""
        self.index = index
        # Kept with the statements between runs (refreshed by the changed files), else
        # built for this snapshot.
        table = statements.symbols if statements is not None else SymbolTable()
        table.refresh(index.files)
        self.symbols: dict[tuple[str, str], SymbolDef] = table.symbols
        self.symbol_names: Mapping[str, int] = table.names
        self._by_name = table.callables
        self._scopes: dict[str, FileScope] = {}
        self._bases: dict[tuple[str, str], list[SymbolTarget]] = {}
        self._has_local_imports: dict[str, bool] = {}
        self._in_modules: dict[tuple[ModuleTarget, str, int], _Hit | None] = {}
        self._public: dict[str, frozenset[str]] | None = None
        self.flow: FlowIndex = build_flow(self, statements)  # solved on its first question
        self.receivers = ReceiverTypes(self)  # declared receiver types (no flow needed)

    def release(self) -> None:
        """Done with this snapshot: drop everything it holds.

        Its flow index, the solver and the receiver types refer back to it, so
        without this the whole structure (~280k objects on a 2,800-file repository)
        is cyclic garbage that only a full collection over the heap frees (~2 s
        there, because the extract sets a worker keeps are in it too). Afterwards
        it answers nothing.
        """
        del self.index, self.symbols, self.symbol_names, self._by_name, self._scopes
        del self._bases, self._has_local_imports, self._in_modules, self._public
        del self.flow, self.receivers

    def scope(self, path: str) -> FileScope:
        found = self._scopes.get(path)
        if found is None:
            found = self._scopes[path] = self.index.scope(path)
        return found

    # -- per file --------------------------------------------------------------------

    def resolve_file(self, path: str) -> FileResolution:  # noqa: PLR0912 - one pass per file
        extract = self.index.files[path]
        out = FileResolution()
        scope = self.scope(path)
        for imp, bound in scope.imports:
            internal = sorted({p for b in bound for p in binding_paths(b)})
            if not internal and not imp.module.strip():
                continue  # names no file and no module (an adapter's odd case): no edge
            out.imports.append(
                ImportEdge(path, imp.line, imp.module, tuple(internal), imp.alias, imp.names)
            )
        lines_of: dict[tuple[str | None, str, str], list[int]] = defaultdict(list)
        best: dict[tuple[str | None, str, str], str] = {}
        implied = [(i.caller, i.target, i.line, "implicit") for i in self.flow.implied(path)]
        for caller, target, line, resolution in implied:
            key = (caller, target.path, target.qualname)
            lines_of[key].append(line)
            best.setdefault(key, resolution)
        for call in extract.calls:
            hits, external = self.call_targets(path, call)
            for target, resolution in hits:
                key = (call.caller, target.path, target.qualname)
                lines_of[key].append(call.line)
                known = best.get(key)
                if known is None or CONFIDENCE[resolution] > CONFIDENCE[known]:
                    best[key] = resolution
            if hits:
                continue
            if external:
                out.external_calls += 1
            else:
                bucket = out.unresolved.setdefault(call.caller, [])
                if len(bucket) < MAX_UNRESOLVED:
                    bucket.append(f"{call.callee[:120]}@{call.line}")
        merged: list[CallEdge] = []
        for (caller, dst_path, dst_qualname), lines in lines_of.items():
            resolution = best[(caller, dst_path, dst_qualname)]
            ordered = sorted(set(lines))
            merged.append(
                CallEdge(
                    path,
                    caller,
                    dst_path,
                    dst_qualname,
                    ordered[0],
                    tuple(ordered[:MAX_LINES]),
                    CONFIDENCE[resolution],
                    resolution,
                )
            )
        out.calls = sorted(merged, key=lambda e: (e.line, e.dst_path, e.dst_qualname))
        out.public_api = self.public_api().get(path, frozenset())
        for symbol in extract.symbols:
            for edge_type, names in (
                ("INHERITS", symbol.bases),
                ("IMPLEMENTS_TYPE", symbol.implements),
            ):
                for name in names:
                    hit = self._lookup_type(path, name, symbol.parent)
                    if hit is not None and hit.target != SymbolTarget(path, symbol.qualname):
                        out.types.append(
                            TypeEdge(
                                edge_type,
                                path,
                                symbol.qualname,
                                hit.target.path,
                                hit.target.qualname,
                                symbol.line_start,
                                CONFIDENCE[hit.resolution],
                            )
                        )
        return out

    def public_api(self) -> dict[str, frozenset[str]]:
        """Per file, the symbols its library exports (computed once per snapshot)."""
        if self._public is None:
            self._public = exported_api(self.index, self.scope, self.symbols)
        return self._public

    # -- calls -----------------------------------------------------------------------

    def call_targets(
        self, path: str, call: CallSite
    ) -> tuple[list[tuple[SymbolTarget, str]], bool]:
        """The declarations one call site of ``path`` reaches with their resolution
        kinds, and whether the call is known to leave the repository."""
        typed = self.receivers.callees(path, call)  # a receiver of a declared type
        if typed is not None:
            hits = typed
        else:
            hit, external = self._resolve_call(path, self.index.files[path], call)
            if external:
                return [], True
            # The flow pass: what values reach the callee, beyond a name-only guess.
            found = (hit.target, hit.resolution) if hit is not None else None
            hits = self.flow.refine(path, call, found)
        # Java/C# overloads told apart by the call's arity.
        return [
            (overload, resolution)
            for target, resolution in hits
            for overload in self.receivers.overloads(target, call.arity)
        ], False

    def _resolve_call(
        self, path: str, extract: FileExtract, call: CallSite
    ) -> tuple[_Hit | None, bool]:
        """The declaration a call reaches, and whether it is known to be external."""
        if not call.receiver:
            return self._resolve_bare(path, extract, call)
        head = call.receiver.replace("::", ".")
        if head in SELF_RECEIVERS or head in SUPER_RECEIVERS:
            return self._resolve_own(path, call, through_bases=head in SUPER_RECEIVERS), False
        first, _, rest = head.partition(".")
        if first in SELF_RECEIVERS and rest and "." not in rest:
            # self.Base.method(): an embedded or explicitly named base type.
            hit = self._through_named_base(path, call, rest)
            if hit is not None:
                return hit, False
        hit, external = self._resolve_receiver(path, head, call)
        if hit is not None or external:
            return hit, external
        system = self.index.system_of(path)
        if (
            system is not None
            and system.receiver_variable_is_self
            and call.caller
            and "." in call.caller
        ):
            # The method names its receiver variable; try the method's own type.
            own = self._owner_class(path, call.caller)
            member = self.member(own, call.name) if own is not None else None
            if member is not None:
                return _Hit(member.target, "self"), False
        return self._name_only(call.name, methods_only=True), False

    def _resolve_bare(
        self, path: str, extract: FileExtract, call: CallSite
    ) -> tuple[_Hit | None, bool]:
        """``name(...)``: scopes, imports, implicit ``this``, or a unique name."""
        hit = self.lookup_name(path, call.name, call.caller)
        if hit is not None:
            return hit, False
        system = self.index.system_of(path)
        if call.caller is not None and system is not None and system.bare_calls_reach_own_class:
            # Implicit `this` and same-class helpers.
            own = self._owner_class(path, call.caller)
            member = self.member(own, call.name) if own is not None else None
            if member is not None:
                return member, False
        if system is not None and call.callee != call.name:
            # `\A\B\f()`, `new \A\B\C()`: a callee written fully qualified
            absolute = system.absolute(self.index, call.callee)
            if absolute is not None and absolute in _known(self.symbols, absolute):
                return _Hit(absolute, "qualified"), False
        bound = self.binding(path, call.name, call.caller)
        if isinstance(bound, ModuleTarget) and bound.external:
            return None, True
        return self._name_only(call.name), False

    def _through_named_base(self, path: str, call: CallSite, base_name: str) -> _Hit | None:
        own = self._owner_class(path, call.caller)
        if own is None:
            return None
        for base in self.bases(own):
            if base.qualname.rsplit(".", 1)[-1] == base_name:
                hit = self.member(base, call.name)
                return _Hit(hit.target, "hierarchy") if hit is not None else None
        return None

    def _resolve_own(self, path: str, call: CallSite, *, through_bases: bool) -> _Hit | None:
        """``self.name(...)`` on the caller's class, or ``super().name(...)`` on its bases."""
        own = self._owner_class(path, call.caller)
        if own is None:
            return None
        if not through_bases:
            return self.member(own, call.name)
        for base in self.bases(own):
            hit = self.member(base, call.name)
            if hit is not None:
                return _Hit(hit.target, "hierarchy")
        return None

    def _resolve_receiver(
        self, path: str, receiver: str, call: CallSite
    ) -> tuple[_Hit | None, bool]:
        """``a.b.name(...)``: an imported module, a class, or a class reached through them."""
        parts = receiver.split(".")
        for cut in range(len(parts), 0, -1):
            bound = self.binding(path, ".".join(parts[:cut]), call.caller)
            if bound is not None:
                return self._through_binding(path, bound, parts[cut:], call.name)
        if len(parts) == 1:
            local = self.lookup_name(path, parts[0], call.caller)
            if local is not None and self._kind(local.target) in TYPE_KINDS:
                member = self.member(local.target, call.name)
                if member is not None:
                    return _Hit(member.target, "qualified"), False
        return None, False

    def _through_binding(
        self, path: str, bound: Binding, rest: list[str], name: str
    ) -> tuple[_Hit | None, bool]:
        if isinstance(bound, ModuleTarget):
            if bound.external:
                return None, True
            if not rest:
                return self._in_module(bound, name), False
            sub = self._submodule(path, bound, rest)
            if sub is None:
                return None, False
            if isinstance(sub, ModuleTarget):
                return self._in_module(sub, name), False
            bound, rest = sub, []
        target = bound
        for part in rest:
            nested = self.member(target, part)
            if nested is None:
                return None, False
            target = nested.target
        member = self.member(target, name)
        return (_Hit(member.target, "qualified") if member else None), False

    def _kind(self, target: SymbolTarget) -> str:
        return self.symbols[(target.path, target.qualname)].kind

    def _submodule(self, path: str, module: ModuleTarget, rest: list[str]) -> Binding | None:
        system = self.index.system_of(path)
        return system.submodule(self.index, module, rest) if system is not None else None

    def _in_module(self, module: ModuleTarget, name: str, depth: int = 0) -> _Hit | None:
        """``name`` in ``module``: its files' top level, a re-export, or a wildcard import
        of theirs, followed ``MAX_REEXPORT_DEPTH`` deep; remembered by (module, name,
        depth) for this snapshot. A Kotlin or Java package is many files, each with
        wildcard imports of the same packages: unremembered, the walk was paths ** depth
        (kotlinx.coroutines, 290 files: over ten minutes; remembered, 10 s in all)."""
        key = (module, name, depth)
        if key in self._in_modules:
            return self._in_modules[key]
        hit = self._in_modules[key] = self._in_module_once(module, name, depth)
        return hit

    def _in_module_once(self, module: ModuleTarget, name: str, depth: int) -> _Hit | None:
        for candidate in module.paths:
            symbol = self.index.top_level.get(candidate, {}).get(name)
            if symbol is not None:
                return _Hit(SymbolTarget(candidate, symbol.qualname), "import")
        system = self.index.system_of(module.paths[0]) if module.paths else None
        passed = system.reexported(self.index, module, name) if system is not None else None
        if passed is not None:
            return _Hit(passed, "import")
        for candidate in module.paths:
            # A package `__init__` that pulls names in with `from .impl import *` (a name
            # it imports by name is a value the flow pass follows: `pkg.get()` -> flow).
            scope = self.scope(candidate)
            for star in scope.wildcards if depth < MAX_REEXPORT_DEPTH else ():
                hit = self._in_module(star, name, depth + 1)
                if hit is not None:
                    return hit
        return None

    def _name_only(self, name: str, *, methods_only: bool = False) -> _Hit | None:
        if never_guessed(name, bare=not methods_only):
            return None
        candidates = self._by_name.get(name, [])
        if methods_only:
            candidates = [
                c for c in candidates if self.symbols[(c.path, c.qualname)].kind == "method"
            ]
        if len(candidates) == 1 and guessable(
            candidates[0].path,
            self.symbols[(candidates[0].path, candidates[0].qualname)],
            self.symbols,
            test=self.index.files[candidates[0].path].is_test_file,
        ):
            return _Hit(candidates[0], "name_only")
        return None

    # -- names, members, bases ----------------------------------------------------------

    def lookup_name(self, path: str, name: str, caller: str | None) -> _Hit | None:
        """What a bare name means in a file, from inside ``caller``."""
        if caller:
            # Enclosing functions are scopes; a class body is one only where the module
            # system says so (implicit `this`); elsewhere a method must say self/this.
            system = self.index.system_of(path)
            implicit_this = system is not None and system.class_body_is_scope
            parts = caller.split(".")
            for cut in range(len(parts), 0, -1):
                enclosing = self.symbols.get((path, ".".join(parts[:cut])))
                is_type = enclosing is not None and enclosing.kind in TYPE_KINDS
                if is_type and not implicit_this:
                    continue
                qualname = ".".join([*parts[:cut], name])
                if (path, qualname) in self.symbols:
                    return _Hit(SymbolTarget(path, qualname), "self" if is_type else "local")
        top = self.index.top_level.get(path, {}).get(name)
        if top is not None:
            return _Hit(SymbolTarget(path, top.qualname), "local")
        return self._lookup_outside(path, name, caller)

    def binding(self, path: str, name: str, caller: str | None) -> Binding | None:
        """What an import binds ``name`` to inside ``caller``: an import in the caller or
        a function around it first (it binds there only), then the file's imports."""
        bindings = self.scope(path).bindings
        if caller and self._local_imports(path):
            parts = caller.split(".")
            for cut in range(len(parts), 0, -1):
                found = bindings.get(scoped(".".join(parts[:cut]), name))
                if found is not None:
                    return found
        return bindings.get(name)

    def _local_imports(self, path: str) -> bool:
        found = self._has_local_imports.get(path)
        if found is None:
            flow = getattr(self.index.files[path], "flow", None)  # older cached extracts
            found = self._has_local_imports[path] = bool(getattr(flow, "local_imports", ()))
        return found

    def _lookup_outside(self, path: str, name: str, caller: str | None = None) -> _Hit | None:
        """A bare name declared in another file: imported, a sibling's, or fully qualified."""
        scope = self.scope(path)
        bound = self.binding(path, name, caller)
        if isinstance(bound, SymbolTarget) and bound in _known(self.symbols, bound):
            return _Hit(bound, "import")
        if isinstance(bound, ModuleTarget) and bound.paths:
            hit = self._in_module(bound, name)
            if hit is not None:
                return hit
        for sibling in self.index.siblings(path):
            symbol = self.index.top_level.get(sibling, {}).get(name)
            if symbol is not None:
                return _Hit(SymbolTarget(sibling, symbol.qualname), "import")
        for module in scope.wildcards:
            hit = self._in_module(module, name)
            if hit is not None:
                return hit
        system = self.index.system_of(path)
        absolute = system.absolute(self.index, name) if system is not None else None
        if absolute is not None and absolute in _known(self.symbols, absolute):
            return _Hit(absolute, "qualified")
        return None

    def _lookup_type(self, path: str, written: str, parent: str | None) -> _Hit | None:
        name = written.split("<", 1)[0].split("[", 1)[0].strip()
        if not name:
            return None
        normalized = name.replace("::", ".")
        if "." in normalized:
            receiver, _, last = normalized.rpartition(".")
            probe = CallSite(parent, normalized, last, receiver, 0)
            found, _ = self._resolve_receiver(path, receiver, probe)
            if found is not None:
                return found
            named = self.lookup_name(path, last, parent)
            return None if named is None else _Hit(named.target, "qualified")
        return self.lookup_name(path, normalized, parent)

    def member(self, owner: SymbolTarget, name: str, depth: int = 0) -> _Hit | None:
        """A member of a class-like symbol, searching its bases (``hierarchy``)."""
        qualname = f"{owner.qualname}.{name}"
        if (owner.path, qualname) in self.symbols:
            return _Hit(SymbolTarget(owner.path, qualname), "self" if depth == 0 else "hierarchy")
        if depth >= MAX_BASE_DEPTH:
            return None
        for base in self.bases(owner):
            hit = self.member(base, name, depth + 1)
            if hit is not None:
                return _Hit(hit.target, "hierarchy")
        return None

    def bases(self, owner: SymbolTarget) -> list[SymbolTarget]:
        cached = self._bases.get((owner.path, owner.qualname))
        if cached is not None:
            return cached
        self._bases[(owner.path, owner.qualname)] = []  # cycle guard
        symbol = self.symbols.get((owner.path, owner.qualname))
        found: list[SymbolTarget] = []
        if symbol is not None:
            for written in (*symbol.bases, *symbol.implements):
                hit = self._lookup_type(owner.path, written, symbol.parent)
                if hit is not None and hit.target != owner:
                    found.append(hit.target)
        self._bases[(owner.path, owner.qualname)] = found
        return found

    def _owner_class(self, path: str, caller: str | None) -> SymbolTarget | None:
        """The class (struct, impl type) whose method ``caller`` is, if any."""
        qualname = caller
        while qualname:
            symbol = self.symbols.get((path, qualname))
            if symbol is None:
                return None
            if symbol.kind in TYPE_KINDS:
                return SymbolTarget(path, qualname)
            if symbol.parent is None:
                if symbol.kind == "method" and "." in qualname:
                    owner = qualname.rsplit(".", 1)[0]
                    return SymbolTarget(path, owner) if (path, owner) in self.symbols else None
                return None
            qualname = symbol.parent
        return None


def _known(
    symbols: dict[tuple[str, str], SymbolDef], target: SymbolTarget
) -> tuple[SymbolTarget, ...]:
    return (target,) if (target.path, target.qualname) in symbols else ()
