"""The bitemporal model as small pure functions.

A *slot* is one fact that can change over time: the attribute state of one
node, or one edge (type, from, to). Its *versions* carry the four times:

- ``valid_at`` / ``invalid_at``: when the content was true in the world
  (``invalid_at`` None: still true);
- ``created_at`` / ``expired_at``: when Strata recorded / stopped believing
  the version (``expired_at`` None: current belief).

At any known time K the versions with ``created_at <= K < expired_at`` never
overlap in valid time, so "what did Strata believe at K about V" has one
answer. Every change (assert, invalidate, correct) is planned by
:func:`plan_set`: overlapping current versions are expired at the transaction
time and their untouched parts re-created, then the new content is recorded
over its interval. Nothing is overwritten or deleted; the only mutation ever
made to a stored version is setting its ``expired_at`` once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal

from strata.errors import TemporalError

Change = Literal["assert", "invalidate", "correct"]

TIME_FIELDS = ("valid_at", "invalid_at", "created_at", "expired_at", "invalidated_at")


def aware(value: datetime, *, what: str = "time") -> datetime:
    """Return ``value`` in UTC; refuse naive datetimes (their zone is a guess)."""
    if value.__class__ is datetime and value.tzinfo is UTC:
        return value  # already UTC (most times Strata handles): nothing to convert
    if not isinstance(value, datetime):
        raise TemporalError(f"{what} must be a datetime, got {type(value).__name__}", what=what)
    if value.tzinfo is None or value.utcoffset() is None:
        raise TemporalError(
            f"{what} is a naive datetime ({value.isoformat()}); give a timezone",
            hint="use datetime.now(UTC) or an ISO string with an offset",
            what=what,
        )
    return value.astimezone(UTC)


def now() -> datetime:
    return datetime.now(UTC)


def native(value: Any) -> Any:
    """A value read from Neo4j as plain Python; datetimes in UTC with a fixed offset.

    Neo4j orders two DateTimes of the same instant but different zone kinds
    (``Z`` offset vs. ``[UTC]`` zone id) as unequal, so every datetime Strata
    writes or compares must carry the same ``timezone.utc`` offset.
    """
    to_native = getattr(value, "to_native", None)
    value = to_native() if callable(to_native) else value
    return utc_values(value)


def decode_fact(props: Mapping[str, Any]) -> dict[str, Any]:
    """A fact read through :func:`fact_projection` as plain Python values."""
    out: dict[str, Any] = {}
    for key, value in props.items():
        if key in TIME_FIELDS:
            out[key] = from_wire(value) if isinstance(value, str) else native(value)
        else:
            out[key] = native(value)
    return out


# Values utc_values passes through as they are (checked by exact type: the common case).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def utc_values(value: Any) -> Any:
    """Normalise datetimes (also inside lists) to ``timezone.utc``."""
    if value.__class__ in _PLAIN:
        return value
    if isinstance(value, datetime):
        return aware(value)
    if isinstance(value, list | tuple):
        return [utc_values(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class AsOf:
    """A read position on both axes; defaults to now, now."""

    valid_at: datetime
    known_at: datetime

    @classmethod
    def at(cls, valid_at: datetime | None = None, known_at: datetime | None = None) -> AsOf:
        current = now()
        return cls(
            valid_at=aware(valid_at, what="valid_at") if valid_at is not None else current,
            known_at=aware(known_at, what="known_at") if known_at is not None else current,
        )

    def params(self) -> dict[str, str]:
        """Query parameters for :func:`as_of_predicate` (times on the wire as strings)."""
        return {"valid_at": to_wire(self.valid_at), "known_at": to_wire(self.known_at)}


def to_wire(value: datetime) -> str:
    """A time as Strata sends it to Neo4j: ISO 8601 in UTC with ``Z``.

    The driver's datetime codec spends ~40 µs per value (measured with the
    Rust extension); Cypher's ``datetime()`` parses this string in about a
    microsecond, and every time Strata stores goes through here, so all carry
    the same zone kind. A batch repeats a few times (its valid time, its
    transaction time) on every row, so the strings are cached.
    """
    if not isinstance(value, datetime):
        aware(value)  # raises the typed error for a non-datetime
    return _wire(value)


@lru_cache(maxsize=4096)
def _wire(value: datetime) -> str:
    # Equal instants in other zones share an entry: their UTC strings are equal too.
    return aware(value).isoformat().replace("+00:00", "Z")


def from_wire(value: str) -> datetime:
    """Parse a time returned by :func:`fact_projection` (or written by :func:`to_wire`)."""
    return aware(datetime.fromisoformat(value))


def _checked_var(var: str) -> str:
    if not var.isidentifier():
        raise ValueError(f"not a Cypher variable: {var!r}")
    return var


def as_of_predicate(var: str) -> str:
    """The one as-of filter every read uses, for relationship variable ``var``.

    ``valid_at <= $valid_at < invalid_at`` and ``created_at <= $known_at <
    expired_at``, open ends (null) as +infinity; a valid-time end closed in
    place counts only from its ``invalidated_at`` on. The parameters are wire
    strings (:meth:`AsOf.params`).
    """
    v = _checked_var(var)
    return (
        f"{v}.valid_at <= datetime($valid_at)"
        f" AND ({v}.invalid_at IS NULL OR {v}.invalid_at > datetime($valid_at)"
        f" OR {v}.invalidated_at > datetime($known_at))"
        f" AND {v}.created_at <= datetime($known_at)"
        f" AND ({v}.expired_at IS NULL OR {v}.expired_at > datetime($known_at))"
    )


def fact_projection(var: str) -> str:
    """Every property of a fact, with its four times as wire strings (cheap to decode)."""
    v = _checked_var(var)
    times = ", ".join(f"{t}: toString({v}.{t})" for t in TIME_FIELDS)
    return f"{v}{{.*, {times}}}"


def current_predicate(var: str) -> str:
    """Current belief about the present: the cheapest filter, for 'now, now' reads."""
    v = _checked_var(var)
    return f"{v}.expired_at IS NULL AND {v}.invalid_at IS NULL"


def content_hash(props: Mapping[str, Any]) -> str:
    """A stable hash of a fact's content (bookkeeping excluded by the caller)."""
    canonical = _CANONICAL.encode({k: v for k, v in props.items() if v is not None})
    return hashlib.blake2b(canonical.encode(), digest_size=12).hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return aware(value).isoformat()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"cannot hash {type(value).__name__}")


