"""What the resolver asks the flow pass: the callees of one call site.

:class:`FlowIndex` is built once per resolver over every file that carries a
:class:`~strata.code.flow.model.FileFlow` and solved on first use. For a call
the ordinary rules left unresolved or guessed by name alone, the values its
callee expression may hold win (``flow``); a known receiver without such a
member drops the guess. Independently of how a call was resolved, a class
called is also an edge to its ``__init__`` (``constructor``), ``self.m()``
reaches the overrides of ``m`` in subclasses (``override``) when the class has
no concrete ``m`` of its own (only subclasses define it, or it is an
``@abstractmethod``), and ``for``
/ ``with`` over a repository class's instance reach its protocol methods
(``implicit``). Files without a flow (other languages, old cached parses) keep
exactly what the ordinary rules give.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from strata.code.flow.demand import DemandSolver
from strata.code.flow.model import FileFlow, FlowCall
from strata.code.flow.solver import Lookup, Value
from strata.code.flow.statements import StatementIndex
from strata.code.model import CallSite, SymbolDef
from strata.code.modules import SymbolTarget, binding_paths

CLASS_KINDS = frozenset({"class", "struct"})
CALLABLE_KINDS = frozenset({"function", "method", "class", "struct"})
SELF_NAMES = frozenset({"self", "this"})
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_CALLEES = 4  # more possible callees than this is a guess, not a flow


@dataclass(frozen=True, slots=True)
class Subclasses:
    """The subclass map of a snapshot and every identifier its classes' bases are
    written with (a name that came or went among them may re-bind a base)."""

    of: dict[SymbolTarget, list[SymbolTarget]]
    parts: frozenset[str]

    def reads(self, names: set[str] | None) -> bool:
        """Whether a base may name one of ``names`` (None: not known, so it may)."""
        return names is None or not self.parts.isdisjoint(names)


@dataclass(frozen=True, slots=True)
class Implied:
    """An edge no call site spells: ``for``/``with`` protocol methods."""

    caller: str | None
    target: SymbolTarget
    line: int


class FlowIndex:
    """The solved flow of a repository, asked per call site."""

    def __init__(self, lookup: Lookup, statements: StatementIndex | None = None) -> None:
        self.lookup = lookup
        self.statements = statements  # kept by the caller between runs (None: built here)
        self.flows: dict[str, FileFlow] = {}
        for path, extract in lookup.index.files.items():
            flow = getattr(extract, "flow", None)  # absent on extracts pickled before flow
            if flow is not None:
                self.flows[path] = flow
        self._solver: DemandSolver | None = None
        # The call sites of the file asked about last, by (scope, line, callee): a run
        # asks file by file, and one index over every file held ~50 MB on sympy.
        self._calls_path: str | None = None
        self._calls: dict[tuple[str | None, int, str], list[FlowCall]] = {}
        self._subclasses: Subclasses | None = None
        self._overrides: dict[tuple[SymbolTarget, str], list[SymbolTarget]] = {}

    @property
    def solver(self) -> DemandSolver:
        """The run's solver: the last run's, rebased, when the index kept one that can
        take this snapshot in (:meth:`DemandSolver.rebase`), else a new one."""
        if self._solver is None:
            statements = self.statements
            kept = statements.solver if statements is not None else None
            kept_map = statements.subclasses if statements is not None else None
            if statements is not None:
                # Kept again only by a run that ends well (keep).
                statements.solver = statements.subclasses = None
            if isinstance(kept, DemandSolver) and kept.rebase(self.lookup, self.flows):
                self._solver = kept
                if isinstance(kept_map, Subclasses) and not kept_map.reads(kept.moved_names):
                    self._subclasses = kept_map
            else:
                self._solver = DemandSolver(self.lookup, self.flows, statements)
        return self._solver

    def restart(self) -> None:
        """Answer the rest of the run from a new solver if this one was rebased.

        A kept solver answers its own changed files as a new one would, but one asked
        about many other files gives some answers a full index does not (memoised
        answers from earlier questions; 100 of Django's files differed after a push
        that re-resolved 2,134): a run that re-resolves many files starts over.
        """
        if self._solver is not None and self._solver.moved_names is not None:  # rebased
            self._solver = None  # the old one is freed before the new one is built
            self._solver = DemandSolver(self.lookup, self.flows, self.statements)

    def keep(self) -> None:
        """The run's questions are answered: keep its solver, and the subclass map if
        one was computed or taken in, for the next run over the same index (nothing to
        keep without a kept index, or mid-question)."""
        if self.statements is not None and self._solver is not None and self._solver.idle:
            self.statements.solver = self._solver
            self.statements.subclasses = self._subclasses

    @property
    def files_read(self) -> int:
        """How many files the solver's index (re-)read (0: no flow question was asked)."""
        return self._solver.refreshed if self._solver is not None else 0

    def _sites(self, path: str, call: CallSite) -> list[FlowCall]:
        """The flow's call sites of ``call`` (the file's sites are indexed when a call of
        another file was asked about last)."""
        if path != self._calls_path:
            self._calls_path, self._calls = path, {}
            flow = self.flows.get(path)
            for site in flow.calls if flow is not None else ():
                self._calls.setdefault((site.scope, site.line, site.callee), []).append(site)
        return self._calls.get((call.caller, call.line, call.callee), [])

    def refine(
        self, path: str, call: CallSite, found: tuple[SymbolTarget, str] | None
    ) -> list[tuple[SymbolTarget, str]]:
        """The callees of ``call`` given what the ordinary rules ``found``."""
        if path not in self.flows:
            return [found] if found is not None else []
        symbol = self.lookup.symbols.get((found[0].path, found[0].qualname)) if found else None
        guessed = found is None or found[1] == "name_only" or symbol is None
        if symbol is not None and symbol.kind not in CALLABLE_KINDS:
            found, guessed = None, True  # `TABLE["a"]()` calls a value of TABLE, not TABLE
        out = [found] if found is not None else []
        if guessed:
            flowed, known = self.callees(path, call)
            if flowed:
                out = [(t, "flow") for t in flowed]
            elif known:
                out = []
        extra: list[tuple[SymbolTarget, str]] = []
        for target, resolution in out:
            symbol = self.lookup.symbols.get((target.path, target.qualname))
            if symbol is None:
                continue
            if symbol.decorators and resolution != "flow" and target.path in self.flows:
                # Calling a decorated *name* runs what the decorator returned (a value
                # that flowed here may be the undecorated function, as inside a wrapper).
                extra += [(w, "flow") for w in self.wrappers(target) if w != target]
            if symbol.kind in CLASS_KINDS:
                init = self.lookup.member(target, "__init__")
                if init is not None:
                    extra.append((init.target, "constructor"))
            elif call.receiver in SELF_NAMES and _abstract(symbol):
                # A concrete own method keeps the call (the same-name trap: a base's
                # save() calling self.validate() is not linked to a subclass's validate).
                extra += [(o, "override") for o in self.overrides(path, call, target)]
        if found is None and not out and call.receiver in SELF_NAMES:
            # `self.m()` where only subclasses define m (an abstract hook).
            extra += [(o, "override") for o in self.overrides(path, call, None)]
        return out + extra

    def callees(self, path: str, call: CallSite) -> tuple[list[SymbolTarget], bool]:
        """Declarations the callee expression may hold, and whether its receiver is known."""
        solver = self.solver
        sites = self._sites(path, call)
        targets: set[SymbolTarget] = set()
        known = False
        for site in sites:
            values, receiver_known = solver.site(site)
            known = known or receiver_known
            for value in values:
                targets |= self._callable(value)
        if len(targets) > MAX_CALLEES:
            return [], known
        return sorted(targets, key=lambda t: (t.path, t.qualname)), known

    def _callable(self, value: Value) -> set[SymbolTarget]:
        kind, path, qualname = value[0], str(value[1]), str(value[2])
        if kind in ("f", "b", "c"):
            return {SymbolTarget(path, qualname)}
        if kind == "i":
            found = self.solver.member(path, qualname, "__call__")
            return {SymbolTarget(*found)} if found is not None else set()
        return set()

    def dependents(self, paths: set[str]) -> set[str]:
        """Files whose flow-resolved calls may change when ``paths`` change: every file
        whose values came, through any chain of variables, from one of them.

        Values cross files only through imports, so only ``paths`` and the files
        that import them (transitively) are asked: their call sites are answered,
        which records where each answer's values came from (and, for ``paths``'
        own calls, which files' parameters they pass values to). Computed on the
        new state: a file that only used to receive values is not found.
        """
        candidates = self._importers(paths) | paths
        solver = self.solver
        for path in sorted(candidates):
            flow = self.flows.get(path)
            if flow is None:
                continue
            for call in flow.calls:
                solver.site(call)
            self.implied(path)
        users: dict[str, set[str]] = defaultdict(set)
        for user, sources in solver.file_deps.items():
            for source in sources:
                users[source].add(user)
        found: set[str] = set()
        todo = list(paths)
        while todo:
            for user in users.get(todo.pop(), ()):
                if user not in found and user not in paths:
                    found.add(user)
                    todo.append(user)
        return found

    def _importers(self, paths: set[str]) -> set[str]:
        """The files that import one of ``paths``, directly or through other importers."""
        imported_by: dict[str, set[str]] = defaultdict(set)
        for path in self.flows:
            for _, bound in self.lookup.scope(path).imports:
                for binding in bound:
                    for target in binding_paths(binding):
                        imported_by[target].add(path)
        found: set[str] = set()
        todo = list(paths)
        while todo:
            for user in imported_by.get(todo.pop(), ()):
                if user not in found:
                    found.add(user)
                    todo.append(user)
        return found

    def wrappers(self, function: SymbolTarget) -> set[SymbolTarget]:
        """What the repository decorators of ``function`` return in its place."""
        solver = self.solver
        out: set[SymbolTarget] = set()
        for decorator in solver.decorators(function.path, function.qualname):
            for value in solver.called(decorator):
                if value[0] in ("f", "b"):
                    out.add(SymbolTarget(str(value[1]), str(value[2])))
        return out

    def implied(self, path: str) -> list[Implied]:
        """Decorators applied, and protocol methods ``for`` and ``with`` call, in the file."""
        flow = self.flows.get(path)
        if flow is None:
            return []
        solver = self.solver
        out: list[Implied] = []
        for function in flow.functions:
            if not function.decorators:
                continue
            symbol = self.lookup.symbols.get((path, function.qualname))
            if symbol is None:
                continue
            for decorator in solver.decorators(path, function.qualname):
                target = SymbolTarget(str(decorator[1]), str(decorator[2]))
                out.append(Implied(symbol.parent, target, symbol.line_start))
        for implicit in flow.implicits:
            for value in solver.eval(path, implicit.scope, implicit.obj):
                if value[0] != "i":
                    continue
                found = solver.member(str(value[1]), str(value[2]), implicit.method)
                if found is not None:
                    out.append(Implied(implicit.scope, SymbolTarget(*found), implicit.line))
        return out

    def overrides(
        self, path: str, call: CallSite, target: SymbolTarget | None
    ) -> list[SymbolTarget]:
        """Methods named like the call in subclasses of the caller's class."""
        owner = self._owner(path, call.caller)
        if owner is None:
            return []
        key = (owner, call.name)
        if key not in self._overrides:
            self._overrides[key] = self._find_overrides(owner, call.name)
        return [o for o in self._overrides[key] if o != target]

    def _find_overrides(self, owner: SymbolTarget, name: str) -> list[SymbolTarget]:
        out: list[SymbolTarget] = []
        todo, seen = list(self.subclasses().get(owner, ())), {owner}
        while todo and len(seen) < 256:
            cls = todo.pop()
            if cls in seen:
                continue
            seen.add(cls)
            method = SymbolTarget(cls.path, f"{cls.qualname}.{name}")
            if (method.path, method.qualname) in self.lookup.symbols:
                out.append(method)
            todo.extend(self.subclasses().get(cls, ()))
        return sorted(out, key=lambda t: (t.path, t.qualname))

    def subclasses(self) -> dict[SymbolTarget, list[SymbolTarget]]:
        """The direct subclasses of each class, among the classes of flow files.

        Resolving every class's bases builds the scope of every file (~0.4 s on a
        2,800-file repository), so a run whose solver was rebased takes in the map
        the last run kept (:meth:`keep`): the rebase proved that no changed file
        changed a declaration, base, import or module-level name, and the map is
        rebuilt only when a free function that came or went is named in a base.
        """
        if self._subclasses is None and self.statements is not None:
            _ = self.solver  # a rebased solver takes the kept map in
        if self._subclasses is None:
            found: dict[SymbolTarget, list[SymbolTarget]] = defaultdict(list)
            parts: set[str] = set()
            for (path, qualname), symbol in self.lookup.symbols.items():
                if symbol.kind in CLASS_KINDS and symbol.bases and path in self.flows:
                    cls = SymbolTarget(path, qualname)
                    for written in (*symbol.bases, *symbol.implements):
                        parts.update(IDENTIFIER.findall(written))
                    for base in self.lookup.bases(cls):
                        found[base].append(cls)
            self._subclasses = Subclasses(found, frozenset(parts))
        return self._subclasses.of

    def _owner(self, path: str, caller: str | None) -> SymbolTarget | None:
        current = caller
        while current:
            symbol = self.lookup.symbols.get((path, current))
            if symbol is None:
                return None
            if symbol.kind in CLASS_KINDS:
                return SymbolTarget(path, current)
            current = symbol.parent
        return None


def build_flow(lookup: Lookup, statements: StatementIndex | None = None) -> FlowIndex:
    """The flow pass over every file ``lookup`` knows (solved lazily, on first question);
    ``statements``, when given, is the writers' index it brings up to date and uses."""
    return FlowIndex(lookup, statements)


def _abstract(symbol: SymbolDef) -> bool:
    """A method declared to be overridden (``@abstractmethod``)."""
    return symbol.kind == "method" and any(d.endswith("abstractmethod") for d in symbol.decorators)
