"""Text helpers shared by the adapters: decoding, whitespace, hashes, doc
comments, signatures and string literals. Nothing here raises on bad input."""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Callable, Iterable

from tree_sitter import Node

from strata.code.languages._unit import Unit

MAX_SIGNATURE = 300
MAX_DOCSTRING = 1000
MAX_RECEIVER = 200


def decode(raw: bytes) -> str:
    """Source bytes as text; invalid UTF-8 becomes U+FFFD instead of raising."""
    return raw.decode("utf-8", errors="replace")


def collapse(text: str) -> str:
    """Whitespace runs as one space. A line break disappears where the code reads
    on: before ``.``/``)``/``]`` and after an opening bracket or a dot, so a chain
    split over lines (``a\\n  .b()``) reads as ``a.b()``."""
    if "\n" not in text:
        return " ".join(text.split())
    joined = ""
    for part in text.splitlines():
        line = part.strip()
        if not line:
            continue
        tight = line[0] in ".)]}?" or joined.endswith(("(", "[", "{", ".", "::"))
        joined = f"{joined}{'' if tight or not joined else ' '}{line}"
    return " ".join(joined.split())


def body_hash(text: bytes) -> str:
    """Hash of a symbol's text with whitespace runs collapsed (re-indenting keeps it)."""
    return hashlib.blake2b(b" ".join(text.split()), digest_size=16).hexdigest()


def shape_hash(text: bytes, name: str) -> str:
    """Like :func:`body_hash`, with every whole-word use of ``name`` masked.

    A renamed symbol keeps its shape hash, so a moved or renamed declaration
    can be found again (trace links use it to point at the candidate).
    """
    masked = mask_word(text, name.encode()) if name else text
    return hashlib.blake2b(b" ".join(masked.split()), digest_size=16).hexdigest()


# The bytes a regular expression's ``\b`` counts as word characters (bytes patterns: ASCII).
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def mask_word(text: bytes, word: bytes) -> bytes:
    """``re.sub(rb"\\b" + re.escape(word) + rb"\\b", b"\\x00", text)`` without a pattern.

    Compiling that pattern for every symbol's name was a fifth of the parse; a
    literal search with the same boundary rule (at each edge, word character on
    one side only) finds the same non-overlapping uses, left to right.
    """
    n = len(word)
    if not n:
        return text
    first, last = word[0] in _WORD_BYTES, word[-1] in _WORD_BYTES
    parts: list[bytes] = []
    start = 0
    at = text.find(word)
    while at != -1:
        before = at > 0 and text[at - 1] in _WORD_BYTES
        after = at + n < len(text) and text[at + n] in _WORD_BYTES
        if before != first and after != last:
            parts += (text[start:at], b"\x00")
            start = at + n
            at = text.find(word, start)
        else:
            at = text.find(word, at + 1)
    if not parts:
        return text
    parts.append(text[start:])
    return b"".join(parts)


def clean_doc(text: str) -> str | None:
    """Dedent a doc text, drop blank edges, cap it at the contract's 1000 characters."""
    doc = inspect.cleandoc(text).strip()
    return doc[:MAX_DOCSTRING] or None


def strip_block_comment(text: str) -> str:
    """The text of a ``/** ... */`` or ``/* ... */`` comment without its markers."""
    body = text.strip()
    body = body[3:] if body.startswith("/**") else body[2:] if body.startswith("/*") else body
    body = body.removesuffix("*/")
    lines = []
    for line in body.splitlines():
        stripped = line.strip()
        if stripped.startswith("*"):
            stripped = stripped[1:]
            stripped = stripped[1:] if stripped.startswith(" ") else stripped
        lines.append(stripped)
    return "\n".join(lines)


def strip_line_comments(texts: Iterable[str], marker: str) -> str:
    """The text of consecutive line comments (``//``, ``///``) without the marker."""
    lines = []
    for raw in texts:
        line = raw.strip().removeprefix(marker)
        lines.append(line[1:] if line.startswith(" ") else line)
    return "\n".join(lines)


def unquote(text: str) -> str:
    """The content of a string literal as written, without prefixes and quotes."""
    body = text.strip().lstrip("rRbBuUfF@$")
    for quote in ('"""', "'''", '"', "'", "`"):
        if len(body) >= 2 * len(quote) and body.startswith(quote) and body.endswith(quote):
            return body[len(quote) : -len(quote)]
    return body


