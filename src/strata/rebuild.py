"""Rebuild a repository's projection from git and its files.

Files are the truth and the graph is a projection: ``rebuild`` drops every
node Strata wrote for the repository (code, requirements, decisions; trace
links go with them) and replays the ref's history from the first commit the
graph had indexed, through the same writers a push uses. Current-state answers
come out identical (transaction times are new). Knowledge extracted by an LLM
from documents is kept: re-ingesting it costs model calls and is opt-in.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.graph.gateway import Gateway, checked_label
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeSync
from strata.ontology import Ontology
from strata.ontology.model import DERIVED_LABELS
from strata.trace.sync import TraceSync

BRANCH_HEADS = """
MATCH (b:Branch {key: $key})-[st:STATE]->(b)
WHERE st.expired_at IS NULL
RETURN st.head AS head
ORDER BY st.valid_at
"""

DROP = """
MATCH (n:{label})
WHERE n.repo = $repo
CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 2000 ROWS
"""


@dataclass(slots=True)
class RebuildResult:
    repo: str
    ref: str
    commits: list[str] = field(default_factory=list)
    dropped_labels: list[str] = field(default_factory=list)
    seconds: float = 0.0
    steps: list[dict[str, Any]] = field(default_factory=list)


def indexed_heads(gateway: Gateway, ontology: Ontology, repo: str, ref: str) -> list[str]:
    """The heads the graph recorded for a ref, oldest first (its index history)."""
    key = ontology.node("Branch").make_key({"repo": repo, "ref": ref})
    return [row["head"] for row in gateway.read(BRANCH_HEADS, key=key)]


def drop(gateway: Gateway, ontology: Ontology, repo: str) -> list[str]:
    """Delete what Strata wrote for the repository (not graphiti's knowledge), and the
    search documents derived from it (the next search or reindex writes them anew)."""
    labels = [n.label for n in ontology.nodes.values() if n.writer == "strata"]
    labels += list(DERIVED_LABELS)
    for label in labels:
        gateway.run_autocommit(DROP.format(label=checked_label(label)), repo=repo, timeout=3600)
    return labels


def rebuild(
    gateway: Gateway,
    ontology: Ontology,
    indexer: CodeIndexer,
    git: Git,
    *,
    repo: str,
    ref: str,
) -> RebuildResult:
    """Drop and replay: code, then requirements and decisions, then trace, commit by commit."""
    started = time.perf_counter()
    result = RebuildResult(repo=repo, ref=ref)
    heads = indexed_heads(gateway, ontology, repo, ref)
    head = git.resolve(ref if not heads else heads[-1])
    commits = [head]
    if heads:
        first = git.resolve(heads[0])
        history = git.history(head)
        commits = history[history.index(first) :] if first in history else [head]
    result.dropped_labels = drop(gateway, ontology, repo)
    store = FactStore(gateway, ontology)
    knowledge = KnowledgeSync(store, gateway)
    trace = TraceSync(store, gateway)
    previous: str | None = None
    for sha in commits:
        code = indexer.index(git, repo, ref, sha)
        known = knowledge.sync(git, repo, sha)
        links = trace.sync(git, repo, ref, sha, base=previous, changed_symbols=code.changed_symbols)
        result.steps.append(
            {
                "commit": sha,
                "code": code.mode,
                "requirements": known.requirements,
                "links": links.declared + links.proposed,
                "stale": links.stale,
            }
        )
        previous = sha
    result.commits = commits
    result.seconds = round(time.perf_counter() - started, 3)
    return result