# Sorted keys, no spaces: the stored hashes depend on this exact text. One encoder for
# every call (json.dumps with these options builds a new one each time); content is
# plain data, so the circular-reference check is left out.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, default=_json_default, separators=(",", ":"), check_circular=False
)


@dataclass(frozen=True, slots=True)
class Version:
    """One recorded version of a slot.

    ``ref`` is the stored record's id, or None for a version planned in this
    transaction. A planned version either carries its content and source in
    ``payload``, or, when it is the untouched remainder of a stored version,
    names that record in ``copy_of`` so the store copies it server-side.

    ``invalidated_at`` is the transaction time at which an open-ended version
    was closed in place (its ``invalid_at`` set once, from null): before that
    known time the version still reads as open-ended.
    """

    hash: str
    valid_at: datetime
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None = None
    invalidated_at: datetime | None = None
    ref: str | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)
    copy_of: str | None = None

    def covers(self, start: datetime, end: datetime | None) -> bool:
        """True if [start, end) lies inside this version's valid interval."""
        if self.valid_at > start:
            return False
        if self.invalid_at is None:
            return True
        return end is not None and self.invalid_at >= end

    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        """True if this version's valid interval meets [start, end)."""
        before_end = end is None or self.valid_at < end
        after_start = self.invalid_at is None or self.invalid_at > start
        return before_end and after_start

    def visible(self, valid_at: datetime, known_at: datetime) -> bool:
        """The as-of predicate, in Python (the same rule as :func:`as_of_predicate`)."""
        ended = (
            self.invalid_at is not None
            and self.invalid_at <= valid_at
            and (self.invalidated_at is None or self.invalidated_at <= known_at)
        )
        return (
            self.valid_at <= valid_at
            and not ended
            and self.created_at <= known_at
            and (self.expired_at is None or self.expired_at > known_at)
        )


