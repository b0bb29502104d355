"""Job contracts shared by the API (which sends tasks by name) and the workers.

The API never imports worker code: it builds one of these payloads, and sends
``TASK_NAMES[...]`` with ``payload.model_dump(mode="json")`` to the layer's
queue. Workers validate the same model on receipt.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from strata.errors import ValidationError

Layer = Literal["code", "knowledge", "trace"]

PING: Final = "strata.ops.ping"


class Job(BaseModel):
    """Base of every task payload: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


J = TypeVar("J", bound=Job)


def parse_job(model: type[J], payload: Any) -> J:
    """Validate a task payload; a bad one is a ValidationError with a readable message."""
    try:
        return model.model_validate(payload)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(payload)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ValidationError(f"invalid {model.__name__}: {problems}") from None


class PingJob(Job):
    """Round trip through the queue; the worker echoes ``payload``."""

    payload: str = Field(default="ping", max_length=200)


# -- task names (stable strings; the API sends them by name) ---------------------------

CODE_REINDEX: Final = "strata.code.reindex"
TRACE_SETTLE: Final = "strata.trace.settle"
KNOWLEDGE_INGEST: Final = "strata.knowledge.ingest"

SHA_PATTERN = r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$"
REPO_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
ZERO_SHAS = frozenset({"0" * 40, "0" * 64})


class RepoJob(Job):
    """A job on one repository and ref; its id is also the Celery task id."""

    job_id: str = Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    repo: str = Field(pattern=REPO_NAME_PATTERN)
    ref: str = Field(min_length=1, max_length=255)


class ReindexJob(RepoJob):
    """Reindex ``repo`` at ``ref`` from ``before`` (None: full index) to ``after``."""

    after: str = Field(pattern=SHA_PATTERN)
    before: str | None = Field(default=None, pattern=SHA_PATTERN)
    delivery: str | None = Field(default=None, max_length=200)
    forced: bool = False


KNOWLEDGE_SYNC: Final = "strata.knowledge.sync"
KNOWLEDGE_CARDS: Final = "strata.knowledge.cards"  # after trace.settle: stale cards rebuilt
KNOWLEDGE_LINT: Final = "strata.knowledge.lint"  # scheduled (celery beat): strata lint per repo
KNOWLEDGE_EMBED: Final = "strata.knowledge.embed"  # after knowledge.sync: search vectors
MAX_CHANGED_SYMBOLS = 5000


class FollowUpJob(RepoJob):
    """After a reindex: sync requirements/decisions, then settle trace links, at ``commit``."""

    commit: str = Field(pattern=SHA_PATTERN)
    base: str | None = Field(default=None, pattern=SHA_PATTERN)
    changed_symbols: list[str] = Field(default_factory=list, max_length=MAX_CHANGED_SYMBOLS)


class LintJob(Job):
    """Lint one repository, or (``repo`` None: the scheduled run) every registered one."""

    repo: str | None = Field(default=None, pattern=REPO_NAME_PATTERN)
    ref: str = Field(default="main", min_length=1, max_length=255)


# -- knowledge: unstructured documents through graphiti (opt-in: it costs model calls) --

MAX_INGEST_PATHS = 50


class IngestJob(RepoJob):
    """Ingest the documents of ``repo`` at ``commit`` (``paths``: globs; empty: the settings')."""

    commit: str = Field(pattern=SHA_PATTERN)
    paths: list[Annotated[str, Field(min_length=1, max_length=300)]] = Field(
        default_factory=list, max_length=MAX_INGEST_PATHS
    )
