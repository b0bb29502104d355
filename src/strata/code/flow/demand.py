"""Demand-driven value flow: evaluate only what a question needs, once.

The worklist :class:`~strata.code.flow.solver.Solver` runs every statement of the
repository to a fixpoint. Most of that answers nothing the resolver asks: it
only asks about call sites the ordinary rules left open, ``for``/``with`` and
decorators. :class:`DemandSolver` instead computes a variable the first time it
is read, by running the statements that may write it (each statement at most
once, memoised): a local's assignments, a function's returns, the call sites
that may pass a parameter its argument (found by the callee's name), the
attribute assignments of the attribute's name. A variable read while it is
being computed (a cycle) answers what it has so far; a variable first read in a
chain of demands deeper than :data:`MAX_DEMAND` answers what it has too and is
computed later, from the top (bounded stack). Either way the statement that read
it is noted as its reader, and when the variable grows the reader runs again: a
worklist over the statements demand reached, drained before a call site's
answer is given, at most :data:`MAX_ROUNDS` runs per statement on average.
Without that, a call site's answer depended on which questions came before it:
a call run deep inside another variable's computation kept the empty answer it
got there (every ``app.url_path_for()`` of a test module, in one repository).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from itertools import chain
from typing import Any

from strata.code.flow.bags import Bag, bag_add, bag_items
from strata.code.flow.fixtures import Fixtures
from strata.code.flow.model import Expr, FileFlow, FlowCall, Function, Param
from strata.code.flow.shape import assigns_items, attribute_names, moved_names, shape
from strata.code.flow.solver import MAX_ROUNDS, NO_CALLEES, Lookup, Solver, Value, Var
from strata.code.flow.statements import (
    KeysByTable,
    Statement,
    StatementIndex,
    drop_keys,
    last_name,
    note_key,
)
from strata.code.flow.values import file_of

MAX_DEMAND = 16  # nested variable computations before a read answers what it has
MAX_WRITERS = 48  # call sites or attribute assignments tried for one variable
MAX_REBASED = 16  # changed files a kept solver takes in (more: a new solver)


class DemandSolver(Solver):
    """Values computed on first read; :meth:`site` answers one call site.

    ``statements`` is the writers' index to bring to this snapshot and use
    (:mod:`strata.code.flow.statements`: a caller that keeps it between runs pays
    for the changed files only); without it one is read from every flow.
    """

    def __init__(
        self,
        lookup: Lookup,
        flows: dict[str, FileFlow],
        statements: StatementIndex | None = None,
    ) -> None:
        # Per file: the cache entries computed for it and the statements of it run, so
        # a rebase drops one file's without reading the others' (set before the base
        # class reads the statements: that names the variables of every assignment).
        self._cached_in: dict[str, KeysByTable] = defaultdict(dict)
        self._run_in: dict[str, list[int]] = defaultdict(list)
        self._by_file = _VarsByFile()  # set first too: the base class's seeding adds variables
        # The declaration lookups made of each name (a rebase drops a moved name's).
        self._declared_keys: dict[str, set[tuple[str, str | None, str]]] = defaultdict(set)
        super().__init__(lookup, flows, statements)
        self._done: set[Var] = set()
        self._ran: set[int | tuple[int, int]] = set()
        self._depth = 0
        index = self.statements
        self._static = index.static
        self._by_attr = index.by_attr
        self._by_attr_in = index.by_attr_in
        self._items_in = index.items_in
        self._calls_by_name = index.calls_by_name
        self._decorated_by = index.decorated_by
        self._call_statement = index.call_statement
        self._items = index.items.get("", [])
        self._fixture_writers: dict[Var, list[Statement]] = {}
        # The statements run so far, by number (None: taken out by a rebase), and how
        # many of them are still in.
        self._by_key: list[Statement | None] = []
        self._live = 0
        self._running = -1  # the number of the statement running now (-1: none)
        self._draining = False
        self._deferred: list[Var] = []  # cut off by MAX_DEMAND: computed when settling
        self.reruns = 0
        self.rebased = (0, 0)  # variables reset and statements re-run by the last rebase
        # Names of the free functions that came or went in the last rebase (None: this
        # solver was not rebased).
        self.moved_names: set[str] | None = None
        # What each statement run added to, and the reverse: what a rebase resets.
        self._wrote: dict[int, Bag[Var]] = {}
        self._written_by: dict[Var, Bag[int]] = {}
        # Seeding (parameters from annotations, self/cls) must not demand: a statement run
        # now would read variables not seeded yet and, memoised, never run again. (Seeding
        # on first read instead changed which answers a cycle memoises: an incremental
        # run then linked a call differently than a full index of the same commit.)
        self._depth = MAX_DEMAND
        self._seed()
        self._depth = 0
        self._current = 0  # from now on `_add` records which file wrote into which

    def solve(self) -> int:
        """Nothing up front: values are computed on demand."""
        return 0

    def site(self, call: FlowCall) -> tuple[AbstractSet[Value], bool]:
        """The callees ``call``'s callee expression may hold, and whether its receiver
        is known."""
        statement = self._call_statement.get(id(call))
        if statement is not None:
            self._run(statement)
        self._settle()
        return self.sites.get(id(call), NO_CALLEES[False])

    def _settle(self) -> None:
        """Run again every statement that read a variable which has grown since."""
        if self._draining or self._depth:
            return
        self._draining = True
        try:
            queue, queued, deferred = self._queue, self._queued, self._deferred
            while (queue or deferred) and self.reruns < MAX_ROUNDS * self._live:
                self.reruns += 1
                if deferred:
                    self.values(deferred.pop())  # at depth 0, as no statement's reader
                    continue
                number = queue.pop()
                queued.discard(number)
                statement = self._by_key[number]
                if statement is not None:  # else taken out by a rebase
                    self._apply_as(number, statement)
        finally:
            self._draining = False

    @property
    def idle(self) -> bool:
        """Between questions: nothing running, nothing left to settle (safe to keep)."""
        return not (self._draining or self._depth or self._queue or self._deferred)

    # -- rebase ------------------------------------------------------------------------

    def rebase(self, lookup: Lookup, flows: dict[str, FileFlow]) -> bool:
        """Take in the repository's next snapshot instead of starting over.

        Possible when a few files changed and each keeps its :func:`shape` (what
        other files' lookups see of it). Everything the changed files' old
        statements wrote, everything of theirs, and everything computed from
        those since (the readers' writes, followed through) is reset; the
        statements that read or wrote a reset variable run again, the changed
        files' call sites run, and what the others ask is computed on demand as
        in a new solver. False, with nothing changed, when it is not possible.
        """
        index = self.statements
        files = lookup.index.files
        stale, added = index.pending(files, flows)
        if added or not self.idle or len(stale) > MAX_REBASED:
            return False
        new = {path: flows.get(path) for path in stale}
        names: set[str] = set()  # free functions that came or went
        for path, extract in stale.items():
            moved = moved_names(shape(extract), shape(files.get(path)))
            if moved is None or new[path] is None:
                return False
            names |= moved
        old = {path: getattr(extract, "flow", None) for path, extract in stale.items()}
        if self._crosses_call_cap(old, new):
            return False
        tainted = self._tainted(stale, old, new)
        tainted |= {("n", name) for name in names}  # who looked those names up
        rerun = self._readers_of(tainted)
        for var in tainted:
            rerun.update(bag_items(self._written_by.get(var)))
        self.rebased = (len(tainted), len(rerun))
        self._forget(set(stale), tainted)
        for name in names:
            for key in self._declared_keys.pop(name, ()):
                self._declared_cache.pop(key, None)
        self.lookup, self.flows = lookup, flows
        self.fixtures = Fixtures(files, flows)
        self._names = lookup.symbol_names
        self.refreshed = index.refresh(files, flows, self._var)
        self._items = index.items.get("", [])
        self.reruns = 0
        self._reseed(tainted)
        for number in sorted(rerun):
            statement = self._by_key[number]
            if statement is not None:  # else one of the changed files'
                self._apply_as(number, statement)
        for path in sorted(stale):
            for call in new[path].calls:  # type: ignore[union-attr]
                statement = self._call_statement.get(id(call))
                if statement is not None:
                    self._run(statement)
        self._settle()
        self.moved_names = names
        return True

    def _crosses_call_cap(
        self, old: dict[str, FileFlow | None], new: dict[str, FileFlow | None]
    ) -> bool:
        """Whether a callee name's call sites cross :data:`MAX_WRITERS` (who passes a
        parameter values would change for every function of that name)."""
        delta: dict[str, int] = defaultdict(int)
        for flows, sign in ((old, -1), (new, 1)):
            for flow in flows.values():
                for call in flow.calls if flow is not None else ():
                    name = last_name(call.func)
                    if name:
                        delta[name] += sign
        for name, change in delta.items():
            before = len(self._calls_by_name.get(name, ()))
            if change and (before > MAX_WRITERS) != (before + change > MAX_WRITERS):
                return True
        return False

    def _tainted(
        self,
        stale: Mapping[str, object],
        old: dict[str, FileFlow | None],
        new: dict[str, FileFlow | None],
    ) -> set[Var]:
        """The variables a rebase resets before following their readers: the changed
        files' own, what their old statements wrote, and those whose capped writers'
        list may hold a changed file's attribute or element assignments."""
        index = self.statements
        paths = set(stale)
        tainted: set[Var] = set()
        for path in paths:
            for number in self._run_in.get(path, ()):
                tainted.update(bag_items(self._wrote.get(number)))
        # A capped list takes its own file's entries, then the repository's in path order:
        # a file with this many entries before it (a margin over 2x) is in no other's.
        reach = 3 * MAX_WRITERS
        attrs = {
            name
            for path in paths
            for name in attribute_names(old[path]) | attribute_names(new[path])
            if index.before(index.by_attr.get(name, []), path) < reach
        }
        items = any(
            (assigns_items(old[path]) or assigns_items(new[path]))
            and index.before(index.items.get("", []), path) < reach
            for path in paths
        )
        named = bool(attrs)
        env, done, wide = self.env, self._done, self.wide
        if self._by_file.stale(len(env) + len(done)):
            self._by_file.rebuild(chain(env, done, wide))
        for var in self._by_file.candidates(paths, attrs, items):
            if var not in env and var not in done and var not in wide:
                continue  # forgotten since it was noted
            kind = var[0]
            if kind == "e":
                if items or var[1][1] in paths:  # type: ignore[index]
                    tainted.add(var)
            elif var[1] in paths or (named and _named(var) and var[3] in attrs):
                tainted.add(var)
        return tainted

    def _readers_of(self, tainted: set[Var]) -> set[int]:
        """The statements that read a tainted variable; what they wrote is tainted too
        (``tainted`` grows to the closure)."""
        rerun: set[int] = set()
        todo = list(tainted)
        while todo:
            for number in bag_items(self._readers.get(todo.pop())):
                if number in rerun:
                    continue
                rerun.add(number)
                for var in bag_items(self._wrote.get(number)):
                    if var not in tainted:
                        tainted.add(var)
                        todo.append(var)
        return rerun

    def _forget(self, paths: set[str], tainted: set[Var]) -> None:
        """Drop the changed files' statements and caches and the tainted variables."""
        for path in paths:
            for number in self._run_in.pop(path, ()):
                statement = self._by_key[number]
                assert statement is not None
                self._by_key[number] = None
                self._live -= 1
                self._ran.discard(_key(statement))
                self._wrote.pop(number, None)
                if statement[0] == "c":
                    self.sites.pop(id(statement[2]), None)
            drop_keys(self._cached_in.pop(path, {}))
        for var in tainted:
            self.env.pop(var, None)
            self.wide.discard(var)
            self._done.discard(var)
            self._readers.pop(var, None)
            self._written_by.pop(var, None)

    # Cache misses, noted per file (what _forget drops).

    def _cached(self, path: str, table: dict[Any, Any], key: Any) -> None:
        note_key(self._cached_in[path], table, key)
        if table is self._declared_cache:  # a rebase drops the lookups of a moved name
            self._declared_keys[key[2]].add(key)

    def _new_box(self, path: str, expr: Expr) -> Value:
        box = super()._new_box(path, expr)
        note_key(self._cached_in[path], self._boxes, id(expr))
        return box

    def _reseed(self, tainted: set[Var]) -> None:
        """Put back what annotations and ``self``/``cls`` give the reset parameters."""
        functions = {(str(v[1]), str(v[2])) for v in tainted if v[0] in ("v", "r") and v[2]}
        self._depth, self._current = MAX_DEMAND, -1
        try:
            for key in sorted(functions):
                function = self.functions.get(key)
                if function is None:
                    continue
                for var, values in self._function_seeds(*key, function):
                    if var in tainted:
                        self._add(var, values)
        finally:
            self._depth, self._current = 0, 0

    # -- demand ------------------------------------------------------------------------

    def values(self, var: Var) -> set[Value]:
        where = file_of(var)
        if self._current_path and where != self._current_path:
            self.file_deps[self._current_path].add(where)
        if var not in self._done and self._depth >= MAX_DEMAND:
            self._deferred.append(var)  # computed later, from the top: its readers re-run
        elif var not in self._done:
            self._done.add(var)
            self._by_file.note(var)
            self._depth += 1
            try:
                for statement in self._writers(var):
                    self._run(statement)
            finally:
                self._depth -= 1
        # The reader is noted once the computation above is over: what it grew by while
        # computed, the reader reads now (noted before, each demanded variable sent its
        # reader, and that reader's own demander, round again for nothing: three of four
        # statement runs of a one-file push on Django were such re-runs). A read during
        # the computation (a cycle) was noted by its own statement and re-runs as before.
        if self._running >= 0:
            bag_add(self._readers, var, self._running)
        if var in self.wide:
            return set()
        return self.env.get(var) or set()

    def _add(self, var: Var, values: Iterable[Value]) -> None:
        if var not in self.env:
            self._by_file.note(var)
        running = self._running
        if running >= 0 and values:
            bag_add(self._wrote, running, var)
            bag_add(self._written_by, var, running)
        super()._add(var, values)

    def _declared(self, path: str, scope: str | None, name: str) -> tuple[Value, ...]:
        if self._running >= 0:  # noted: a rebase re-runs it when a function of the name moves
            bag_add(self._readers, ("n", name), self._running)
        return super()._declared(path, scope, name)

    def _run(self, statement: Statement) -> None:
        key = _key(statement)
        if key in self._ran:
            return
        self._ran.add(key)
        # Readers are numbered in the order they first ran, not by id(): the order the
        # worklist re-runs them in is then the same in every process.
        number = len(self._by_key)
        self._by_key.append(statement)
        self._live += 1
        self._run_in[statement[1]].append(number)
        self._apply_as(number, statement)

    def _apply_as(self, number: int, statement: Statement) -> None:
        """Run ``statement`` as the reader ``number`` of what it reads."""
        outer, outer_key = self._current_path, self._running
        self._current_path, self._running = statement[1], number
        try:
            self._apply(*statement)
        finally:
            self._current_path, self._running = outer, outer_key

    def _writers(self, var: Var) -> list[Statement]:
        kind = var[0]
        found = list(self._static.get(var, ()))
        if kind == "v" and var[2] is not None:
            fixtures = self._fixtures_of(var)
            if fixtures:  # after the defaults, as a function's statements are listed
                defaults = sum(1 for s in found if s[0] == "d")
                found[defaults:defaults] = fixtures
            found += self._passers(str(var[1]), str(var[2]))
        elif kind == "a" or (kind == "v" and var[2] is None):
            # The class's (module's) own file first: where its attributes are set.
            name = str(var[3])
            found += _capped(
                self._by_attr_in.get((str(var[1]), name), ()), self._by_attr.get(name, ())
            )
        elif kind == "e":
            box = var[1]
            path = str(box[1]) if isinstance(box, tuple) else ""
            found += _capped(self._items_in.get(path, ()), self._items)
        return found

    def _fixtures_of(self, var: Var) -> list[Statement]:
        """The pytest fixture that fills a test's parameter, as a statement (made once:
        its identity is the memo of the statements run)."""
        found = self._fixture_writers.get(var)
        if found is None:
            found = self._fixture_writers[var] = []
            note_key(self._cached_in[file_of(var)], self._fixture_writers, var)
            path, qualname, name = str(var[1]), str(var[2]), var[3]
            function = self.functions.get((path, qualname))
            if function is not None:
                for filled in self.fixtures.params(path, function):
                    if filled[0].name == name:
                        found.append(("p", path, function, filled))
        return found

    def _passers(self, path: str, qualname: str) -> list[Statement]:
        """Statements that may pass a value to a parameter of ``qualname``: its call
        sites (by name; ``__init__``: the class's name) and the decorators it decorates."""
        function = self.functions.get((path, qualname))
        if function is None:
            return []
        owner, _, name = qualname.rpartition(".")
        if name == "__init__" and owner:
            name = owner.rsplit(".", 1)[-1]
        calls = self._calls_by_name.get(name, ())
        if len(calls) > MAX_WRITERS:
            return list(self._decorated_by.get(name, ()))  # too common a name to follow
        return [*calls, *self._decorated_by.get(name, ())]


def _key(statement: Statement) -> int | tuple[int, int]:
    """What marks a statement as run: its item, and for a function's statements the
    extra too (a returned or decorating expression may be a file's one ``Name``)."""
    item, extra = statement[2], statement[3]
    return id(item) if extra is None else (id(item), id(extra))


def _capped(first: Iterable[Statement], rest: Iterable[Statement]) -> list[Statement]:
    out = list(first)[:MAX_WRITERS]
    seen = {id(s[2]) for s in out}
    for statement in rest:
        if len(out) >= MAX_WRITERS:
            break
        if id(statement[2]) not in seen:
            out.append(statement)
    return out


__all__ = ["MAX_DEMAND", "DemandSolver", "Function", "Param"]


def _named(var: Var) -> bool:
    """An attribute, or a module global: a variable other files reach by its name."""
    return var[0] == "a" or (var[0] == "v" and var[2] is None)


class _VarsByFile:
    """Where a rebase finds the variables it resets without reading every variable
    (300k on Django after a full index, ~90 ms per push): each variable the solver
    creates is noted under its file (an element under its box's file), and an
    attribute or module global also under its name; every element is listed too.

    Noted once and never taken out: a variable a rebase forgets stays listed until
    the lists hold twice the live variables, then they are rebuilt from those.
    """

    def __init__(self) -> None:
        self._by_path: dict[str, list[Var]] = defaultdict(list)
        self._by_name: dict[object, list[Var]] = defaultdict(list)
        self._elements: list[Var] = []
        self._noted = 0

    def note(self, var: Var) -> None:
        self._noted += 1
        self._by_path[file_of(var)].append(var)
        if var[0] == "e":
            self._elements.append(var)
        elif _named(var):
            self._by_name[var[3]].append(var)

    def candidates(self, paths: set[str], names: set[str], elements: bool) -> Iterator[Var]:
        """Every noted variable of ``paths``, named in ``names``, and (``elements``)
        every element: a superset of the live ones the caller looks for."""
        for path in paths:
            yield from self._by_path.get(path, ())
        for name in names:
            yield from self._by_name.get(name, ())
        if elements:
            yield from self._elements

    def stale(self, live: int) -> bool:
        """Whether the lists hold more than twice the ``live`` variables (and a margin)."""
        return self._noted > 2 * live + 10_000

    def rebuild(self, live: Iterable[Var]) -> None:
        self._by_path.clear()
        self._by_name.clear()
        self._elements = []
        self._noted = 0
        for var in dict.fromkeys(live):
            self.note(var)
