"""Reading the facts graphiti extracted from documents, as of a moment.

Search is Lucene full text over graphiti's ``edge_name_and_fact`` index (the
relation name and the fact sentence), restricted to the caller's partitions
and filtered by Strata's one as-of rule (:func:`strata.temporal.as_of_predicate`).

graphiti's edges carry the four times, with one difference in how a fact is
closed: graphiti closes an edge *in place*, setting ``invalid_at`` (valid time)
and ``expired_at`` (the transaction time it learned so) together, and keeps it
as history. That ``expired_at`` is what Strata calls ``invalidated_at``: the
closing counts from then on, and the record stays believed. The query maps the
edge to Strata's names before applying the rule; an edge whose ``valid_at`` the
model left empty is valid from its episode's reference time.

This module does not import graphiti-core: the API reads facts without the
``knowledge`` extra installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata.errors import ValidationError
from strata.graph import lucene
from strata.graph.gateway import Gateway
from strata.jobs import REPO_NAME_PATTERN
from strata.security import RepoSet
from strata.temporal import AsOf, as_of_predicate, native

MAX_TERMS = 32
MAX_CANDIDATES = 1000
MAX_GROUP_FILTER = 50
FACT_CHARS = 2000
NAME_CHARS = 300

SEARCH_FACTS = """
CALL db.index.fulltext.queryRelationships('edge_name_and_fact', $lucene, {{limit: $candidates}})
YIELD relationship AS r, score
WHERE type(r) = 'RELATES_TO' AND ($all_groups OR r.group_id IN $groups)
WITH r, score, {{
  valid_at: coalesce(r.valid_at, r.reference_time, r.created_at),
  invalid_at: r.invalid_at,
  created_at: r.created_at,
  expired_at: null,
  invalidated_at: r.expired_at
}} AS f
WHERE {as_of}
WITH r, score ORDER BY score DESC, r.uuid LIMIT $first
OPTIONAL MATCH (e:Episodic {{uuid: r.episodes[0]}})
RETURN r.uuid AS uuid, r.group_id AS group_id, r.name AS name,
       left(r.fact, $fact_chars) AS fact,
       left(startNode(r).name, $name_chars) AS source,
       left(endNode(r).name, $name_chars) AS target,
       coalesce(r.valid_at, r.reference_time) AS valid_at, r.invalid_at AS invalid_at,
       r.created_at AS created_at, r.expired_at AS expired_at,
       r.episodes[0] AS episode_uuid, e.name AS document_path, score
ORDER BY score DESC, uuid
"""


def group_id(repo: str) -> str:
    """graphiti's ``group_id`` for a repository (it allows only ``[A-Za-z0-9_-]``).

    Injective and reversible: ``_`` is doubled, then ``.`` becomes ``_d``
    (``my_lib.py`` -> ``my__lib_dpy``); names without either are unchanged.
    """
    if not re.match(REPO_NAME_PATTERN, repo):
        raise ValidationError(f"invalid repository name {repo!r}")
    return repo.replace("_", "__").replace(".", "_d")


def repo_of_group(group: str) -> str:
    """The repository a ``group_id`` stands for (inverse of :func:`group_id`)."""
    return re.sub(r"_(_|d)", lambda m: "_" if m.group(1) == "_" else ".", group)


@dataclass(frozen=True, slots=True)
class FactView:
    """One extracted fact with its four times and the document it came from."""

    uuid: str
    repo: str
    name: str
    fact: str
    source: str
    target: str
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    episode_uuid: str | None
    document_path: str | None
    score: float


def lucene_query(text: str, groups: list[str] | None) -> str:
    """Words of ``text`` as a Lucene OR query, narrowed to the partitions when few.

    The partition clause is only a pre-filter (the analyzer splits ``-``); the
    exact filter on ``group_id`` follows in Cypher.
    """
    words = re.findall(r"\w+", text)[:MAX_TERMS]
    if not words:
        raise ValidationError("`query` must contain at least one word")
    terms = lucene.any_of(words)
    if groups is not None and len(groups) <= MAX_GROUP_FILTER:
        scope = " OR ".join(lucene.phrase(g) for g in groups)
        return f"({terms}) AND group_id:({scope})"
    return f"({terms})"


def search_facts(
    gateway: Gateway,
    text: str,
    as_of: AsOf,
    *,
    readable: RepoSet,
    repository: str | None = None,
    first: int = 5,
    timeout: float | None = None,
) -> list[FactView]:
    """Facts matching ``text`` in the readable repositories (or one of them), as of a moment."""
    if repository is not None:
        if repository not in readable:
            return []
        groups: list[str] | None = [group_id(repository)]
    elif readable.all:
        groups = None
    else:
        groups = sorted(group_id(r) for r in readable.names)
        if not groups:
            return []
    query = SEARCH_FACTS.format(as_of=as_of_predicate("f"))
    rows = gateway.read(
        query,
        timeout=timeout,
        lucene=lucene_query(text, groups),
        candidates=min(MAX_CANDIDATES, max(100, first * 20)),
        all_groups=groups is None,
        groups=groups or [],
        first=first,
        fact_chars=FACT_CHARS,
        name_chars=NAME_CHARS,
        **as_of.params(),
    )
    return [_view(row) for row in rows]


def _view(row: dict[str, Any]) -> FactView:
    return FactView(
        uuid=str(row["uuid"]),
        repo=repo_of_group(str(row["group_id"])),
        name=str(row["name"] or ""),
        fact=str(row["fact"] or ""),
        source=str(row["source"] or ""),
        target=str(row["target"] or ""),
        valid_at=native(row["valid_at"]),
        invalid_at=native(row["invalid_at"]),
        created_at=native(row["created_at"]),
        expired_at=native(row["expired_at"]),
        episode_uuid=row["episode_uuid"],
        document_path=row["document_path"],
        score=float(row["score"]),
    )
