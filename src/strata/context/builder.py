"""``build_context``: a task in, a cited pack within budget out.

Route the task (:mod:`strata.context.route`), resolve its target (an explicit
id or name in the text, else the top search hits), gather the evidence the
intent needs from the code, trace and change reads, gate it (is there enough
to answer?), and cut it to the token budget (:func:`strata.context.pack.fit`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strata.code.changes import CodeChanges
from strata.code.reads import CodeReads
from strata.code.views import SymbolView
from strata.context import evidence as ev
from strata.context.changed import add_changes, recent_start
from strata.context.check import check_budget, check_task
from strata.context.outline import Step, outline
from strata.context.pack import Candidate, Cite, Line, Pack, fit
from strata.context.route import Intent, Route, asks_change, route
from strata.context.sources import BlobReader
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.ontology.model import Ontology
from strata.search.service import SYMBOL_KINDS, SearchService
from strata.temporal import AsOf
from strata.trace.reads import TraceReads

SEARCH_FIRST = 5
CALLS_FIRST = 12
_PATHLIKE = (".py", ".ts", ".js", ".go", ".java", ".rs", ".kt", ".cs", ".php", ".tsx", ".jsx")


@dataclass(slots=True)
class _Found:
    target: SymbolView | None = None
    chosen_by: str | None = None
    by_search: bool = False  # the target is the top search hit, not a name the task gave
    candidates: list[Candidate] = field(default_factory=list)
    path_hint: str | None = None
    missing: str | None = None  # an explicit name that matched no symbol


class ContextBuilder:
    """Builds packs over one gateway; ``blobs`` reads file contents for outlines."""

    def __init__(
        self,
        gateway: Gateway,
        ontology: Ontology,
        search: SearchService,
        blobs: BlobReader | None = None,
    ) -> None:
        self._ontology = ontology
        self._search = search
        self._blobs = blobs
        self._code = CodeReads(gateway, ontology)
        self._trace = TraceReads(gateway)
        self._reads = Reads(gateway, ontology)
        self._changes = CodeChanges(gateway)

    def build(
        self,
        task: str,
        repository: str,
        *,
        budget_tokens: int = 500,
        as_of: AsOf | None = None,
        repos: list[str] | None = None,
        timeout: float | None = None,
    ) -> Pack:
        """The pack for ``task`` in ``repository`` as of ``as_of``, within ``budget_tokens``."""
        text = check_task(task)
        budget = check_budget(budget_tokens)
        as_of = as_of or AsOf.at()
        self._search.require_repository(repository, repos, timeout=timeout)
        routed = route(text)
        pack = Pack(
            task=text,
            repository=repository,
            intent=routed.intent.value,
            target=None,
            target_name=None,
            sufficient=False,
            reasons=[],
            lines=[],
            candidates=[],
            budget=budget,
            as_of={"valid_at": as_of.valid_at.isoformat(), "known_at": as_of.known_at.isoformat()},
        )
        if routed.intent is Intent.requirement:
            self._requirement(pack, routed, as_of, timeout)
        else:
            found = self._resolve(routed, text, repository, as_of, repos=repos, timeout=timeout)
            pack.candidates = found.candidates
            if found.target is not None:
                pack.target = found.target.key
                pack.target_name = str(
                    found.target.state.get("qualified_name") or found.target.qualname
                )
                pack.lines += ev.target_lines(found.target, chosen_by=found.chosen_by)
            if routed.intent is Intent.what_changed:
                self._what_changed(pack, routed, found, as_of, timeout=timeout)
            elif found.missing is not None:
                pack.reasons.append(f"no symbol named {found.missing} in {repository} as of then")
            elif found.target is None:
                pack.reasons.append("no symbol in the task or among the search hits")
            else:
                self._gather(pack, routed.intent, found.target, as_of, repos=repos, timeout=timeout)
                if found.by_search:
                    # Search chose the target: the runners-up may be what the task means,
                    # and an agent should see them (below the target's own evidence).
                    pack.lines += ev.candidate_lines(pack.candidates, base=30)
        pack.sufficient = not pack.reasons
        if not pack.sufficient:
            gap = self._gap_cite(pack, repository, as_of, timeout)
            pack.lines += [Line("Gaps", f"insufficient: {r}", gap, 95) for r in pack.reasons]
            pack.lines += ev.candidate_lines(pack.candidates, base=45)
        return fit(pack)

    # -- resolution ---------------------------------------------------------------------

    def _resolve(
        self,
        routed: Route,
        text: str,
        repository: str,
        as_of: AsOf,
        *,
        repos: list[str] | None,
        timeout: float | None,
    ) -> _Found:
        found = _Found()
        for key in routed.symbol_ids:
            view = self._code.symbol(key, as_of, repos=repos, timeout=timeout)
            if view is not None and view.repo == repository:
                found.target, found.chosen_by = view, None
                return found
        for name in routed.names:
            if name.endswith(_PATHLIKE) and ":" not in name:
                found.path_hint = found.path_hint or name
                continue
            views = self._by_name(name, repository, as_of, repos, timeout)
            if views:
                found.target = views[0]
                if len(views) > 1:
                    found.chosen_by = f"{len(views)} symbols are named {name}: the first is shown"
                found.candidates = [_candidate(v) for v in views[1:SEARCH_FIRST]]
                return found
        if routed.intent is Intent.what_changed and (found.path_hint or not routed.names):
            return found  # a window or a file is target enough
        result = self._search.search(
            " ".join(routed.names) or text,
            repository,
            layers=["code"],
            kinds=sorted(SYMBOL_KINDS - {"module"}),
            first=SEARCH_FIRST,
            as_of=as_of,
            repos=repos,
            timeout=timeout,
        )
        found.candidates = [ev.candidate_of(h) for h in result.hits]
        named = [n for n in routed.names if not (n.endswith(_PATHLIKE) and ":" not in n)]
        if named:
            # The task named something that does not exist: near misses are candidates, not
            # an answer about something else.
            found.missing = named[0]
            return found
        if result.hits:
            top = result.hits[0]
            found.target = self._code.symbol(top.key, as_of, repos=repos, timeout=timeout)
            found.candidates = found.candidates[1:]
            found.chosen_by = f"chosen by search (score {top.score:.4f}); see candidates"
            found.by_search = True
        return found

    def _by_name(
        self,
        name: str,
        repository: str,
        as_of: AsOf,
        repos: list[str] | None,
        timeout: float | None,
    ) -> list[SymbolView]:
        """Symbols an explicit name means: ``path:qualname``, a qualified name, or a name."""
        path, _, qual = name.rpartition(":") if ":" in name else ("", "", name)
        last = qual.rsplit(".", 1)[-1]
        views = self._code.find_symbols(
            as_of,
            name=last,
            repo=repository,
            path=path or None,
            first=50,
            repos=repos,
            timeout=timeout,
        )
        if "." in qual or path:
            views = [
                v
                for v in views
                if v.qualname == qual
                or str(v.state.get("qualified_name") or "").endswith(qual)
                or v.qualname.endswith("." + qual)
            ]
        # Definitions before tests, shallow paths first: the likelier meaning of a bare name.
        views.sort(key=lambda v: (bool(v.state.get("test_framework")), v.path.count("/"), v.key))
        return views

    # -- evidence per intent -----------------------------------------------------------

    def _gather(
        self,
        pack: Pack,
        intent: Intent,
        target: SymbolView,
        as_of: AsOf,
        *,
        repos: list[str] | None,
        timeout: float | None,
    ) -> None:
        code = self._code
        name = pack.target_name
        if intent in (Intent.impact, Intent.find_tests, Intent.find_entrypoints):
            impact = code.impact(target.key, as_of, first=CALLS_FIRST, repos=repos, timeout=timeout)
            tests_first = intent is Intent.find_tests
            pack.lines += ev.reached_lines(
                impact.tests, section="Tests", what="test", base=85 if tests_first else 60
            )
            pack.lines += ev.reached_lines(
                impact.entrypoints,
                section="Entrypoints",
                what="entrypoint",
                base=85 if intent is Intent.find_entrypoints else 58,
            )
            pack.lines += ev.caller_lines(
                impact.callers, section="Callers", base=80 if intent is Intent.impact else 40
            )
            pack.lines += ev.unresolved_line(impact.unresolved, target, base=88)
            pack.lines += self._linked(target, as_of, timeout)
            unseen = (
                f"; {impact.unresolved.count} unresolved call sites could"
                if (impact.unresolved.count)
                else ""
            )
            tested = any(line.section in ("Tests", "Linked") for line in pack.lines)
            if intent is Intent.find_tests and not tested:
                pack.reasons.append(f"no test reaches {name}{unseen}")
            if (
                intent is Intent.find_entrypoints
                and not impact.entrypoints
                and not target.state.get("entrypoint")
            ):
                pack.reasons.append(f"no entrypoint reaches {name}{unseen}")
            return
        callees = code.callees(
            target.key,
            as_of,
            depth=2 if intent is Intent.trace_flow else 1,
            first=CALLS_FIRST,
            repos=repos,
            timeout=timeout,
        )
        steps = self._outline(target, as_of, pack) if intent is Intent.trace_flow else []
        pack.lines += ev.outline_lines(steps, target, base=85)
        pack.lines += ev.callee_lines(callees, target, base=80 if steps or callees else 50)
        if intent is Intent.trace_flow:
            if not steps and not callees:
                pack.reasons.append(f"no statements or calls found inside {name}")
            return
        callers = code.callers(target.key, as_of, first=CALLS_FIRST, repos=repos, timeout=timeout)
        pack.lines += ev.caller_lines(callers, section="Callers", base=55)
        pack.lines += ev.unresolved_line(callers.unresolved, target, base=35)
        pack.lines += self._linked(target, as_of, timeout)
        if asks_change(pack.task):
            # A fix or a change: the tests to run after it, as the find_tests intent ranks them.
            reached = code.impact(
                target.key, as_of, first=CALLS_FIRST, repos=repos, timeout=timeout
            )
            pack.lines += ev.reached_lines(reached.tests, section="Tests", what="test", base=45)
        history = code.history(target.key, limit=20, timeout=timeout)
        pack.lines += ev.history_lines(history[-3:], target, base=25)
        has_text = target.state.get("signature") or target.state.get("docstring")
        if not (has_text or callers or callees):
            pack.reasons.append(f"{name} has no signature, docstring, callers or callees")

    def _linked(self, target: SymbolView, as_of: AsOf, timeout: float | None) -> list[Line]:
        """Requirements linked to the symbol (implemented, affected or verified by it)."""
        out = []
        links = self._trace.links_into(target.key, as_of, first=5, timeout=timeout)
        for i, link in enumerate(links):
            entity = self._trace.requirement(link.source_key, as_of, timeout=timeout)
            if entity is None:
                continue
            text = str(entity.state.get("text") or "")[:160]
            verb = link.type.lower().replace("_", " ")
            cite = Cite(
                entity.state.get("source_path"),
                entity.state.get("source_line"),
                link.link.get("source_commit") or entity.state.get("source_commit"),
            )
            out.append(Line("Linked", f"{entity.id} ({verb} it): {text}", cite, 65 - i))
        return out

    def _outline(self, target: SymbolView, as_of: AsOf, pack: Pack) -> list[Step]:
        start, end = target.state.get("line_start"), target.state.get("line_end")
        if self._blobs is None or not start or not end:
            pack.notes.append("outline skipped: no git objects to read the file from")
            return []
        file_key = self._ontology.node("File").make_key(
            {"repo": target.repo, "ref": target.ref, "path": target.path}
        )
        found = self._code.file(file_key, as_of)
        blob = found[1].get("content_hash") if found else None
        data = self._blobs(target.repo, str(blob)) if blob else None
        if data is None:
            pack.notes.append(f"outline skipped: blob of {target.path} not on this machine")
            return []
        return outline(target.path, data, int(start), int(end))

    def _requirement(self, pack: Pack, routed: Route, as_of: AsOf, timeout: float | None) -> None:
        req_id = routed.requirement_ids[0]
        key = self._ontology.node("Requirement").make_key(
            {"repo": pack.repository, "req_id": req_id}
        )
        entity = self._trace.requirement(key, as_of, timeout=timeout)
        if entity is None:
            pack.reasons.append(f"no requirement {req_id} in {pack.repository} as of then")
            return
        pack.target, pack.target_name = key, req_id
        pack.lines += ev.requirement_lines(entity)
        for i, link in enumerate(self._trace.links_of_requirement(key, as_of, timeout=timeout)):
            other = link.other
            status = link.link.get("status")
            text = f"{link.type.lower()} `{other.get('qualified_name') or link.target_key}`"
            if status:
                text += f" ({status})"
            cite = Cite(
                other.get("source_path") or _path_of(link.target_key),
                other.get("line_start") or other.get("source_line"),
                other.get("source_commit") or link.link.get("source_commit"),
            )
            pack.lines.append(Line("Links", text, cite, 80 - i * 0.5))

    def _what_changed(
        self, pack: Pack, routed: Route, found: _Found, as_of: AsOf, *, timeout: float | None
    ) -> None:
        start = routed.since or recent_start(
            self._code, self._reads, self._ontology, pack.repository, as_of, timeout=timeout
        )
        target = found.target
        path = target.path if target is not None else found.path_hint
        add_changes(
            pack,
            self._changes,
            start,
            as_of,
            path=path,
            key=target.key if target is not None else None,
            timeout=timeout,
        )

    def _gap_cite(self, pack: Pack, repository: str, as_of: AsOf, timeout: float | None) -> Cite:
        for line in pack.lines:
            return line.cite
        if pack.candidates:
            return pack.candidates[0].cite
        heads = self._code.branches(repository, as_of, timeout=timeout)
        return Cite(repository, None, heads[0].head if heads else None)


def _candidate(view: SymbolView) -> Candidate:
    return Candidate(
        view.key,
        str(view.state.get("qualified_name") or view.qualname),
        view.kind,
        ev.cite_symbol(view),
    )


def _path_of(key: str) -> str | None:
    parts = key.split("|")
    return parts[2] if len(parts) >= 4 else None


def build_context(
    builder: ContextBuilder,
    task: str,
    repository: str,
    budget_tokens: int = 500,
    as_of: AsOf | None = None,
    *,
    repos: list[str] | None = None,
    timeout: float | None = None,
) -> Pack:
    """The functional form of :meth:`ContextBuilder.build`."""
    return builder.build(
        task, repository, budget_tokens=budget_tokens, as_of=as_of, repos=repos, timeout=timeout
    )
