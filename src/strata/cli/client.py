"""The API's HTTP client and `strata graphql`'s work, without typer or rich.

An agent calls `strata graphql` in a loop, so this module imports only the
standard library (and the settings, only when no ``--url`` is given): the
command's quick path (:mod:`strata.cli.quick`) runs it without building the
typer CLI, and the typer command (:func:`strata.cli.api.graphql`) calls it too.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from strata.cli.answer import rows_of
from strata.cli.output import Format, note, print_compact, print_json, print_table
from strata.errors import ConfigError, EnvironmentProblem, StrataError, ValidationError


class ApiError(StrataError):
    """The API answered with errors."""

    code = "api_error"


def post(query: str, variables: dict[str, Any], *, url: str | None, api_key: str | None) -> Any:
    """One GraphQL request; the decoded JSON answer (HTTP errors become clear messages).

    The standard library's client, not httpx: importing httpx cost more than the
    whole round trip to a local API. It honours the same proxy variables
    (``HTTPS_PROXY``, ``NO_PROXY``, ...).
    """
    import http.client
    import urllib.error
    import urllib.request

    base = (url or default_base()).rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ValidationError(f"--url must be an http:// or https:// URL, not {base[:80]!r}")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    # http(s) only (checked above), so neither call can open a file: URL.
    request = urllib.request.Request(  # noqa: S310
        f"{base}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers=headers,
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            status, body = response.status, response.read()
    except urllib.error.HTTPError as exc:  # an answer all the same: its status and body
        status, body = exc.code, exc.read()
    except (OSError, ValueError, http.client.HTTPException) as exc:  # refused, timed out, ...
        reason = getattr(exc, "reason", exc)
        raise EnvironmentProblem(
            f"cannot reach the API at {base}: {reason}", hint="start it with `strata up`"
        ) from exc
    if status == 401:
        raise ApiError(
            "the API refused the credentials (401)",
            hint="set STRATA_API_KEY to a key from `strata key create`",
        )
    try:
        return json.loads(body)
    except ValueError as exc:
        text = body.decode(errors="replace")
        raise ApiError(f"the API answered {status}: {text[:300]}") from exc


# Settings.api_host / api_port and their defaults (tests/unit/cli/test_quick.py holds
# them equal): the one thing `strata graphql` needs of the settings, read without
# pydantic-settings, which cost more than the rest of the command.
API_HOST = ("STRATA_API_HOST", "127.0.0.1")
API_PORT = ("STRATA_API_PORT", 8000)


def default_base() -> str:
    """The local stack's API: ``STRATA_API_HOST`` and ``STRATA_API_PORT`` (read as the
    settings read them: names in any case) or their defaults."""
    import os

    env = {k.upper(): v for k, v in os.environ.items()}
    host = env.get(API_HOST[0], API_HOST[1])
    raw_port = env.get(API_PORT[0], str(API_PORT[1]))
    port = int(raw_port) if raw_port.strip().isdigit() else 0
    if not 1 <= port <= 65535:
        raise ConfigError(
            f"invalid settings: {API_PORT[0]} must be a port number, not {raw_port[:40]!r}",
            hint="check the STRATA_* environment variables",
        )
    return f"http://{host}:{port}"


def run_graphql(
    query: str, variables: str, fmt: Format, url: str | None, api_key: str | None
) -> int:
    """Send ``query`` (``variables``: a JSON object), print the answer as ``fmt``;
    the exit status (1 when the answer holds errors)."""
    try:
        parsed = json.loads(variables)
    except ValueError as exc:
        raise ValidationError(f"--variables is not JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ValidationError("--variables must be a JSON object")
    answer = post(query, parsed, url=url, api_key=api_key)
    if fmt is Format.json:
        print_json(answer)
    else:
        rows = rows_of(answer.get("data"))
        if fmt is Format.compact:
            print_compact(rows.rows)
        else:
            print_table(rows.headers, rows.rows, fold=rows.headers)
        for remark in rows.notes():
            note(remark)
        # Why an empty answer is empty (the API's extensions.reasons, shaped like errors).
        for reason in (answer.get("extensions") or {}).get("reasons") or []:
            note(error_line(reason))
        for error in answer.get("errors") or []:
            print(f"error: {error_line(error)}", file=sys.stderr)
    return 1 if answer.get("errors") else 0


def error_line(error: dict[str, Any]) -> str:
    """One GraphQL error (or reason) as `CODE at path: message (hint: ...)`."""
    extensions = error.get("extensions") or error  # a reason carries its code and hint itself
    where = ".".join(str(p) for p in error.get("path") or [])
    head = " ".join(p for p in (extensions.get("code"), f"at {where}" if where else "") if p)
    line = f"{head}: {error.get('message', '?')}" if head else str(error.get("message", error))
    return f"{line} (hint: {extensions['hint']})" if extensions.get("hint") else line
