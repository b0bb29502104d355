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

from collections.abc import Iterable

from strata.code.flow.model import FileFlow, FlowCall, Function, Param
from strata.code.flow.solver import MAX_ROUNDS, Lookup, Solver, Value, Var
from strata.code.flow.statements import Statement, StatementIndex
from strata.code.flow.values import file_of

MAX_DEMAND = 16  # nested variable computations before a read answers what it has
MAX_WRITERS = 48  # call sites or attribute assignments tried for one variable


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
        super().__init__(lookup, flows, statements)
        self._done: set[Var] = set()
        self._ran: set[int] = set()
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
        self._by_key: dict[int, Statement] = {}  # statements run so far, by number
        self._running = -1  # the number of the statement running now (-1: none)
        self._draining = False
        self._deferred: list[Var] = []  # cut off by MAX_DEMAND: computed when settling
        self.reruns = 0
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

    def site(self, call: FlowCall) -> tuple[set[Value], bool]:
        """The callees ``call``'s callee expression may hold, and whether its receiver
        is known."""
        statements = self._call_statement.get(id(call))
        if statements:
            self._run(statements[-1])
        self._settle()
        return self.sites.get(id(call), (set(), False))

    def _settle(self) -> None:
        """Run again every statement that read a variable which has grown since."""
        if self._draining or self._depth:
            return
        self._draining = True
        try:
            queue, queued, deferred = self._queue, self._queued, self._deferred
            while (queue or deferred) and self.reruns < MAX_ROUNDS * len(self._by_key):
                self.reruns += 1
                if deferred:
                    self.values(deferred.pop())  # at depth 0, as no statement's reader
                    continue
                number = queue.pop()
                queued.discard(number)
                self._apply_as(number, self._by_key[number])
        finally:
            self._draining = False

    # -- demand ------------------------------------------------------------------------

    def values(self, var: Var) -> set[Value]:
        where = file_of(var)
        if self._current_path and where != self._current_path:
            self.file_deps[self._current_path].add(where)
        if var not in self._done and self._depth >= MAX_DEMAND:
            self._deferred.append(var)  # computed later, from the top: its readers re-run
        elif var not in self._done:
            self._done.add(var)
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
            self._readers[var].add(self._running)
        if var in self.wide:
            return set()
        return self.env.get(var) or set()

    def _run(self, statement: Statement) -> None:
        key = id(statement[2]) if statement[3] is None else id(statement[3])
        if key in self._ran:
            return
        self._ran.add(key)
        # Readers are numbered in the order they first ran, not by id(): the order the
        # worklist re-runs them in is then the same in every process.
        number = len(self._by_key)
        self._by_key[number] = statement
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
