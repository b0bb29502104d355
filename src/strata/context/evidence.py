"""Cited lines from the code, trace and change reads (pure: views in, lines out).

``value`` says what a budget keeps longest: the target's headline is required,
the intent's own evidence comes next, context (docstrings, history) after.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from strata.code.changes import SymbolChange
from strata.code.unseen import Unresolved
from strata.code.views import CallHit, SymbolView
from strata.context.outline import Step
from strata.context.pack import REQUIRED, Candidate, Cite, Line
from strata.graph.reads import FactVersion
from strata.search.service import SearchHit
from strata.trace.reads import Entity

MAX_DOC_LINES = 3


def cite_symbol(view: SymbolView, line: int | None = None) -> Cite:
    return Cite(view.path, line or view.state.get("line_start"), view.state.get("source_commit"))


def cite_hit(hit: CallHit) -> Cite:
    return Cite(hit.path, hit.state.get("line_start") or hit.line, hit.commit)


def target_lines(view: SymbolView, *, chosen_by: str | None = None) -> list[Line]:
    """The headline (kind, name, signature), the docstring, and how the target was chosen."""
    state = view.state
    head = f"{view.kind or 'symbol'} `{state.get('qualified_name') or view.qualname}`"
    if state.get("signature"):
        head += f" — `{state['signature']}`"
    lines = [Line("Target", head, cite_symbol(view), REQUIRED)]
    start = int(state.get("line_start") or 0)
    flags = [
        f
        for f in ("entrypoint", "test_framework", "framework")
        if state.get(f) not in (None, False)
    ]
    if flags:
        text = ", ".join(f"{f}={state[f]}" for f in flags)
        lines.append(Line("Target", text, cite_symbol(view), 75))
    doc = [d.strip() for d in str(state.get("docstring") or "").splitlines() if d.strip()]
    for i, text in enumerate(doc[:MAX_DOC_LINES]):
        lines.append(Line("Target", f"doc: {text[:200]}", cite_symbol(view, start + 1), 70 - i))
    if chosen_by:
        lines.append(Line("Target", chosen_by, cite_symbol(view), 30))
    return lines


def caller_lines(hits: Sequence[CallHit], *, section: str, base: float) -> list[Line]:
    out = []
    for rank, h in enumerate(hits):
        how = f"{h.resolution}, {h.confidence:.2f}" + (f", depth {h.depth}" if h.depth > 1 else "")
        out.append(
            Line(
                section,
                f"called by `{h.qualified_name}` ({how})",
                Cite(h.path, h.line, h.commit),
                base - rank * 0.5,
            )
        )
    return out


def callee_lines(hits: Sequence[CallHit], target: SymbolView, *, base: float) -> list[Line]:
    out = []
    for rank, h in enumerate(hits):
        how = f"{h.resolution}, {h.confidence:.2f}" + (f", depth {h.depth}" if h.depth > 1 else "")
        # A direct call is cited where it is made; a deeper one where its callee is defined.
        site = Cite(target.path, h.line, h.commit) if h.depth == 1 else cite_hit(h)
        out.append(
            Line(
                "Calls",
                f"calls `{h.qualified_name}` ({how})",
                site,
                base - rank * 0.5,
            )
        )
    return out


def reached_lines(hits: Sequence[CallHit], *, section: str, what: str, base: float) -> list[Line]:
    return [
        Line(
            section,
            f"{what} `{h.qualified_name}` reaches it (depth {h.depth})",
            cite_hit(h),
            base - rank * 0.5,
        )
        for rank, h in enumerate(hits)
    ]


def unresolved_line(unseen: Unresolved | None, target: SymbolView, *, base: float) -> list[Line]:
    """How many call sites the resolver could not link might also reach the target."""
    if unseen is None or not unseen.count:
        return []
    names = ", ".join(unseen.names[:5])
    sample = unseen.sample[0] if unseen.sample else None
    cite = (
        Cite(sample.path, sample.line, target.state.get("source_commit"))
        if sample
        else cite_symbol(target)
    )
    text = f"{unseen.count} unresolved call sites named {names} could also reach it"
    return [Line("Gaps", text, cite, base)]


def outline_lines(steps: Iterable[Step], target: SymbolView, *, base: float) -> list[Line]:
    commit = target.state.get("source_commit")
    return [
        Line(
            "Outline",
            f"{'  ' * s.depth}{s.kind}: `{s.text}`",
            Cite(target.path, s.line, commit),
            base - i * 0.1,
        )
        for i, s in enumerate(steps)
    ]


def history_lines(
    versions: Sequence[FactVersion], target: SymbolView, *, base: float
) -> list[Line]:
    out = []
    for i, v in enumerate(reversed(versions)):
        when = v.valid_at.date().isoformat()
        until = f" until {v.invalid_at.date().isoformat()}" if v.invalid_at else " (current)"
        cite = Cite(target.path, v.props.get("line_start"), v.props.get("source_commit"))
        out.append(Line("History", f"version from {when}{until}", cite, base - i))
    return out


def change_lines(changes: Sequence[SymbolChange], *, base: float) -> list[Line]:
    out = []
    for i, c in enumerate(changes):
        text = f"{c.change} {c.kind} `{c.qualified_name}` on {c.at.date().isoformat()}"
        if c.previous_path is not None and c.change in ("moved", "renamed"):
            text += f" (was {c.previous_path}:{c.previous_qualname})"
        out.append(Line("Changes", text, Cite(c.path, c.line, c.commit), base - i * 0.1))
    return out


def requirement_lines(entity: Entity) -> list[Line]:
    state = entity.state
    cite = Cite(state.get("source_path"), state.get("source_line"), state.get("source_commit"))
    head = f"requirement {entity.id}: {str(state.get('text') or '')[:300]}"
    lines = [Line("Requirement", head, cite, REQUIRED)]
    for field in ("ears", "status", "priority"):
        if state.get(field):
            lines.append(Line("Requirement", f"{field}: {state[field]}", cite, 60))
    return lines


def candidate_of(hit: SearchHit) -> Candidate:
    ev = hit.evidence
    return Candidate(hit.key, hit.qualified_name, hit.kind, Cite(ev.path, ev.line_start, ev.commit))


def candidate_lines(candidates: Sequence[Candidate], *, base: float) -> list[Line]:
    return [
        Line("Candidates", f"{c.kind} `{c.qualified_name}` (id `{c.key}`)", c.cite, base - i)
        for i, c in enumerate(candidates)
    ]
