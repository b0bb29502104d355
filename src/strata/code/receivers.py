"""Receiver types from declarations: what ``x.m()`` reaches in the languages that
say what ``x`` is (TypeScript, Java, C#, Go, Rust, ...), without a value flow.

The adapters record :class:`~strata.code.model.DeclaredType` rows (typed locals,
parameters and fields, ``new C()``, ``x := NewT()``, declared results). A call's
receiver is read left to right (``this.repo.find()``, ``svc.repo().save()``):
its first part is the enclosing class (``this``/``self``), a constructed type
(``new C(...)``), a call's declared result, or a name declared in the caller's
scopes (a class body counts where the module system says it is a scope); each
further part is a declared field, or a method's declared result. A receiver
whose type is declared but is no type of the repository (``Map``, a type
parameter) reaches nothing, and is not guessed by name either. Through an
interface or trait the call also reaches the implementers' methods
(``override``): the types that declare it, or, where the module system types
structurally (Go), every type whose methods include all of the interface's.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import TYPE_CHECKING, Final

from strata.code.model import RETURNS, CallSite, DeclaredType
from strata.code.modules import SymbolTarget

if TYPE_CHECKING:
    from strata.code.resolver import Resolver

TYPE_KINDS = frozenset({"class", "struct", "enum", "interface", "trait"})
DISPATCH_KINDS = frozenset({"interface", "trait"})
SELF_NAMES = frozenset({"self", "this", "Self"})
MAX_DEPTH = 6
MAX_IMPLEMENTERS = 16  # more than this many possible methods is no answer


class _External:
    """A declared type that is not one of the repository's (its calls reach nothing)."""


EXTERNAL: Final = _External()
TypeRef = SymbolTarget | _External | None  # None: not declared (the ordinary rules go on)
Callee = tuple[SymbolTarget, str]


