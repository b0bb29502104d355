"""Where an answer comes from: file, lines and commit."""

from __future__ import annotations

import strawberry


@strawberry.type(description="The source of a fact: file, line span and commit.")
class Evidence:
    path: str | None
    line_start: int | None
    line_end: int | None
    commit: str | None
