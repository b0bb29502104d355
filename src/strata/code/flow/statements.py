"""Which statements may write each variable: the demand solver's index, kept per file.

Building it reads every statement of the repository, and a push changes a few
files. :class:`StatementIndex` adds and removes one file's statements at a time,
and :meth:`StatementIndex.refresh` brings it to a new snapshot through the files
whose extract is not the object it indexed (identity: the parse of a blob kept
in memory between runs is the same object, anything else is re-read). The
repository-wide lists (writers of an attribute name, call sites by callee name,
decorated functions by decorator name, element writes) are kept in path order,
so an index refreshed push after push holds exactly the lists an index built
afresh over the same snapshot holds: the solver's answers do not depend on the
history of the process.

One solver at a time uses an index (a worker process runs one job at a time);
:class:`StatementIndexes` keeps one per repository and ref in a process.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from strata.code.flow.model import Attr, FileFlow, Function, Item, Name
from strata.code.flow.values import Var
from strata.code.model import FileExtract
from strata.code.modules import ModuleIndex
from strata.code.symbols import SymbolTable

Statement = tuple[str, str, object, object]  # (kind, path, item, extra)
VarOf = Callable[[str, str | None, str], Var]
KeysByTable = dict[int, tuple[dict[Any, Any], list[Any]]]  # id(table) -> (table, keys)
MAX_INDEXES = 4  # repositories/refs whose index a process keeps


def _path(statement: Statement) -> str:
    return statement[1]


@dataclass(slots=True)
class _Indexed:
    """What one file put into the index, to take it out again."""

    extract: FileExtract | None
    keys: KeysByTable = field(default_factory=dict)
    names: list[tuple[dict[str, list[Statement]], str]] = field(default_factory=list)
    flow: FileFlow | None = None  # its call sites are taken out by identity


class StatementIndex:
    """Functions, locals and the statements that may write each variable, per file."""

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], Function] = {}
        self.locals: dict[tuple[str, str | None], set[str]] = {}
        # (path, scope, name) -> (line, block, assignment var) of a local's assignments
        self.sites_of: dict[tuple[str, str, str], Sequence[tuple[int, int, Var]]] = {}
        # var -> statements of its own file that write it (returns, defaults, assignments)
        self.static: dict[Var, Sequence[Statement]] = {}
        self.by_attr_in: dict[tuple[str, str], Sequence[Statement]] = {}
        self.items_in: dict[str, Sequence[Statement]] = {}
        # Repository-wide, each list in path order.
        self.by_attr: dict[str, list[Statement]] = {}
        self.calls_by_name: dict[str, list[Statement]] = {}
        self.decorated_by: dict[str, list[Statement]] = {}
        self.items: dict[str, list[Statement]] = {}  # one key, "": every element write
        # id(FlowCall) -> its statement; one flow object may sit at two paths (a copied
        # file): the last in path order answers, as in a build in path order, and the
        # statements of every path are listed in `_shared_calls` (only such calls).
        self.call_statement: dict[int, Statement] = {}
        self._shared_calls: dict[int, list[Statement]] = {}
        self._files: dict[str, _Indexed] = {}
        # The demand solver of the last run over this index, kept for the next one to
        # rebase (strata.code.flow.demand); None: the next run starts a new solver.
        self.solver: Any = None
        # The last run's subclass map (strata.code.flow.index), kept with its solver: a
        # rebased solver's snapshot declares the same classes, bases and imports.
        self.subclasses: Any = None
        # The resolver's symbol table, refreshed by identity like this index's files.
        self.symbols = SymbolTable()
        # The last run's module index: the next one takes its tables over when it can.
        self.modules: ModuleIndex | None = None

    def __len__(self) -> int:
        return len(self._files)

    def refresh(
        self, files: Mapping[str, FileExtract], flows: Mapping[str, FileFlow], var_of: VarOf
    ) -> int:
        """Index exactly the files of ``flows`` as ``files`` holds them; returns how many
        files were (re-)read. ``var_of`` names an assignment's variable (it reads the
        file's functions and locals from this index)."""
        stale = [
            path
            for path, held in self._files.items()
            if path not in flows or files.get(path) is not held.extract
        ]
        for path in stale:
            self._remove(path)
        added = sorted(path for path in flows if path not in self._files)
        for path in added:
            self._add(path, files.get(path), flows[path], var_of)
        return len(added)

    def pending(
        self, files: Mapping[str, FileExtract], flows: Mapping[str, FileFlow]
    ) -> tuple[dict[str, FileExtract | None], set[str]]:
        """What :meth:`refresh` would do: the held files it would re-read (with the
        extract they were indexed from), and the files it would add."""
        stale = {
            path: held.extract
            for path, held in self._files.items()
            if path not in flows or files.get(path) is not held.extract
        }
        return stale, {path for path in flows if path not in self._files}

    @staticmethod
    def before(found: list[Statement], path: str) -> int:
        """How many statements of a path-ordered list belong to files before ``path``."""
        return bisect_left(found, path, key=_path)

    # -- one file ----------------------------------------------------------------------

    def _add(self, path: str, extract: FileExtract | None, flow: FileFlow, var_of: VarOf) -> None:
        held = _Indexed(extract, flow=flow)
        self._files[path] = held
        for function in flow.functions:
            key = (path, function.qualname)
            self.functions[key] = function
            note_key(held.keys, self.functions, key)
            self._local(held, (path, function.qualname)).update(p.name for p in function.params)
        # Each assignment to a name is a variable of its own: ("s", path, id(assignment)),
        # one tuple shared by the sites and the writers' table.
        own: dict[int, Var] = {}
        for assign in flow.assigns:
            if isinstance(assign.target, Name):
                self._local(held, (path, assign.scope)).add(assign.target.id)
                own_var = own[id(assign)] = ("s", path, id(assign))
                if assign.scope is not None and assign.line:
                    site = (assign.line, assign.block, own_var)
                    where = (path, assign.scope, assign.target.id)
                    self._file_list(held, self.sites_of, where).append(site)
        named: dict[tuple[str, str], list[Statement]] = defaultdict(list)
        for function in flow.functions:
            self._index_function(held, path, function, named)
        for assign in flow.assigns:
            statement: Statement = ("a", path, assign, None)
            target = assign.target
            if isinstance(target, Name):
                var = var_of(path, assign.scope, target.id)
                self._file_list(held, self.static, var).append(statement)
                self._file_list(held, self.static, own[id(assign)]).append(statement)
            elif isinstance(target, Attr):
                named[("attr", target.name)].append(statement)
                self._file_list(held, self.by_attr_in, (path, target.name)).append(statement)
            elif isinstance(target, Item):
                named[("item", "")].append(statement)
                self._file_list(held, self.items_in, path).append(statement)
        for call in flow.calls:
            statement = ("c", path, call, None)
            self._add_call(id(call), statement, path)
            name = last_name(call.func)
            if name:
                named[("call", name)].append(statement)
        tables = {
            "attr": self.by_attr,
            "item": self.items,
            "call": self.calls_by_name,
            "decorator": self.decorated_by,
        }
        for (which, name), statements in named.items():
            table = tables[which]
            self._insert(table.setdefault(name, []), statements, path)
            held.names.append((table, name))
        self._freeze(held)

    def _index_function(
        self,
        held: _Indexed,
        path: str,
        function: Function,
        named: dict[tuple[str, str], list[Statement]],
    ) -> None:
        """The statements that write a function's returns, yields and parameter defaults
        (a pytest fixture's value is found when the parameter is read: it depends on
        other files)."""
        qualname = function.qualname
        if function.returns:  # no entry without one (a third of the functions)
            returns = self._file_list(held, self.static, ("r", path, qualname))
            returns += [("r", path, function, e) for e in function.returns]
        yielded = getattr(function, "yields", ())
        if yielded:
            yields = self._file_list(held, self.static, ("y", path, qualname))
            yields += [("y", path, function, e) for e in yielded]
        for param in function.params:
            if param.default is not None:
                var = ("v", path, qualname, param.name)
                self._file_list(held, self.static, var).append(("d", path, function, param))
        for decorator in function.decorators:
            name = last_name(decorator)
            if name:
                named[("decorator", name)].append(("k", path, function, decorator))

    def _freeze(self, held: _Indexed) -> None:
        """Make the file's own lists tuples: no other file adds to them (~300k on sympy,
        most one entry long; a tuple of one is half the size of the list)."""
        tables: tuple[dict[Any, Sequence[Any]], ...] = (
            self.static,
            self.sites_of,
            self.by_attr_in,
            self.items_in,
        )
        for table in tables:
            group = held.keys.get(id(table))
            for key in group[1] if group is not None else ():
                table[key] = tuple(table[key])

    def _remove(self, path: str) -> None:
        held = self._files.pop(path)
        drop_keys(held.keys)
        for table, name in held.names:
            found = table.get(name)
            if found is not None and not self._cut(found, path):
                del table[name]
        for call in held.flow.calls if held.flow is not None else ():
            self._remove_call(id(call), path)

    def _add_call(self, call_id: int, statement: Statement, path: str) -> None:
        found = self.call_statement.get(call_id)
        if found is None:
            self.call_statement[call_id] = statement
            return
        shared = self._shared_calls.get(call_id)
        if shared is None:
            shared = self._shared_calls[call_id] = [found]
        self._insert(shared, [statement], path)
        self.call_statement[call_id] = shared[-1]

    def _remove_call(self, call_id: int, path: str) -> None:
        shared = self._shared_calls.get(call_id)
        if shared is None:
            found = self.call_statement.get(call_id)
            if found is not None and found[1] == path:
                del self.call_statement[call_id]
        elif self._cut(shared, path):
            self.call_statement[call_id] = shared[-1]
            if len(shared) == 1:
                del self._shared_calls[call_id]
        else:
            del self._shared_calls[call_id]
            self.call_statement.pop(call_id, None)

    # -- helpers -----------------------------------------------------------------------

    def _local(self, held: _Indexed, key: tuple[str, str | None]) -> set[str]:
        found = self.locals.get(key)
        if found is None:
            found = self.locals[key] = set()
            note_key(held.keys, self.locals, key)
        return found

    @staticmethod
    def _file_list(held: _Indexed, table: dict[Any, Any], key: Any) -> list[Any]:
        """``table[key]``, recorded as the file's own entry (keys hold its path), a list
        while the file is added (:meth:`_freeze` makes it a tuple)."""
        found = table.get(key)
        if found is None:
            found = table[key] = []
            note_key(held.keys, table, key)
        return found

    @staticmethod
    def _insert(into: list[Statement], statements: list[Statement], path: str) -> None:
        """Put one file's statements (in file order) at its place in path order."""
        at = bisect_right(into, path, key=_path)
        into[at:at] = statements

    @staticmethod
    def _cut(found: list[Statement], path: str) -> bool:
        """Take one file's statements out of a path-ordered list; False if it is empty."""
        low = bisect_left(found, path, key=_path)
        high = bisect_right(found, path, key=_path)
        del found[low:high]
        return bool(found)