@dataclass(slots=True)
class Plan:
    """What one slot's changes do to the store.

    ``expire``: stored versions to expire; ``close``: stored open-ended versions
    whose valid time is closed in place; ``create``: new versions.
    """

    expire: list[Version] = field(default_factory=list)
    close: list[Version] = field(default_factory=list)
    create: list[Version] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.expire and not self.close and not self.create

    def size(self) -> tuple[int, int, int]:
        return len(self.expire), len(self.close), len(self.create)


def plan_set(
    current: Sequence[Version],
    *,
    content: str | None,
    payload: Mapping[str, Any] | None,
    start: datetime,
    end: datetime | None,
    tx: datetime,
    plan: Plan | None = None,
) -> tuple[list[Version], Plan]:
    """Make the slot hold ``content`` (a hash; None: nothing) over [start, end).

    ``current`` are the slot's current versions (``expired_at`` None), stored or
    planned earlier in the same transaction. Returns the new current versions
    and the plan, extended in place when one is passed (for several changes to
    one slot in one transaction). Asserting content that a current version
    already holds over the whole interval changes nothing.

    The common change, a new value from ``start`` on, closes the open-ended
    version in place (``invalid_at`` and ``invalidated_at`` set once). Every
    other overlap expires the stored version and re-creates its untouched parts.
    """
    start = aware(start, what="valid_at")
    end = aware(end, what="invalid_at") if end is not None else None
    tx = aware(tx, what="transaction time")
    if end is not None and end <= start:
        raise TemporalError(
            f"empty valid interval: invalid_at {end.isoformat()} is not after "
            f"valid_at {start.isoformat()}",
            valid_at=start,
            invalid_at=end,
        )
    plan = plan if plan is not None else Plan()
    if content is not None and any(v.hash == content and v.covers(start, end) for v in current):
        return list(current), plan
    overlapping = [v for v in current if v.overlaps(start, end)]
    if content is None and not overlapping:
        return list(current), plan
    kept = [v for v in current if not v.overlaps(start, end)]
    for old in overlapping:
        _check_order(old, tx)
        closed_now = next((c for c in plan.close if c.ref == old.ref), None)
        if closed_now is not None:
            plan.close.remove(closed_now)
        if (
            old.ref is not None
            and closed_now is None
            and old.invalid_at is None
            and old.invalidated_at is None
            and old.valid_at < start
            and end is None
        ):
            closed = replace(old, invalid_at=start, invalidated_at=tx)
            plan.close.append(closed)
            kept.append(closed)
            continue
        if old.ref is None:
            # Planned in this transaction and never visible: drop, don't store.
            plan.create.remove(old)
        else:
            plan.expire.append(replace(old, expired_at=tx))
        if old.valid_at < start:
            left = _remainder(old, old.valid_at, start, tx)
            plan.create.append(left)
            kept.append(left)
        if end is not None and (old.invalid_at is None or old.invalid_at > end):
            right = _remainder(old, end, old.invalid_at, tx)
            plan.create.append(right)
            kept.append(right)
    if content is not None:
        new = Version(
            hash=content,
            valid_at=start,
            invalid_at=end,
            created_at=tx,
            payload=dict(payload or {}),
        )
        plan.create.append(new)
        kept.append(new)
    kept.sort(key=lambda v: v.valid_at)
    return kept, plan


def _remainder(old: Version, start: datetime, end: datetime | None, tx: datetime) -> Version:
    """An untouched part of ``old``, re-created at ``tx`` (copied from the stored record)."""
    return replace(
        old,
        valid_at=start,
        invalid_at=end,
        created_at=tx,
        invalidated_at=None,
        ref=None,
        copy_of=old.ref if old.ref is not None else old.copy_of,
    )


def _check_order(old: Version, tx: datetime) -> None:
    latest = max(old.created_at, old.invalidated_at or old.created_at)
    if latest > tx:
        raise TemporalError(
            f"transaction time {tx.isoformat()} is before the record it would change "
            f"(recorded {latest.isoformat()})",
            hint="transaction times must not go backwards",
        )
