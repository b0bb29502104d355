"""Request body caps for the paths that parse bodies (``/graphql``, ``/webhooks``).

The cap is enforced while reading, before the app sees a byte, so an oversized
body costs at most ``cap`` bytes of memory and gets 413.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """Read the body of matching paths up to a cap before the app sees it (else 413).

    ``limits`` maps path prefixes to byte caps; ``on_reject`` is told the path
    of every refused request (metrics).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: Sequence[tuple[str, int]],
        on_reject: Callable[[str], None] | None = None,
    ) -> None:
        self.app = app
        self.limits = tuple(limits)
        self.on_reject = on_reject

    def _cap(self, path: str) -> int | None:
        for prefix, cap in self.limits:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return cap
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        cap = self._cap(scope.get("path", "")) if scope["type"] == "http" else None
        if cap is None:
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > cap):
            await self._refuse(scope, send, cap)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                # Client went away before sending the body: nothing to serve.
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > cap:
                await self._refuse(scope, send, cap)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, send: Send, cap: int) -> None:
        if self.on_reject is not None:
            self.on_reject(scope.get("path", ""))
        payload = (
            b'{"errors":[{"message":"request body larger than '
            + str(cap).encode()
            + b' bytes","extensions":{"code":"PAYLOAD_TOO_LARGE"}}]}'
        )
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload})
