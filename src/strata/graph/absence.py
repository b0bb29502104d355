"""Why a read found nothing: an unknown repository, a malformed or unknown id, a time
before the indexed history.

An empty answer must not look like "no callers" when the truth is "no such
symbol" or "you asked about a time before anything was indexed". The readers
(GraphQL, MCP, CLI) call :func:`check_key` before a read and :func:`explain`
after an empty one; both return or raise the same typed errors:

- :class:`~strata.errors.ValidationError`: the id is not shaped like an id of
  that kind (nothing is read);
- :class:`~strata.errors.NotFound`: the repository is not indexed (or not
  readable with the caller's key: one message for both, so a key cannot probe
  which repositories exist), or the entity has no version at that moment (the
  message says when it did have one);
- :class:`BeforeHistory`: the valid time is before the repository's first
  indexed commit, or the known time before Strata first recorded it (the error
  carries that first time).

:func:`explain` costs one round trip and runs only after an empty answer, so a
read that finds something pays nothing. :func:`cut_lists` is the other half of
"never hide what was not shown": which lists of an answer hold only a page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata.errors import NotFound, StrataError, ValidationError
from strata.graph.gateway import Gateway, checked_label
from strata.ontology.model import KEY_SEPARATOR, Ontology
from strata.temporal import AsOf, from_wire

# The repository's indexed span (its Branch facts) and one entity's versions, in one read.
SPAN = """
CALL {{
  MATCH (b:Branch) WHERE b.repo = $repo
  MATCH (b)-[st:STATE]->(b)
  RETURN toString(min(st.valid_at)) AS first_valid, toString(min(st.created_at)) AS first_known
}}
CALL {{
  OPTIONAL MATCH (n:{label} {{key: $key}})-[st:STATE]->(n)
  WHERE st.expired_at IS NULL OR st.expired_at > st.created_at
  RETURN count(st) AS versions, toString(min(st.valid_at)) AS since,
         sum(CASE WHEN st.invalid_at IS NULL THEN 1 ELSE 0 END) AS open,
         toString(max(st.invalid_at)) AS until
}}
RETURN first_valid, first_known, versions, since, open, until
"""

# What ids of each kind look like, for the error that refuses a malformed one.
ID_SHAPES = {
    "Symbol": "repo|ref|path|qualname",
    "File": "repo|ref|path",
    "Requirement": "repo|REQ-001",
    "Decision": "repo|ADR-0001",
}


class BeforeHistory(StrataError):
    """The read's time is before the repository's indexed history begins."""

    code = "before_history"
    http_status = 404


@dataclass(frozen=True, slots=True)
class Span:
    """A repository's indexed history and one entity's versions in it."""

    first_valid: datetime | None  # the first indexed commit's time (None: not indexed)
    first_known: datetime | None  # when Strata first recorded the repository
    versions: int  # the entity's state versions (current beliefs and superseded ones)
    since: datetime | None  # the entity's first valid time
    until: datetime | None  # its last invalid time, when no version is open

    @classmethod
    def of(cls, row: dict[str, Any]) -> Span:
        def when(value: str | None) -> datetime | None:
            return from_wire(value) if value else None

        return cls(
            first_valid=when(row["first_valid"]),
            first_known=when(row["first_known"]),
            versions=int(row["versions"]),
            since=when(row["since"]),
            until=None if row["open"] else when(row["until"]),
        )


def not_indexed(repo: str) -> NotFound:
    """The one answer for a repository that is unknown or that the key may not read."""
    return NotFound(
        f"repository {repo!r} is not indexed, or not readable with this key",
        hint="check the name; index it with `strata index` or a push to its webhook",
        repo=repo,
    )


def check_key(ontology: Ontology, labels: str | tuple[str, ...], key: str) -> tuple[str, str]:
    """(repository, label) of ``key`` once it has the shape of an id of one of ``labels``;
    a ValidationError otherwise.

    A stable key joins the node type's key fields with ``|`` (a ``|`` inside a
    field is escaped), so its shape is known without reading the graph.
    """
    kinds = (labels,) if isinstance(labels, str) else labels
    parts = key.split(KEY_SEPARATOR)
    for label in kinds:
        if len(parts) == len(ontology.node(label).key) and parts[0]:
            return parts[0].replace("%7C", "|").replace("%25", "%"), label
    shapes = " or ".join(ID_SHAPES.get(k, KEY_SEPARATOR.join(ontology.node(k).key)) for k in kinds)
    what = " or ".join(k.lower() for k in kinds)
    raise ValidationError(
        f"{key[:200]!r} is not a {what} id: ids look like {shapes}",
        hint="take ids from `search` or `symbols` answers",
        field="id",
    )


def before_history(repo: str, as_of: AsOf, span: Span) -> BeforeHistory | None:
    """BeforeHistory when ``as_of`` is earlier than the repository's indexed history."""
    if span.first_valid is not None and as_of.valid_at < span.first_valid:
        return BeforeHistory(
            f"{as_of.valid_at.isoformat()} is before the first indexed commit of {repo!r} "
            f"({span.first_valid.isoformat()})",
            hint="ask with a valid time at or after it, or index older history (--since)",
            first_indexed_at=span.first_valid.isoformat(),
            axis="valid",
        )
    if span.first_known is not None and as_of.known_at < span.first_known:
        return BeforeHistory(
            f"{as_of.known_at.isoformat()} is before Strata first recorded {repo!r} "
            f"({span.first_known.isoformat()})",
            hint="ask with a known time at or after it",
            first_indexed_at=span.first_known.isoformat(),
            axis="known",
        )
    return None