def signature(unit: Unit, start: int, stop: int, cut: Iterable[Node] = ()) -> str | None:
    """The declaration head ``source[start:stop]`` on one line, without the nodes
    in ``cut`` (annotations, attributes) and without a trailing ``{ : ; =>``."""
    raw = unit.source[start:stop]
    for node in sorted(cut, key=lambda n: n.start_byte, reverse=True):
        if start <= node.start_byte and node.end_byte <= stop:
            raw = raw[: node.start_byte - start] + raw[node.end_byte - start :]
    text = " ".join(decode(raw).split())
    for suffix in ("{", ":", "=>", ";", "="):
        if text.endswith(suffix):
            text = text[: -len(suffix)].rstrip()
    return text[:MAX_SIGNATURE] or None


def field_signature(
    unit: Unit, field: Node, type_node: Node | None, declarator: Node, cut: Iterable[Node] = ()
) -> str | None:
    """One declarator of a field with the field's modifiers and type, on one line:
    ``public static final int MIN = 1`` out of ``... int MAX = 3, MIN = 1;``."""
    head_end = type_node.end_byte if type_node is not None else field.start_byte
    head = signature(unit, field.start_byte, head_end, cut) or ""
    return f"{head} {collapse(unit.text(declarator))}".strip()[:MAX_SIGNATURE] or None


def doc_comments_above(
    node: Node, is_doc: Callable[[Node], bool], comment_types: frozenset[str]
) -> list[Node]:
    """The doc comments directly above ``node``, top first: a contiguous group of
    comments, each on its own line, ending on the line before it, all of which
    pass ``is_doc`` (a trailing ``x = 1 // note`` is not a doc comment)."""
    found: list[Node] = []
    expected = node.start_point.row
    prev = node.prev_named_sibling
    while prev is not None and prev.type in comment_types:
        if prev.end_point.row < expected - 1 or not is_doc(prev):
            break
        before = prev.prev_named_sibling
        if (
            before is not None
            and before.end_point.row == prev.start_point.row
            and before.type not in comment_types
        ):
            break  # trails the code before it
        found.append(prev)
        expected = prev.start_point.row
        prev = before
    found.reverse()
    return found


_TYPE_PATH = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*$")
_TYPE_PREFIXES = ("&mut ", "&", "*", "?", "mut ", "dyn ", "impl ", "readonly ", "ref ", "const ")
_NO_TYPES = frozenset({"null", "undefined", "void", "nil", "None"})


def plain_type(text: str) -> str | None:
    """A declared type as the name of one type: pointers, references, ``dyn``,
    nullability and type arguments dropped (``&mut Vec<T>`` -> ``Vec``, ``Repo |
    null`` -> ``Repo``, ``*store.DB`` -> ``store.DB``); None for anything else (an
    array, a function type, a union of two types)."""
    options = [p.strip() for p in text.split("|")]
    options = [p for p in options if p and p not in _NO_TYPES]
    if len(options) != 1:
        return None
    written = options[0]
    changed = True
    while changed:
        changed = False
        for prefix in _TYPE_PREFIXES:
            if written.startswith(prefix):
                written, changed = written[len(prefix) :].lstrip(), True
    written = written.rstrip("?!").split("<", 1)[0].strip()
    return written if _TYPE_PATH.match(written) else None


_OPENERS, _CLOSERS = "(<[{", ")>]}"


def parameter_range(signature: str, name: str) -> tuple[int, int | None] | None:
    """(fewest, most) arguments a declaration ``name(...)`` accepts, read from its
    signature: defaults (``x = 1``) are optional, varargs (``T... xs``, ``params T[]
    xs``, ``vararg xs``) take any number; None when the signature has no parameter list."""
    found = list(re.finditer(rf"\b{re.escape(name)}\s*\(", signature))
    if not found:
        return None
    start = found[-1].end()
    depth, params, current = 0, [], ""
    for char in signature[start:]:
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            if depth == 0 and char == ")":
                break
            depth -= 1
        elif char == "," and depth == 0:
            params.append(current.strip())
            current = ""
            continue
        current += char
    if current.strip():
        params.append(current.strip())
    if params and params[0].startswith("this "):
        params = params[1:]  # a C# extension method: the receiver is the first parameter
    required = [p for p in params if "=" not in p]
    variadic = any("..." in p or p.startswith(("params ", "vararg ")) for p in params)
    most = None if variadic else len(params)
    return (len(required) - (1 if variadic else 0), most)
