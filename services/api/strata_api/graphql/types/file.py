"""A source file as of some moment."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import strawberry


@strawberry.type(description="A source file as of some moment.")
class File:
    id: strawberry.ID
    repository: str
    ref: str
    path: str
    language: str | None
    lines: int | None
    module: str | None
    parse_errors: bool
    is_test: bool
    frameworks: list[str]
    commit: str | None
    valid_at: datetime

    @classmethod
    def from_domain(
        cls,
        key: str,
        repository: str,
        ref: str,
        node: Mapping[str, Any],
        state: Mapping[str, Any],
    ) -> File:
        """From the File node and its state fact as ``CodeReads.file`` returns them."""
        return cls(
            id=strawberry.ID(key),
            repository=repository,
            ref=ref,
            path=node["path"],
            language=state.get("language"),
            lines=state.get("lines"),
            module=state.get("module"),
            parse_errors=bool(state.get("parse_errors")),
            is_test=bool(state.get("is_test")),
            frameworks=list(state.get("frameworks") or []),
            commit=state.get("source_commit"),
            valid_at=state["valid_at"],
        )
