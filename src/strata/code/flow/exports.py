"""What a file exports to other files' resolution, and who can see a change of it.

An incremental index re-resolves a file it did not reparse only when something
that file can see changed. What other files see of a file is its *exports*:
its symbols' interfaces (name, kind, parent, bases, decorators, signature), its
imports (re-exported names) and, through the value flow, every scope's
returns, parameters, assignments to globals and attributes, and the values its
calls pass into other functions' parameters. Line numbers and bodies are not
exports: a body-only change re-resolves just its own file.

:func:`changed_exports` compares the old and new extract of a changed file
scope by scope (positions normalised to their order within the scope) and
names the identifiers whose meaning may have changed (*reader* seeds: who
mentions them may resolve differently) and the functions that may now receive
other values into their parameters (*param* seeds: who defines them may).
:func:`dependents` then follows those seeds through the repository to a
fixpoint: a file that mentions a reader seed (or defines a param seed) is a
dependent, and the scopes of it that do pass the changed values on (returns,
globals, attributes, arguments, decided by a local taint over its assignments)
add their own names. So a changed return annotation reaches the callers of its
callers in files that did not change, and an appended function nobody calls
reaches nobody. Identifier matching over-approximates (a name is a name,
whichever module it is bound in); it never needs a solved flow.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from strata.code.flow.model import (
    Annot,
    Assign,
    Attr,
    Call,
    Container,
    Either,
    Expr,
    FileFlow,
    FlowCall,
    Function,
    Item,
    Name,
    Protocol,
)
from strata.code.model import FileExtract

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum"})
MAX_MEMO = 50_000  # per-blob mention sets kept in the process (a worker indexes many pushes)

# (path, call) -> whether the call's arguments carry any value (the new state's flow)
PassesValues = Callable[[str, FlowCall], bool]


@dataclass(slots=True)
class Seeds:
    """Identifiers whose meaning may have changed, by how a file can see them."""

    readers: set[str] = field(default_factory=set)  # mentioned: resolves differently
    params: set[str] = field(default_factory=set)  # defined: its parameters get other values

    def __bool__(self) -> bool:
        return bool(self.readers or self.params)

    def update(self, other: Seeds) -> None:
        self.readers |= other.readers
        self.params |= other.params


@dataclass(frozen=True, slots=True)
class _Scope:
    """One scope's share of a file's flow (``qualname`` None: the module level)."""

    function: Function | None
    assigns: tuple[Assign, ...]
    calls: tuple[FlowCall, ...]
    kind: str | None  # the scope's symbol kind (class bodies export their names)


@dataclass(frozen=True, slots=True)
class FileMentions:
    """The identifiers a file mentions anywhere, and the function/class names it defines."""

    mentions: frozenset[str]
    defines: frozenset[str]


_memo: dict[str, FileMentions] = {}


def warm_mentions(files: Iterable[tuple[str, FileExtract]]) -> int:
    """Compute the mentions of ``files`` (blob, extract) not memoised yet; how many.

    The first incremental run of a process otherwise computes them for every file
    of the repository inside its plan (~0.8 s on a 2,800-file one).
    """
    fresh = 0
    for blob, extract in files:
        if blob not in _memo:
            mentions(blob, extract)
            fresh += 1
    return fresh


def known_mentions(blob: str) -> FileMentions | None:
    """The mentions of ``blob`` if this process has computed them (never computes)."""
    return _memo.get(blob)


def words(text: str | None) -> set[str]:
    """The identifiers in ``text`` (an annotation, a dotted callee, a decorator)."""
    return set(_WORD.findall(text)) if text else set()


def expr_words(expr: Expr | None, callees: set[str] | None = None) -> set[str]:
    """Every identifier an expression mentions; into ``callees`` (when given) the
    names of the callees whose results it uses."""
    out: set[str] = set()
    todo: list[Expr] = [expr] if expr is not None else []
    while todo:
        e = todo.pop()
        if isinstance(e, Name):
            out.add(e.id)
        elif isinstance(e, Attr):
            out.add(e.name)
            todo.append(e.obj)
        elif isinstance(e, Call):
            if callees is not None and (name := _name_of(e.func)):
                callees.add(name)
            todo.append(e.func)
        elif isinstance(e, Item):
            todo.append(e.obj)
        elif isinstance(e, Container):
            todo.extend(e.items)
        elif isinstance(e, Either):
            todo.extend(e.options)
        elif isinstance(e, Annot):
            out |= words(e.text)
        elif isinstance(e, Protocol):
            out.add(e.method)
            todo.append(e.obj)
    return out


def mentions(blob: str, extract: FileExtract) -> FileMentions:
    """What ``extract`` mentions and defines (memoised by blob: the same content
    mentions the same names)."""
    found = _memo.get(blob)
    if found is not None:
        return found
    said: set[str] = set()
    defines: set[str] = set()
    for symbol in extract.symbols:
        defines.add(symbol.name)
        for text in (*symbol.bases, *symbol.implements, *symbol.decorators):
            said |= words(text)
    for site in extract.calls:
        said |= words(site.callee)
        said.add(site.name)
    for imp in extract.imports:
        said |= words(imp.module)
        said.update(imp.names)
        if imp.alias:
            said.add(imp.alias)
    flow = extract.flow
    if flow is not None:
        for function in flow.functions:
            said |= _function_words(function)
        for assign in flow.assigns:
            said |= expr_words(assign.target) | expr_words(assign.value)
        for call in flow.calls:
            said |= _call_words(call)
        for implicit in flow.implicits:
            said |= expr_words(implicit.obj)
            said.add(implicit.method)
    if len(_memo) >= MAX_MEMO:
        _memo.clear()
    found = FileMentions(frozenset(said), frozenset(defines))
    _memo[blob] = found
    return found


def changed_exports(
    path: str, old: FileExtract, new: FileExtract, passes_values: PassesValues
) -> Seeds | None:
    """The seeds of a change from ``old`` to ``new`` of one file; None when the file
    changed as a whole (language, package, test-ness: every importer may resolve
    differently), which the caller answers with its exact fallback."""
    whole = (old.language, old.package, old.is_test_file)
    if whole != (new.language, new.package, new.is_test_file):
        return None
    seeds = Seeds()
    kinds = {**_kinds(old), **_kinds(new)}
    before, after = _symbols(old), _symbols(new)
    for qualname in before.keys() | after.keys():
        if before.get(qualname) != after.get(qualname):
            seeds.readers |= _seen_by(qualname, kinds)
    if Counter(_imports(old)) != Counter(_imports(new)):
        for module, names, alias in set(_imports(old)) ^ set(_imports(new)):
            seeds.readers |= words(module) | set(names) | ({alias} if alias else set())
    old_scopes, new_scopes = _scopes(old), _scopes(new)
    for scope in old_scopes.keys() | new_scopes.keys():
        was, now = old_scopes.get(scope), new_scopes.get(scope)
        if _digest(was) == _digest(now):
            continue
        if scope is not None and _returned(was) != _returned(now):
            seeds.readers |= _seen_by(scope, kinds)
        for side in (was, now):
            if side is not None:
                seeds.readers |= _assigned_names(scope, side, taint=None)
        gone = Counter(_plain_calls(was)) - Counter(_plain_calls(now))
        added = Counter(_plain_calls(now)) - Counter(_plain_calls(was))
        seeds.params |= {_callee_name(c) for c in gone} - {""}
        for call in new.flow.calls if new.flow is not None and added else ():
            plain = _plain(call)
            if call.scope == scope and added.get(plain, 0) > 0 and passes_values(path, call):
                seeds.params.add(_callee_name(plain))
        seeds.params.discard("")
    return seeds


def dependents(
    files: Mapping[str, tuple[str, FileExtract]],
    changed: set[str],
    seeds: Seeds,
) -> set[str]:
    """The files (outside ``changed``) that can see ``seeds``, followed to a fixpoint
    through the scopes that pass the changed values on."""
    found: set[str] = set()
    done: dict[tuple[str, str | None], set[str]] = {}
    split: dict[str, _Split] = {}  # a file seen in several rounds is split once
    frontier = Seeds(set(seeds.readers), set(seeds.params))
    every = Seeds(set(seeds.readers), set(seeds.params))
    while frontier:
        new = Seeds()
        for path, (blob, extract) in files.items():
            seen = mentions(blob, extract)
            if seen.mentions.isdisjoint(frontier.readers) and seen.defines.isdisjoint(
                frontier.params
            ):
                continue
            if path not in changed:
                found.add(path)
            parts = split.get(path)
            if parts is None:
                parts = split[path] = _Split.of(extract)
            new.update(_passed_on(path, parts, every, done))
        new.readers -= every.readers
        new.params -= every.params
        every.update(new)
        frontier = new
    return found


@dataclass(frozen=True, slots=True)
class _Split:
    """One file's scopes as :func:`dependents` reads them, each with its words."""

    scopes: tuple[_Words, ...]
    kinds: Mapping[str, str]

    @classmethod
    def of(cls, extract: FileExtract) -> _Split:
        scopes = _scopes(extract, ranked=False)
        return cls(tuple(_Words.of(s, p) for s, p in scopes.items()), _kinds(extract))


