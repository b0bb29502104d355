"""A context pack: cited lines in sections, rendered as markdown and as data, within budget.

Every line carries a :class:`Cite` (``path:line@commit``). :func:`fit` drops the
lowest-value lines until the markdown, counted with the real tokenizer, fits
the usable part of the budget; lines marked ``REQUIRED`` are shortened, never
dropped, so even the smallest budget keeps the pack's headline.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from strata.context.tokens import count_tokens, usable

REQUIRED = 1000.0


@dataclass(frozen=True, slots=True)
class Cite:
    """Where a line's claim comes from."""

    path: str | None
    line: int | None
    commit: str | None

    def __str__(self) -> str:
        where = self.path or "?"
        if self.line:
            where += f":{self.line}"
        return f"{where}@{(self.commit or 'unknown')[:12]}"


@dataclass(frozen=True, slots=True)
class Line:
    """One cited line of a section; ``value`` orders what is dropped first (lowest)."""

    section: str
    text: str
    cite: Cite
    value: float

    def __post_init__(self) -> None:
        # One line is one claim with one citation: text from a docstring or a requirement
        # may hold line breaks, which would leave an uncited line in the markdown.
        parts = self.text.splitlines()
        if len(parts) > 1 or (parts and parts[0] != self.text):
            flat = " ".join(p.strip() for p in parts if p.strip())
            object.__setattr__(self, "text", flat)

    def markdown(self) -> str:
        return f"- {self.text} [{self.cite}]"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A possible target the task might mean."""

    key: str
    qualified_name: str
    kind: str
    cite: Cite


@dataclass(slots=True)
class Pack:
    """The pack: what was asked, what it resolved to, whether the evidence suffices."""

    task: str
    repository: str
    intent: str
    target: str | None  # the resolved entity's key
    target_name: str | None
    sufficient: bool
    reasons: list[str]
    lines: list[Line]
    candidates: list[Candidate]
    budget: int
    as_of: dict[str, str]
    tokens: int = 0
    dropped: int = 0
    notes: list[str] = field(default_factory=list)

    def sections(self) -> list[tuple[str, list[Line]]]:
        order: dict[str, list[Line]] = {}
        for line in self.lines:
            order.setdefault(line.section, []).append(line)
        return list(order.items())

    def markdown(self) -> str:
        out = [f"# Context ({self.intent}): {self.target_name or 'unresolved'}"]
        for title, lines in self.sections():
            out.append(f"## {title}")
            out.extend(line.markdown() for line in lines)
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "repository": self.repository,
            "intent": self.intent,
            "target": self.target,
            "target_name": self.target_name,
            "sufficient": self.sufficient,
            "reasons": list(self.reasons),
            "budget": self.budget,
            "tokens": self.tokens,
            "dropped": self.dropped,
            "as_of": dict(self.as_of),
            "notes": list(self.notes),
            "sections": [
                {
                    "title": title,
                    "lines": [
                        {
                            "text": line.text,
                            "citation": str(line.cite),
                            "path": line.cite.path,
                            "line": line.cite.line,
                            "commit": line.cite.commit,
                        }
                        for line in lines
                    ],
                }
                for title, lines in self.sections()
            ],
            "candidates": [
                {
                    "id": c.key,
                    "qualified_name": c.qualified_name,
                    "kind": c.kind,
                    "citation": str(c.cite),
                }
                for c in self.candidates
            ],
            "markdown": self.markdown(),
        }


def fit(pack: Pack) -> Pack:
    """The pack with its lowest-value lines dropped until its markdown fits the budget."""
    limit = usable(pack.budget)
    total = len(pack.lines)
    # Cheap first pass on per-line counts, then the exact count of the whole text decides.
    costs = [count_tokens(line.markdown()) + 1 for line in pack.lines]
    order = sorted(range(total), key=lambda i: (pack.lines[i].value, -i))
    keep = set(range(total))
    estimate = count_tokens(pack.markdown()) if pack.lines else 0
    for i in order:
        if estimate <= limit:
            break
        if pack.lines[i].value >= REQUIRED:
            continue
        keep.discard(i)
        estimate -= costs[i]
    pack.lines = [line for i, line in enumerate(pack.lines) if i in keep]
    tokens = count_tokens(pack.markdown())
    while tokens > limit:
        droppable = [i for i, line in enumerate(pack.lines) if line.value < REQUIRED]
        if droppable:
            worst = min(droppable, key=lambda i: (pack.lines[i].value, -i))
            del pack.lines[worst]
        elif not _shorten(pack):
            break
        tokens = count_tokens(pack.markdown())
    pack.tokens = tokens
    pack.dropped = total - len(pack.lines)
    return pack


def _shorten(pack: Pack) -> bool:
    """Cut the longest required line (or the headline name) by a quarter; False when nothing
    is left to cut."""
    if not pack.lines:
        if pack.target_name and len(pack.target_name) > 8:
            pack.target_name = pack.target_name[: len(pack.target_name) * 3 // 4] + "…"
            return True
        return False
    i = max(range(len(pack.lines)), key=lambda j: len(pack.lines[j].text))
    text = pack.lines[i].text
    if len(text) <= 8:
        del pack.lines[i]
        return True
    pack.lines[i] = replace(pack.lines[i], text=text[: len(text) * 3 // 4] + "…")
    return True
