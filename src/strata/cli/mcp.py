"""`strata mcp`: run the MCP server (stdio for a local agent, Streamable HTTP for many)."""

from __future__ import annotations

import os
from enum import StrEnum

import typer

from strata.cli.console import settings
from strata.errors import ConfigError


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def mcp(
    transport: Transport = typer.Option(Transport.stdio, help="stdio or http (Streamable HTTP)."),
    host: str = typer.Option("127.0.0.1", help="HTTP: the address to listen on."),
    port: int = typer.Option(8765, min=1, max=65535, help="HTTP: the port to listen on."),
) -> None:
    """Serve search, symbol, callers, callees, impact, history and changes over MCP.

    stdio reads the API key from STRATA_API_KEY; HTTP clients send
    `Authorization: Bearer <key>`. Keys and scopes are the GraphQL API's.
    """
    try:
        from strata_mcp.server import serve
    except ImportError as exc:  # the service package is not on the path
        raise ConfigError(
            f"the MCP server is not installed: {exc}", hint="install the [api] extra"
        ) from exc
    serve(
        settings(),
        transport="http" if transport == Transport.http else "stdio",
        host=host,
        port=port,
        env_key=os.environ.get("STRATA_API_KEY") or None,
    )