def explain(
    gateway: Gateway,
    repo: str,
    as_of: AsOf,
    *,
    label: str = "Symbol",
    key: str | None = None,
    readable: bool = True,
    timeout: float | None = None,
) -> StrataError | None:
    """Why a read of ``repo`` (and of entity ``key``, if given) as of ``as_of`` found nothing.

    None when nothing is wrong with the question (the entity exists then, or no
    entity was asked for and the repository's history covers the moment): the
    empty answer is the true answer. ``readable=False`` (the caller's key may
    not read ``repo``) answers :func:`not_indexed` without reading anything.
    """
    if not readable:
        return not_indexed(repo)
    text = SPAN.format(label=checked_label(label))
    rows = gateway.read(text, repo=repo, key=key or "", timeout=timeout)
    span = Span.of(rows[0])
    if span.first_valid is None:
        return not_indexed(repo)
    early = before_history(repo, as_of, span)
    if early is not None or key is None:
        return early
    what = label.lower()
    if span.versions == 0:
        return NotFound(
            f"no {what} {key!r} in {repo!r} at any time",
            hint="take ids from `search` or `symbols` answers (they look like "
            f"{ID_SHAPES.get(label, 'repo|...')})",
            repo=repo,
        )
    if span.since is not None and (
        as_of.valid_at < span.since or (span.until is not None and as_of.valid_at >= span.until)
    ):
        until = span.until.isoformat() if span.until else "now"
        return NotFound(
            f"no {what} {key!r} as of {as_of.valid_at.isoformat()}: it was valid from "
            f"{span.since.isoformat()} to {until}",
            hint="ask with an asOf inside that span, or see `history`",
            repo=repo,
        )
    return None


def cut_lists(lists: Mapping[str, Sized], first: int, *, total: int, cap: int) -> list[str]:
    """Which of ``lists`` (each read with one more than the ``first`` shown) were cut.

    ``total`` is how many the underlying walk found and ``cap`` where it stops:
    a walk that reached its cap may have left more behind, so its first list
    (the callers) counts as cut even when it fits the page.
    """
    cut = [name for name, items in lists.items() if len(items) > first]
    head = next(iter(lists), None)
    if head is not None and total >= cap and head not in cut:
        cut.insert(0, head)
    return cut
