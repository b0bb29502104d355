"""How ``symbols`` is asked for: a name, a qualified name, or a path prefix."""

from __future__ import annotations

import strawberry

from strata.errors import ValidationError


@strawberry.input(description="Filter for symbols: a name (or qualified name) or a path prefix.")
class SymbolFilter:
    name: str | None = None
    qualified_name: str | None = None
    repository: str | None = None
    ref: str | None = None
    path: str | None = None
    kind: str | None = None
    name_contains: str | None = strawberry.field(
        default=None, description="Case-insensitive part of the name (strata.search.lookup)."
    )
    qualified_name_suffix: str | None = strawberry.field(
        default=None, description="Case-insensitive end of the qualified name."
    )

    def fuzzy(self) -> bool:
        """Whether the cheap, case-insensitive lookup answers this filter."""
        return self.name_contains is not None or self.qualified_name_suffix is not None

    def require_selective(self) -> None:
        """Refuse a filter that would scan every symbol."""
        if not (
            self.fuzzy() or self.name or self.qualified_name or (self.path and self.repository)
        ):
            raise ValidationError(
                "give filter.name, filter.qualifiedName, filter.nameContains, "
                "filter.qualifiedNameSuffix, or filter.path with filter.repository"
            )
