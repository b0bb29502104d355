"""Who is calling the MCP server: the API's keys, scopes and repositories, reused.

Over Streamable HTTP every request carries ``Authorization: Bearer <key>``;
:class:`BearerGate` answers 401 before the MCP layer runs when it is missing or
wrong, and each tool call resolves the principal from the same header (the
authenticator caches key records). Over stdio the key comes from
``STRATA_API_KEY`` in the server's environment. Either way the key is checked by
the API's :class:`strata_api.auth.Authenticator`, not by a copy of it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread

from strata.errors import Unauthorized
from strata.security import Principal
from strata_api.auth import Authenticator

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# JSON-RPC leaves -32000..-32099 to servers; the MCP SDK's own errors stay below.
UNAUTHORIZED_CODE = -32001


class Access:
    """Resolves the principal of a tool call for one transport."""

    def __init__(self, authenticator: Authenticator, *, env_key: str | None) -> None:
        self._authenticator = authenticator
        self._env_header = f"Bearer {env_key}" if env_key else None

    async def principal(self, headers: Any) -> Principal:
        """The caller; :class:`Unauthorized` without a valid key."""
        header = _authorization(headers) if headers is not None else self._env_header
        if header is None and headers is None:
            raise Unauthorized(
                "no API key: set STRATA_API_KEY in the MCP server's environment",
                hint="create one with `strata key create --scopes read --repos NAME`",
            )
        principal: Principal = await anyio.to_thread.run_sync(
            self._authenticator.authenticate, header
        )
        return principal


def _authorization(headers: Any) -> str | None:
    value = headers.get("authorization") if hasattr(headers, "get") else None
    return str(value) if value else None


class BearerGate:
    """ASGI middleware: HTTP requests without a valid bearer key get 401 (JSON)."""

    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self._app = app
        self._authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        header = None
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                header = value.decode("latin-1")
        try:
            await anyio.to_thread.run_sync(self._authenticator.authenticate, header)
        except Unauthorized as exc:
            # A JSON-RPC error body (id null: the request was not read), so MCP clients
            # show this message instead of a bare status.
            hint = f" (hint: {exc.hint})" if exc.hint else ""
            body = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {
                        "code": UNAUTHORIZED_CODE,
                        "message": f"UNAUTHORIZED: {exc.message}{hint}",
                        "data": {"code": "UNAUTHORIZED", "hint": exc.hint},
                    },
                }
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="strata"'),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self._app(scope, receive, send)
