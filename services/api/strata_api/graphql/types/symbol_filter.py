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

    def require_selective(self) -> None:
        """Refuse a filter that would scan every symbol."""
        if not (self.name or self.qualified_name or (self.path and self.repository)):
            raise ValidationError(
                "give filter.name, filter.qualifiedName, or filter.path with filter.repository"
            )