@dataclass(frozen=True, slots=True)
class _Words:
    """One scope, every word it says, and the words of each assigned value and of
    each call's arguments (what the taint of :func:`_passed_on` reads)."""

    scope: str | None
    part: _Scope
    said: frozenset[str]
    values: tuple[frozenset[str], ...]  # per assignment of ``part``
    args: tuple[frozenset[str], ...]  # per call of ``part``

    @classmethod
    def of(cls, scope: str | None, part: _Scope) -> _Words:
        return cls(
            scope,
            part,
            frozenset(_scope_words(part)),
            tuple(frozenset(expr_words(a.value)) for a in part.assigns),
            tuple(frozenset(_call_args_words(c)) for c in part.calls),
        )


def _passed_on(
    path: str, split: _Split, seeds: Seeds, done: dict[tuple[str, str | None], set[str]]
) -> Seeds:
    """The seeds the scopes of one file pass on, for scopes that see ``seeds`` (a scope
    is looked at again only when it sees more of them than last time)."""
    out = Seeds()
    for words_of in split.scopes:
        scope, part = words_of.scope, words_of.part
        taint = seeds.readers & words_of.said
        function = part.function
        last = scope.rsplit(".", 1)[-1] if scope else None
        owner = scope.rsplit(".", 2)[-2] if scope and scope.count(".") >= 1 else None
        if function is not None and (
            last in seeds.params or (last == "__init__" and owner in seeds.params)
        ):
            taint |= {p.name for p in function.params}
        if not taint or taint <= done.get((path, scope), set()):
            continue
        done[(path, scope)] = set(taint)
        taint |= _local_taint(part, taint, words_of.values)
        if function is not None and (
            any(not expr_words(r).isdisjoint(taint) for r in function.returns)
            or not words(function.annotation).isdisjoint(taint)
            or any(not expr_words(d).isdisjoint(taint) for d in function.decorators)
        ):
            out.readers |= _seen_by(scope, split.kinds) if scope else set()
        out.readers |= _assigned_names(scope, part, taint=taint, values=words_of.values)
        for call, args in zip(part.calls, words_of.args, strict=True):
            if not args.isdisjoint(taint):
                name = _callee_name(call)
                if name:
                    out.params.add(name)
    return out


