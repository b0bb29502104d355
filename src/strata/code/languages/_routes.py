"""HTTP entrypoint strings shared by the adapters: ``"http GET /users/{id}"``."""

from __future__ import annotations

from collections.abc import Iterable


def join_path(*parts: str) -> str:
    """Route parts joined with single slashes, always absolute; a trailing slash
    on the last non-empty part is kept (``/items/`` and ``/items`` differ)."""
    pieces = [p.strip().strip("/") for p in parts if p and p.strip()]
    path = "/" + "/".join(p for p in pieces if p)
    last = next((p.strip() for p in reversed(parts) if p and p.strip()), "")
    if last.endswith("/") and path != "/":
        path += "/"
    return path


def http(methods: Iterable[str], *parts: str) -> str:
    """``http <METHODS> <path>``: methods upper-case, comma-joined, ``ANY`` if none."""
    names = [m.upper() for m in methods if m]
    method = ",".join(dict.fromkeys(names)) or "ANY"
    return f"http {method} {join_path(*parts)}"
