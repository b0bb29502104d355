"""Ingest a repository's documents at one commit: select, read, one episode each.

Used by the knowledge worker (``strata.knowledge.ingest``) and by
``strata knowledge ingest``. Documents are ingested one after another (graphiti
wants the episodes of one partition added in sequence). A document that cannot
be ingested for a reason a retry will not fix (invalid model output, a bad
date) is reported and the others go on; a transient failure (model endpoint
down or slow, Neo4j unavailable) stops the run so the caller can retry it,
and the documents already done are no-ops the second time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.llm_client import LLMClient

from strata.errors import StrataError
from strata.git import Git, TreeEntry
from strata.graph.gateway import Gateway
from strata.knowledge.document_files import last_change_time, matches, read_document
from strata.knowledge.documents import DocumentOutcome, open_graph
from strata.ontology.model import Ontology
from strata.settings import Settings

Progress = Callable[[str, dict[str, Any]], None]
MAX_DOCUMENTS = 2000


@dataclass(slots=True)
class IngestSummary:
    """What one run did, per document, with the model's token use."""

    repo: str
    commit: str
    selected: int = 0
    outcomes: list[DocumentOutcome] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def tokens(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for outcome in self.outcomes:
            for name, value in outcome.tokens.items():
                total[name] = total.get(name, 0) + value
        return total

    def as_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "commit": self.commit,
            "selected": self.selected,
            "ingested": self.count("ingested"),
            "unchanged": self.count("unchanged"),
            "recovered": self.count("recovered"),
            "failed": len(self.failed),
            "skipped": dict(self.skipped),
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
            "documents": [o.as_dict() for o in self.outcomes],
            "errors": self.failed,
        }


def select_documents(
    git: Git, commit: str, globs: Sequence[str], *, max_bytes: int
) -> tuple[list[TreeEntry], dict[str, int]]:
    """The commit's files that match ``globs``, and how many were skipped by reason."""
    chosen: list[TreeEntry] = []
    skipped: dict[str, int] = {}
    for entry in git.tree(commit):
        if not matches(entry.path, globs):
            continue
        reason = (
            "symlink"
            if entry.is_symlink
            else "submodule"
            if entry.is_submodule
            else "too_large"
            if entry.size > max_bytes
            else "empty"
            if entry.size == 0
            else None
        )
        if reason is not None:
            skipped[reason] = skipped.get(reason, 0) + 1
        else:
            chosen.append(entry)
    chosen.sort(key=lambda e: e.path)
    if len(chosen) > MAX_DOCUMENTS:
        skipped["over_limit"] = len(chosen) - MAX_DOCUMENTS
        chosen = chosen[:MAX_DOCUMENTS]
    return chosen, skipped


async def ingest_documents_async(
    settings: Settings,
    gateway: Gateway,
    ontology: Ontology,
    *,
    git: Git,
    repo: str,
    commit: str,
    globs: Sequence[str] | None = None,
    progress: Progress | None = None,
    llm: LLMClient | None = None,
    embedder: EmbedderClient | None = None,
) -> IngestSummary:
    """Ingest the documents of ``repo`` at ``commit`` (see the module docstring)."""
    started = time.monotonic()
    report = progress or (lambda phase, counters: None)
    summary = IngestSummary(repo=repo, commit=commit)
    entries, summary.skipped = await asyncio.to_thread(
        select_documents,
        git,
        commit,
        list(globs or settings.knowledge_document_globs),
        max_bytes=settings.knowledge_max_document_bytes,
    )
    summary.selected = len(entries)
    report("selected", {"documents": len(entries), "skipped": sum(summary.skipped.values())})
    if not entries:
        report("done", {"documents": 0, "failed": 0})
        return summary
    async with open_graph(settings, gateway, ontology, llm=llm, embedder=embedder) as graph:
        for done, entry in enumerate(entries, start=1):
            try:
                doc = read_document(
                    entry.path,
                    (await asyncio.to_thread(git.blobs, [entry.blob]))[entry.blob],
                    fallback_time=partial(last_change_time, git, commit, entry.path),
                )
                summary.outcomes.append(await graph.ingest(repo, doc, commit=commit))
            except StrataError as exc:
                if exc.retryable:
                    raise
                summary.failed.append({"path": entry.path, **exc.to_dict()})
            report(
                "ingesting",
                {
                    "done": done,
                    "documents": len(entries),
                    "failed": len(summary.failed),
                    "current": entry.path,
                    **summary.tokens,
                },
            )
    summary.seconds = time.monotonic() - started
    report("done", {"documents": len(entries), "failed": len(summary.failed), **summary.tokens})
    return summary


def ingest_documents(
    settings: Settings,
    gateway: Gateway,
    ontology: Ontology,
    *,
    git: Git,
    repo: str,
    commit: str,
    globs: Sequence[str] | None = None,
    progress: Progress | None = None,
    llm: LLMClient | None = None,
    embedder: EmbedderClient | None = None,
) -> IngestSummary:
    """Blocking form of :func:`ingest_documents_async`, in its own event loop."""
    return asyncio.run(
        ingest_documents_async(
            settings,
            gateway,
            ontology,
            git=git,
            repo=repo,
            commit=commit,
            globs=globs,
            progress=progress,
            llm=llm,
            embedder=embedder,
        )
    )