def _local_taint(part: _Scope, taint: set[str], values: tuple[frozenset[str], ...]) -> set[str]:
    """Locals assigned (transitively) from something tainted, within the scope
    (``values``: the words of each assigned value); a local container an element
    write stores something tainted into (``d[k] = v``) is tainted too: what reads
    the container reads its elements."""
    grown = set(taint)
    changed = True
    while changed:
        changed = False
        for assign, value in zip(part.assigns, values, strict=True):
            name = _written_local(assign.target)
            if name is not None and name not in grown and not value.isdisjoint(grown):
                grown.add(name)
                changed = True
    return grown


def _written_local(target: Expr) -> str | None:
    """The local name an assignment rebinds (``x = ...``) or whose container it
    writes into (``x[k] = ...``, ``x[i][j] = ...``)."""
    while isinstance(target, Item):
        target = target.obj
    return target.id if isinstance(target, Name) else None


def _assigned_names(
    scope: str | None,
    part: _Scope,
    *,
    taint: set[str] | None,
    values: tuple[frozenset[str], ...] | None = None,
) -> set[str]:
    """Names other files may read from the scope's assignments (all of them when
    ``taint`` is None, else those whose value is tainted; ``values``: the words of
    each assigned value, when known)."""
    out: set[str] = set()
    visible = scope is None or part.kind in CLASS_KINDS
    for i, assign in enumerate(part.assigns):
        if taint is not None:
            value = values[i] if values is not None else expr_words(assign.value)
            if value.isdisjoint(taint):
                continue
        target = assign.target
        if isinstance(target, Attr):
            out.add(target.name)
        elif isinstance(target, Name) and visible:
            out.add(target.id)
        elif isinstance(target, Item):
            out |= _container_names(target.obj, part, visible=visible)
    return out


