"""Why a tool's answer is empty, in the MCP tools: the core's explanation as a tool error.

The same rule as the GraphQL API (:mod:`strata.graph.absence` decides, after an
empty read only): a malformed id, an unknown (or unreadable) repository, an
unknown entity and a moment before the indexed history are tool errors whose
text starts with the code (``VALIDATION_ERROR``, ``NOT_FOUND``,
``BEFORE_HISTORY: ... (first indexed ...)``); a true "none" stays an empty list;
the one-thing tools (``symbol``, ``requirement``) answer ``found: false`` with
the ``reason``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from strata.errors import StrataError
from strata.graph.absence import BeforeHistory, check_key, explain
from strata.graph.gateway import Gateway
from strata.ontology.model import Ontology
from strata.temporal import AsOf
from strata_api.graphql.errors import client_view

# Calls start and end at symbols, and at files for module-level code.
CALL_ENDS = ("Symbol", "File")


def tool_error(exc: StrataError, expose: bool) -> ToolError:
    """A StrataError as the tool error a client sees: ``CODE: message (hint: ...)``."""
    message, extensions = client_view(exc, expose_internal=expose)
    hint = f" (hint: {extensions['hint']})" if extensions.get("hint") else ""
    return ToolError(f"{extensions['code']}: {message}{hint}")


@dataclass(frozen=True)
class Absence:
    """Explains empty answers for one server (its gateway, ontology and read runner)."""

    gateway: Gateway
    ontology: Ontology
    run: Callable[..., Awaitable[Any]]
    timeout: float
    expose: bool

    def key(self, key: str, labels: str | tuple[str, ...] = CALL_ENDS) -> tuple[str, str]:
        """(repository, label) of a well-formed id; a VALIDATION_ERROR tool error otherwise."""
        try:
            return check_key(self.ontology, labels, key)
        except StrataError as exc:
            raise tool_error(exc, self.expose) from None

    async def reason(
        self,
        repo: str,
        as_of: AsOf | None = None,
        *,
        label: str = "Symbol",
        key: str | None = None,
        readable: bool = True,
    ) -> StrataError | None:
        """Why a read of ``repo`` (entity ``key``) found nothing; None: it is a true none."""
        result: StrataError | None = await self.run(
            explain,
            self.gateway,
            repo,
            as_of or AsOf.at(),
            label=label,
            key=key,
            readable=readable,
            timeout=self.timeout,
        )
        return result

    async def refuse_before_history(self, repo: str, as_of: AsOf) -> None:
        """Raise BEFORE_HISTORY when ``as_of`` is before the repository's history."""
        reason = await self.reason(repo, as_of)
        if isinstance(reason, BeforeHistory):
            raise tool_error(reason, self.expose)

    async def refuse(self, repo: str, as_of: AsOf | None = None, **what: Any) -> None:
        """Raise the reason as a tool error, if the empty answer has one."""
        reason = await self.reason(repo, as_of, **what)
        if reason is not None:
            raise tool_error(reason, self.expose)
