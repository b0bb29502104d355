"""A page of callers (or callees) that says whether it was cut and how many there are."""

from __future__ import annotations

import strawberry

from strata.code.reads import MAX_FIRST, CallList
from strata.errors import ValidationError
from strata_api.graphql.arguments import decode_cursor, encode_cursor
from strata_api.graphql.cost import WITHIN_PAGE
from strata_api.graphql.types.call import CallEdge, UnresolvedCalls
from strata_api.graphql.types.page_info import PageInfo

_OFFSET = "offset:"


def page_offset(after: str | None) -> int:
    """The position a cursor of :func:`page_cursor` stands for (0 for none)."""
    if not after:
        return 0
    raw = decode_cursor(after)
    number = raw.removeprefix(_OFFSET)
    if not raw.startswith(_OFFSET) or not number.isdigit() or int(number) > MAX_FIRST:
        raise ValidationError("`after` is not a cursor returned by callersPage/calleesPage")
    return int(number)


def page_cursor(offset: int) -> str:
    """The opaque cursor of the row at ``offset`` (the walk's order is stable)."""
    return encode_cursor(f"{_OFFSET}{offset}")


@strawberry.type(
    description="A page of a callers/callees walk, nearest first (depth, confidence, id). "
    f"The walk stops at {MAX_FIRST} symbols: totalCount is then a floor (totalCapped)."
)
class CallPage:
    nodes: list[CallEdge] = strawberry.field(metadata={WITHIN_PAGE: True})
    page_info: PageInfo
    total_count: int = strawberry.field(description="Symbols the walk found, all pages.")
    total_capped: bool = strawberry.field(
        description=f"The walk stopped at {MAX_FIRST}: there may be more than totalCount."
    )
    unresolved: UnresolvedCalls | None = strawberry.field(
        description="callees: the calls inside the symbol the resolver could not link; "
        "null for callers (ask impact for the unresolved call sites named like it)."
    )

    @classmethod
    def from_domain(cls, found: CallList, offset: int, first: int) -> CallPage:
        """Rows ``offset .. offset + first`` of the whole walk ``found``."""
        rows = list(found)[offset : offset + first]
        end = offset + len(rows)
        return cls(
            nodes=[CallEdge.from_domain(h) for h in rows],
            page_info=PageInfo(
                has_next_page=end < len(found),
                end_cursor=page_cursor(end) if rows else None,
            ),
            total_count=found.total,
            total_capped=found.total >= MAX_FIRST,
            unresolved=UnresolvedCalls.from_domain(found.unresolved) if found.unresolved else None,
        )
