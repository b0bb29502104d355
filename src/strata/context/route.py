"""The task router: task text to one intent, by a few deterministic patterns.

Order matters and is part of the contract (unit-tested): a requirement id wins,
then "what changed", then impact, tests, entrypoints, flow; anything else is
"explain". The router also pulls out what the text names explicitly: requirement
ids, symbol ids (``repo|ref|path|qualname``), dotted or ``path:qualname`` names,
identifiers in backticks, and a "since" date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum


class Intent(StrEnum):
    explain = "explain"
    find_tests = "find_tests"
    find_entrypoints = "find_entrypoints"
    trace_flow = "trace_flow"
    impact = "impact"
    requirement = "requirement"
    what_changed = "what_changed"


REQ_ID = re.compile(r"\bREQ-\d{1,6}\b", re.IGNORECASE)
SYMBOL_ID = re.compile(r"[^\s|`'\"]+\|[^\s|`'\"]+\|[^\s|`'\"]+\|[^\s|`'\"]+")
BACKTICKED = re.compile(r"`([^`\s]{1,200})`")
# a.b.c, a/b.py:Name.method, Name.method; not sentence punctuation ("end.")
PATH_QUALIFIED = re.compile(r"(?<![\w./:])[\w./-]+\.\w+:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
QUALIFIED = re.compile(r"(?<![\w./:])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?(?![\w(])")
IDENT_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w{2,})\(\)")
SNAKE_OR_CAMEL = re.compile(r"(?<![\w.])([a-z]+_[a-z0-9_]+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*)\b")
SINCE_DATE = re.compile(r"\bsince\s+(\d{4}-\d{2}-\d{2})\b", re.IGNORECASE)

_CHANGED = re.compile(
    r"\b(since|what\s+changed|changed|changes|recent(ly)?|history|diff|moved|renamed)\b",
    re.IGNORECASE,
)
_IMPACT = re.compile(
    r"\b(who\s+calls|callers?\s+of|impact|break|breaks|affected|affect|blast\s+radius|depends?\s+on)\b",
    re.IGNORECASE,
)
_TESTS = re.compile(r"\b(tests?|tested|testing|coverage|covers?)\b", re.IGNORECASE)
_ENTRY = re.compile(
    r"\b(entry\s*points?|entrypoints?|endpoints?|routes?|cli\s+commands?|main\s+function|how\s+is\s+it\s+(reached|invoked))\b",
    re.IGNORECASE,
)
_FLOW = re.compile(
    r"\b(flow|trace|walk\s+through|step\s+by\s+step|what\s+happens|control\s+flow|how\s+does)\b",
    re.IGNORECASE,
)
# A task that will change code (any intent): its pack also names the tests to run after.
_CHANGE = re.compile(
    r"\b(fix(es|ed|ing)?|bug|broken|breaks?|crash(es|ed)?|errors?|exceptions?|fails?|failing|"
    r"wrong|incorrect|regression|change|modify|refactor|rename|implement|add|support|handle)\b",
    re.IGNORECASE,
)
# Words that look like qualified names but are not code (file extensions alone, e.g.).
_NOT_NAMES = frozenset({"e.g", "i.e", "etc"})


@dataclass(frozen=True, slots=True)
class Route:
    """The intent of a task and what it names explicitly."""

    intent: Intent
    requirement_ids: tuple[str, ...] = ()
    symbol_ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # qualified or identifier-like names, most explicit first
    since: datetime | None = None
    reasons: tuple[str, ...] = field(default=())


def route(task: str) -> Route:
    """The intent of ``task`` and the targets it names (pure, deterministic)."""
    reqs = tuple(dict.fromkeys(m.group(0).upper() for m in REQ_ID.finditer(task)))
    ids = tuple(dict.fromkeys(SYMBOL_ID.findall(task)))
    rest = SYMBOL_ID.sub(" ", task)
    names = _names(rest)
    since = _since(task)
    if reqs:
        intent, why = Intent.requirement, f"requirement id {reqs[0]}"
    elif since is not None or _CHANGED.search(rest):
        intent, why = Intent.what_changed, "asks what changed"
    elif _IMPACT.search(rest):
        intent, why = Intent.impact, "asks about callers or impact"
    elif _TESTS.search(rest):
        intent, why = Intent.find_tests, "asks about tests"
    elif _ENTRY.search(rest):
        intent, why = Intent.find_entrypoints, "asks about entrypoints"
    elif _FLOW.search(rest):
        intent, why = Intent.trace_flow, "asks about a flow"
    else:
        intent, why = Intent.explain, "default"
    return Route(intent, reqs, ids, names, since, (why,))


def _names(text: str) -> tuple[str, ...]:
    found: list[str] = []
    for m in BACKTICKED.finditer(text):
        found.append(m.group(1).removesuffix("()"))
    for m in PATH_QUALIFIED.finditer(text):
        found.append(m.group(0))
    text = PATH_QUALIFIED.sub(" ", text)
    for m in QUALIFIED.finditer(text):
        name = m.group(0).removesuffix("()")
        if name.lower() not in _NOT_NAMES and not REQ_ID.fullmatch(name):
            found.append(name)
    for m in IDENT_CALL.finditer(text):
        found.append(m.group(1))
    for m in SNAKE_OR_CAMEL.finditer(text):
        found.append(m.group(1))
    return tuple(dict.fromkeys(n.strip(".") for n in found if n.strip(".")))


def _since(text: str) -> datetime | None:
    m = SINCE_DATE.search(text)
    if m is None:
        return None
    try:
        return datetime.fromisoformat(m.group(1)).replace(tzinfo=UTC)
    except ValueError:
        return None


def asks_change(task: str) -> bool:
    """Whether ``task`` asks for a change to the code (a fix, a feature, a refactor)."""
    return _CHANGE.search(task) is not None