def _container_names(container: Expr, part: _Scope, *, visible: bool) -> set[str]:
    """The names through which other files reach a container an element write changes.

    Not every word of the target: ``self.data[k] = v`` is seen by who reads ``data``,
    not by every file that says ``self``. A name the scope binds is followed to the
    values bound to it (``d = self.cache; d[k] = v``: ``cache``; a fresh ``{}``: no
    one); a global or class attribute (``visible``), a parameter or a free name is
    seen by its name; a container an expression makes, by every name it mentions.
    """
    while isinstance(container, Item):
        container = container.obj
    if isinstance(container, Attr):
        return {container.name}
    if not isinstance(container, Name):
        return expr_words(container)
    name = container.id
    bound = [a.value for a in part.assigns if isinstance(a.target, Name) and a.target.id == name]
    if visible or not bound:
        return {name}
    out: set[str] = set()
    for value in bound:
        if isinstance(value, Attr):
            out.add(value.name)
        elif not isinstance(value, Container):
            out |= expr_words(value)
    return out


def _symbols(extract: FileExtract) -> dict[str, tuple[object, ...]]:
    """Each symbol's interface: what other files resolve against (no lines, no body)."""
    return {
        s.qualname: (
            s.name,
            s.kind,
            s.parent,
            s.bases,
            s.implements,
            s.decorators,
            s.signature,
            s.test_framework,
            s.entrypoint,
            s.framework,
        )
        for s in extract.symbols
    }


def _imports(extract: FileExtract) -> list[tuple[str, tuple[str, ...], str | None]]:
    return [(i.module, i.names, i.alias) for i in extract.imports]


def _scopes(extract: FileExtract, *, ranked: bool = True) -> dict[str | None, _Scope]:
    """The file's flow split by scope, positions replaced by their rank in the scope
    (what a comparison of two versions needs; ``ranked=False`` keeps them as they are)."""
    flow = extract.flow or FileFlow()
    kinds = {s.qualname: s.kind for s in extract.symbols}
    functions = {f.qualname: f for f in flow.functions}
    assigns: dict[str | None, list[Assign]] = defaultdict(list)
    calls: dict[str | None, list[FlowCall]] = defaultdict(list)
    for assign in flow.assigns:
        assigns[assign.scope].append(assign)
    for call in flow.calls:
        calls[call.scope].append(call)
    out: dict[str | None, _Scope] = {}
    for scope in {*functions, *assigns, *calls}:
        function = functions.get(scope) if scope is not None else None
        kind = kinds.get(scope) if scope is not None else None
        if not ranked:
            out[scope] = _Scope(function, tuple(assigns[scope]), tuple(calls[scope]), kind)
            continue
        lines = _ranks([a.line for a in assigns[scope]] + [c.line for c in calls[scope]])
        blocks = _ranks([a.block for a in assigns[scope]] + [c.block for c in calls[scope]])
        out[scope] = _Scope(
            function,
            tuple(replace(a, line=lines[a.line], block=blocks[a.block]) for a in assigns[scope]),
            tuple(replace(c, line=lines[c.line], block=blocks[c.block]) for c in calls[scope]),
            kind,
        )
    return out


def _ranks(values: Iterable[int]) -> dict[int, int]:
    return {v: i for i, v in enumerate(sorted(set(values)))}


def _digest(part: _Scope | None) -> object:
    return None if part is None else (part.function, part.assigns, part.calls, part.kind)


