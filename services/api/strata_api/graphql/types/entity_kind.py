"""The kinds of entity whose history can be read."""

from __future__ import annotations

from enum import Enum

import strawberry


@strawberry.enum(description="Entity kinds whose history can be read.")
class EntityKind(Enum):
    SYMBOL = "Symbol"
    FILE = "File"
    PACKAGE = "Package"
    BRANCH = "Branch"
    COMMIT = "Commit"
    REPOSITORY = "Repository"
    REQUIREMENT = "Requirement"
    DECISION = "Decision"
    DOCUMENT = "Document"