class StatementIndexes:
    """One :class:`StatementIndex` per repository and ref, for the runs of one process
    (the least recently used goes past :data:`MAX_INDEXES`)."""

    def __init__(self, limit: int = MAX_INDEXES) -> None:
        self.limit = limit
        self._held: OrderedDict[tuple[str, str], StatementIndex] = OrderedDict()

    def get(self, repo: str, ref: str) -> StatementIndex:
        """The index of ``repo``/``ref`` (empty the first time: the first run reads all)."""
        key = (repo, ref)
        found = self._held.get(key)
        if found is None:
            found = self._held[key] = StatementIndex()
        self._held.move_to_end(key)
        while len(self._held) > self.limit:
            self._held.popitem(last=False)
        return found


def note_key(noted: KeysByTable, table: dict[Any, Any], key: Any) -> None:
    """Note that ``key`` was put in ``table`` (grouped by table: one (table, key) pair
    per key held ~350k pairs on sympy)."""
    group = noted.get(id(table))
    if group is None:
        group = noted[id(table)] = (table, [])
    group[1].append(key)


def drop_keys(noted: KeysByTable) -> None:
    """Take every noted key out of its table again."""
    for table, keys in noted.values():
        for key in keys:
            table.pop(key, None)


def last_name(expr: object) -> str | None:
    """The name a callee or decorator expression ends in (``a.b.c`` -> ``c``)."""
    if isinstance(expr, Name):
        return expr.id
    if isinstance(expr, Attr):
        return expr.name
    return None
