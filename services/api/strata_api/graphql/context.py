"""The typed per-request context handed to every resolver."""

from __future__ import annotations

from dataclasses import dataclass

from strawberry.fastapi import BaseContext

from strata.graph.gateway import Gateway
from strata.settings import Settings


@dataclass
class Context(BaseContext):
    settings: Settings
    gateway: Gateway