def _returned(part: _Scope | None) -> object:
    """What a function scope's callers see of it: the function (parameters, returned
    and yielded expressions, decorators, annotation) and the statements its returned
    values come from, in their order (any change, for a scope of another kind).

    Those statements are the assignments of the names the returned values read, and
    the calls whose results they use (by callee name) with the arguments passed,
    followed back through the scope. A statement outside that slice does not move
    what the function returns; what else it does other files see is seeded apart
    (the attributes and globals it assigns, the arguments an added or removed call
    passes). Without this, one local added to ``QuerySet.count`` seeded the words
    ``QuerySet`` and ``count``: 2,137 of Django's files re-resolved (20 s), not one.
    """
    if part is None or part.function is None:
        return _digest(part)
    function = part.function
    wanted: set[str] = set()  # names the returned values are made from
    called: set[str] = set()  # callees whose results they use

    def take(expr: Expr | None) -> None:
        wanted.update(expr_words(expr, called))

    for expr in (*function.returns, *function.yields):
        take(expr)
    assigns: set[int] = set()
    calls: set[int] = set()
    grown = True
    while grown:  # backwards through the scope, to what the wanted names are made from
        grown = False
        for i, assign in enumerate(part.assigns):
            if i not in assigns and not expr_words(assign.target).isdisjoint(wanted):
                assigns.add(i)
                take(assign.value)
                grown = True
        for i, call in enumerate(part.calls):
            # A used result depends on what is passed (a call passing only literals,
            # changed, is seeded as its callee's parameters instead).
            if i not in calls and _callee_name(call) in called and _call_args_words(call):
                calls.add(i)
                take(call.func)
                for arg in (*call.args, *(value for _, value in call.keywords)):
                    take(arg)
                grown = True
    kept = [part.assigns[i] for i in sorted(assigns)]
    used = [part.calls[i] for i in sorted(calls)]
    lines = _ranks([a.line for a in kept] + [c.line for c in used])
    blocks = _ranks([a.block for a in kept] + [c.block for c in used])
    return (
        function,
        tuple(replace(a, line=lines[a.line], block=blocks[a.block]) for a in kept),
        tuple(replace(c, line=lines[c.line], block=blocks[c.block]) for c in used),
    )


def _kinds(extract: FileExtract) -> dict[str, str]:
    return {s.qualname: s.kind for s in extract.symbols}


def _seen_by(qualname: str, kinds: Mapping[str, str]) -> set[str]:
    """The words a file mentions if it can see a change of ``qualname``: its own
    name, and each enclosing function's (what a nested function gives may be what
    the function returns). Not an enclosing class's (its members are reached by
    their names, and ``Model`` is mentioned by most of Django), except for a dunder
    method (``__init__`` is reached by calling the class)."""
    parts = qualname.split(".")
    own = parts[-1].partition("#")[0]  # a second declaration of a name is `name#2`
    found = {own}
    dunder = own.startswith("__") and own.endswith("__")
    for i in range(1, len(parts)):
        if dunder or kinds.get(".".join(parts[:i])) not in CLASS_KINDS:
            found.add(parts[i - 1].partition("#")[0])
    return found


def _plain(call: FlowCall) -> FlowCall:
    return replace(call, line=0, block=0)


def _plain_calls(part: _Scope | None) -> list[FlowCall]:
    return [_plain(c) for c in part.calls] if part is not None else []


def _callee_name(call: FlowCall) -> str:
    return _name_of(call.func)


def _name_of(func: Expr) -> str:
    """The name a callee expression ends in (``a.b.c``: ``c``; "" for another kind)."""
    if isinstance(func, Name):
        return func.id
    if isinstance(func, Attr):
        return func.name
    return ""


def _function_words(function: Function) -> set[str]:
    out = words(function.annotation) | set(function.qualname.split("."))
    for param in function.params:
        out |= words(param.annotation) | expr_words(param.default)
    for expr in (*function.returns, *function.decorators):
        out |= expr_words(expr)
    return out


def _call_args_words(call: FlowCall) -> set[str]:
    out: set[str] = set()
    for arg in call.args:
        out |= expr_words(arg)
    for _, value in call.keywords:
        out |= expr_words(value)
    return out


def _call_words(call: FlowCall) -> set[str]:
    return expr_words(call.func) | _call_args_words(call)


def _scope_words(part: _Scope) -> set[str]:
    out = _function_words(part.function) if part.function is not None else set()
    for assign in part.assigns:
        out |= expr_words(assign.value) | expr_words(assign.target)
    for call in part.calls:
        out |= _call_words(call)
    return out