class ReceiverTypes:
    """Declared receiver types of one repository snapshot, asked per call site."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._types: dict[str, dict[tuple[str | None, str], DeclaredType]] = {}
        self._implementers: dict[SymbolTarget, list[SymbolTarget]] | None = None
        self._method_sets: dict[tuple[str, str], dict[str, SymbolTarget]] | None = None
        self._found: dict[SymbolTarget, list[SymbolTarget]] = {}  # interface -> implementers

    def declared(self, path: str) -> dict[tuple[str | None, str], DeclaredType]:
        """(scope, name) -> declared type of one file."""
        found = self._types.get(path)
        if found is None:
            rows = getattr(self.resolver.index.files[path], "types", ())  # older cached extracts
            found = self._types[path] = {(t.scope, t.name): t for t in rows}
        return found

    def callees(self, path: str, call: CallSite) -> list[Callee] | None:
        """What ``call`` reaches through its receiver's declared type; None when the
        receiver's type is not declared (nothing is known, the ordinary rules decide)."""
        if not call.receiver or getattr(self.resolver.index.files[path], "flow", None):
            return None  # a file with a value flow has its receivers followed there
        parts = split_receiver(call.receiver)
        if len(parts) == 1 and parts[0] in SELF_NAMES:
            # The resolver's own rule, unless the type is declared in another file (Go).
            if self.resolver._owner_class(path, call.caller) is not None:
                return None
            owner = self.owner(path, call.caller)
            return self.members(owner, call.name) if owner is not None else None
        if not parts or parts[0] in ("super", "base"):
            return None
        found = self.type_of(path, call.caller, parts)
        if found is None:
            # A path receiver (`Vec::new()`) names a type or module, never a value: when
            # it is none of the repository's, a same-name method is no candidate.
            return [] if "::" in call.callee and self._guessed(path, call) else None
        if isinstance(found, _External):
            return []
        return self.members(found, call.name)

    def _guessed(self, path: str, call: CallSite) -> bool:
        hit, _ = self.resolver._resolve_call(path, self.resolver.index.files[path], call)
        return hit is not None and hit.resolution == "name_only"

    # -- types ---------------------------------------------------------------------------

    def type_of(self, path: str, caller: str | None, parts: list[str], depth: int = 0) -> TypeRef:
        """The type of the receiver ``parts`` seen from ``caller`` in ``path``."""
        if depth > MAX_DEPTH:
            return None
        current = self._head(path, caller, parts[0], depth, as_type=len(parts) > 1)
        for part in parts[1:]:
            if not isinstance(current, SymbolTarget):
                return current
            if part.endswith(")"):
                current = self._result_of_member(current, part.split("(", 1)[0], depth)
            else:
                current = self._field(current, part, depth)
        return current

    def _head(
        self, path: str, caller: str | None, head: str, depth: int, *, as_type: bool
    ) -> TypeRef:
        if head in SELF_NAMES:
            return self.owner(path, caller)
        if head.startswith("new "):
            written = head[4:].split("(", 1)[0].strip()
            return self._named(path, caller, written)
        if head.endswith(")"):
            callee = head.split("(", 1)[0]
            return self._call_result(path, caller, callee, depth)
        for scope in self._scopes(path, caller):
            declared = self.declared(path).get((scope, head))
            if declared is not None:
                return self._of_declared(path, declared, depth)
        if not as_type:
            return None  # `Cart.m()`: a class receiver, the resolver's own rule
        named = self._named(path, caller, head)  # `Cart::new().total()`: a type itself
        return named if isinstance(named, SymbolTarget) else None

    def _scopes(self, path: str, caller: str | None) -> list[str | None]:
        """The caller, the symbols around it, then the file (class bodies where they
        are scopes of their methods)."""
        system = self.resolver.index.system_of(path)
        class_scope = system is not None and system.class_body_is_scope
        out: list[str | None] = []
        current = caller
        while current:
            symbol = self.resolver.symbols.get((path, current))
            if symbol is None:
                break
            if class_scope or symbol.kind not in TYPE_KINDS:
                out.append(current)
            current = symbol.parent
        out.append(None)
        return out

    def _of_declared(self, path: str, declared: DeclaredType, depth: int) -> TypeRef:
        if declared.from_call:
            return self._call_result(path, declared.scope, declared.type, depth + 1)
        if declared.type in SELF_NAMES:
            return self.owner(path, declared.scope)
        return self._named(path, declared.scope, declared.type)

    def _named(self, path: str, scope: str | None, written: str) -> TypeRef:
        """A type written in ``path`` inside ``scope``, as a symbol of the repository."""
        if written in SELF_NAMES:
            return self.owner(path, scope)
        hit = self.resolver._lookup_type(path, written, scope)
        if hit is None:
            return EXTERNAL
        kind = self.resolver.symbols[(hit.target.path, hit.target.qualname)].kind
        return hit.target if kind in TYPE_KINDS else None

    def _call_result(self, path: str, caller: str | None, callee: str, depth: int) -> TypeRef:
        """The declared type of what calling ``callee`` (as written) returns."""
        parts = split_receiver(callee)
        if not parts:
            return None
        name = parts[-1].split("(", 1)[0].split("<", 1)[0].strip()
        receiver = ".".join(parts[:-1])
        if receiver:
            owner = self.type_of(path, caller, parts[:-1], depth + 1)
            if isinstance(owner, SymbolTarget):
                return self._result_of_member(owner, name, depth)
        written = f"{receiver}.{name}" if receiver else name
        probe = CallSite(caller, written, name, receiver or None, 0)
        extract = self.resolver.index.files[path]
        hit, _ = self.resolver._resolve_call(path, extract, probe)
        if hit is None or hit.resolution == "name_only":
            return None
        kind = self.resolver.symbols[(hit.target.path, hit.target.qualname)].kind
        if kind in TYPE_KINDS:
            return hit.target  # a constructor call: `Foo()`, `Foo{}`
        return self._result(hit.target, None, depth)

    def _result_of_member(self, owner: SymbolTarget, name: str, depth: int) -> TypeRef:
        method = self.member(owner, name)
        return self._result(method, owner, depth) if method is not None else None

    def _result(self, function: SymbolTarget, owner: SymbolTarget | None, depth: int) -> TypeRef:
        declared = self.declared(function.path).get((function.qualname, RETURNS))
        if declared is None:
            return None
        if declared.type in SELF_NAMES and not declared.from_call:
            return owner or self.owner(function.path, function.qualname)
        return self._of_declared(function.path, declared, depth + 1)

    def _field(self, owner: SymbolTarget, name: str, depth: int) -> TypeRef:
        for cls in self._with_bases(owner):
            declared = self.declared(cls.path).get((cls.qualname, name))
            if declared is not None:
                return self._of_declared(cls.path, declared, depth + 1)
        return None

    def _with_bases(self, owner: SymbolTarget) -> list[SymbolTarget]:
        out: list[SymbolTarget] = []
        todo = [owner]
        while todo and len(out) < 32:
            cls = todo.pop(0)
            if cls not in out:
                out.append(cls)
                todo.extend(self.resolver.bases(cls))
        return out

    def owner(self, path: str, caller: str | None) -> SymbolTarget | None:
        """The class-like symbol whose member ``caller`` is, also when it is declared in
        another file of the namespace (a Go method next to its struct's file)."""
        found = self.resolver._owner_class(path, caller)
        if found is not None or not caller:
            return found
        symbol = self.resolver.symbols.get((path, caller))
        while symbol is not None and symbol.parent is not None:
            parent = symbol.parent
            if (path, parent) not in self.resolver.symbols:
                for sibling in self.resolver.index.siblings(path):
                    other = self.resolver.symbols.get((sibling, parent))
                    if other is not None and other.kind in TYPE_KINDS:
                        return SymbolTarget(sibling, parent)
                return None
            symbol = self.resolver.symbols.get((path, parent))
        return None

    # -- overloads -----------------------------------------------------------------------

    def overloads(self, target: SymbolTarget, arity: int | None) -> list[SymbolTarget]:
        """Among ``target`` and its overloads (``m``, ``m#2``, ...), those whose parameters
        fit ``arity`` arguments: one when the arity tells them apart, every fitting one
        when it cannot (a call the types would decide links each candidate, never just
        the first); ``[target]`` when none fits or the language has no overloads."""
        if arity is None:
            return [target]
        system = self.resolver.index.system_of(target.path)
        if system is None or not system.overloads_by_arity:
            return [target]
        base = target.qualname.split("#", 1)[0]
        candidates = [SymbolTarget(target.path, base)]
        while True:
            following = SymbolTarget(target.path, f"{base}#{len(candidates) + 1}")
            if (following.path, following.qualname) not in self.resolver.symbols:
                break
            candidates.append(following)
        if len(candidates) == 1:
            return [target]
        fitting = [
            candidate
            for candidate in candidates
            if (symbol := self.resolver.symbols.get((candidate.path, candidate.qualname)))
            is not None
            and system.accepts(symbol, arity)
        ]
        return fitting or [target]

    # -- members -------------------------------------------------------------------------

    def member(self, owner: SymbolTarget, name: str) -> SymbolTarget | None:
        """``owner.name`` through its bases, or declared in a file sharing its namespace."""
        hit = self.resolver.member(owner, name)
        if hit is not None:
            return hit.target
        qualname = f"{owner.qualname}.{name}"
        for sibling in self.resolver.index.siblings(owner.path):
            if (sibling, qualname) in self.resolver.symbols:
                return SymbolTarget(sibling, qualname)
        return None

    def members(self, owner: SymbolTarget, name: str) -> list[Callee]:
        """``owner.name`` (``flow``) and, through an interface or trait, the
        implementers' ``name`` (``override``)."""
        method = self.member(owner, name)
        out: list[Callee] = [(method, "flow")] if method is not None else []
        declaring = self.resolver._owner_class(method.path, method.qualname) if method else owner
        kind = self.resolver.symbols.get((owner.path, owner.qualname))
        if kind is None or kind.kind not in DISPATCH_KINDS:
            if declaring is None or declaring == owner:
                return out
            declared = self.resolver.symbols.get((declaring.path, declaring.qualname))
            if declared is None or declared.kind not in DISPATCH_KINDS:
                return out
        overrides: list[Callee] = []
        for implementer in self.implementers(declaring or owner):
            found = self.member(implementer, name)
            if found is not None and found != method and (found, "override") not in overrides:
                overrides.append((found, "override"))
        return out + (overrides if len(overrides) <= MAX_IMPLEMENTERS else [])

    def implementers(self, interface: SymbolTarget) -> list[SymbolTarget]:
        """Types that implement ``interface``, directly or through other types."""
        found = self._found.get(interface)
        if found is None:
            found = self._found[interface] = self._implementers_of(interface)
        return found

    def _implementers_of(self, interface: SymbolTarget) -> list[SymbolTarget]:
        system = self.resolver.index.system_of(interface.path)
        if system is not None and system.structural_interfaces:
            return self._structural(interface)
        if self._implementers is None:
            found: dict[SymbolTarget, list[SymbolTarget]] = defaultdict(list)
            for (path, qualname), symbol in self.resolver.symbols.items():
                if symbol.kind in TYPE_KINDS and (symbol.bases or symbol.implements):
                    cls = SymbolTarget(path, qualname)
                    for base in self.resolver.bases(cls):
                        found[base].append(cls)
            self._implementers = found
        out: list[SymbolTarget] = []
        todo = list(self._implementers.get(interface, ()))
        while todo and len(out) < 256:
            cls = todo.pop(0)
            if cls not in out and cls != interface:
                out.append(cls)
                todo.extend(self._implementers.get(cls, ()))
        return out

    def _structural(self, interface: SymbolTarget) -> list[SymbolTarget]:
        """Types whose methods include every method of ``interface`` (Go)."""
        if self._method_sets is None:
            sets: dict[tuple[str, str], dict[str, SymbolTarget]] = defaultdict(dict)
            for (path, qualname), symbol in self.resolver.symbols.items():
                system = self.resolver.index.system_of(path)
                structural = system is not None and system.structural_interfaces
                if structural and symbol.kind == "method" and symbol.parent:
                    key = (posixpath.dirname(path), symbol.parent)
                    sets[key][symbol.name] = SymbolTarget(path, qualname)
            self._method_sets = sets
        wanted = set(self._method_sets.get(_key(interface), {}))
        if not wanted:
            return []
        out: list[SymbolTarget] = []
        for (directory, owner), methods in self._method_sets.items():
            if (directory, owner) == _key(interface) or not wanted <= set(methods):
                continue
            any_method = next(iter(methods.values()))
            found = self.owner(any_method.path, any_method.qualname)
            kind = self.resolver.symbols.get((found.path, found.qualname)) if found else None
            if found is not None and kind is not None and kind.kind not in DISPATCH_KINDS:
                out.append(found)
        return sorted(out, key=lambda t: (t.path, t.qualname))


def _key(target: SymbolTarget) -> tuple[str, str]:
    return (posixpath.dirname(target.path), target.qualname)


def split_receiver(receiver: str) -> list[str]:
    """``this.repo.find(a.b).items`` -> ``["this", "repo", "find(a.b)", "items"]``: dots
    outside brackets split; ``::``, ``->``, ``?.`` and ``!.`` read as ``.``."""
    text = receiver.replace("::", ".").replace("?.", ".").replace("!.", ".").replace("->", ".")
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "." and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p] if all(parts) else []
