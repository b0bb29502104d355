"""Where an index daemon listens, and what goes over its socket.

One daemon per settings and code: its socket's name is a digest of every
setting (secrets included, so a changed password is a new daemon) and of the
``strata`` sources and ontology files it would run with (a changed checkout
never answers with the old code). Sockets live in a folder only this user can
enter: ``$XDG_RUNTIME_DIR/strata``, else ``<tmp>/strata-<uid>``.

Messages are JSON lines. The client sends one request (``index``, ``status`` or
``stop``); for ``index`` the daemon answers with any number of ``progress``
lines, then one ``results`` or ``error`` line.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from strata import errors
from strata.errors import ConfigError, StrataError, ValidationError
from strata.settings import Settings

if TYPE_CHECKING:
    from strata.code.result import IndexResult, Progress
    from strata.code.service import CodeService

PACKAGE = Path(__file__).resolve().parents[1]  # the strata package the daemon would run
MAX_REQUEST_BYTES = 64 * 1024


class Stream(Protocol):
    """A socket's file: what messages are read from and written to."""

    def write(self, data: bytes, /) -> int: ...
    def flush(self) -> None: ...
    def readline(self, size: int | None = -1, /) -> bytes: ...
    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Address:
    """The files of one daemon: its socket, the lock its starters take, its info."""

    socket: Path
    lock: Path
    info: Path  # JSON: pid, key, var_dir, settings, started (written once it listens)

    @property
    def key(self) -> str:
        return self.socket.stem.removeprefix("indexd-")


@dataclass(frozen=True, slots=True)
class IndexRequest:
    """What ``strata index`` asks: the arguments of :meth:`CodeService.index_path`."""

    path: str  # absolute: the daemon's working folder is not the caller's
    repo: str
    ref: str
    rev: str = "HEAD"
    since: str | None = None  # ISO
    commits: int | None = None

    @property
    def slot(self) -> tuple[str, str]:
        """The repository and ref it writes (one code lock each)."""
        return self.repo, self.ref

    def to_message(self) -> dict[str, Any]:
        return {"op": "index", **asdict(self)}

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> IndexRequest:
        """The request in ``message``; ValidationError if a field is missing or mistyped."""
        text = ("path", "repo", "ref", "rev")
        if not all(isinstance(message.get(k), str) for k in text):
            raise ValidationError("index request: path, repo, ref and rev must be strings")
        since, commits = message.get("since"), message.get("commits")
        if since is not None and not isinstance(since, str):
            raise ValidationError("index request: since must be an ISO date or null")
        if commits is not None and (not isinstance(commits, int) or commits < 1):
            raise ValidationError("index request: commits must be a positive integer or null")
        if not Path(message["path"]).is_absolute():
            raise ValidationError("index request: path must be absolute")
        path, repo, ref, rev = (message[k] for k in text)
        return cls(path, repo, ref, rev, since=since, commits=commits)


def runtime_dir() -> Path:
    """The folder of the daemons' sockets, created private to this user."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and Path(base).is_dir():
        folder = Path(base) / "strata"
    else:
        folder = Path(tempfile.gettempdir()) / f"strata-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    info = folder.lstat()
    if folder.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ConfigError(
            f"{folder} is not a folder private to this user",
            hint="remove it (the index daemon keeps its sockets there), or set XDG_RUNTIME_DIR",
        )
    return folder


def address(settings: Settings) -> Address:
    """Where the daemon for ``settings`` and this checkout's code listens."""
    digest = hashlib.sha256(settings_hash(settings).encode())
    digest.update(code_fingerprint(settings.ontology_dir).encode())
    return address_of(digest.hexdigest()[:20])


def address_of(key: str) -> Address:
    """The daemon files named by ``key`` (what :func:`address` digests)."""
    if not key.isalnum():
        raise ValidationError(f"not a daemon key: {key!r}")
    folder = runtime_dir()
    return Address(
        socket=folder / f"indexd-{key}.sock",
        lock=folder / f"indexd-{key}.lock",
        info=folder / f"indexd-{key}.json",
    )


def settings_hash(settings: Settings) -> str:
    """A digest of every setting: secrets in the clear (never stored unhashed), and
    paths made absolute (a relative folder means another one in another folder)."""
    values = settings.model_dump(mode="json")
    for name in values:
        raw = getattr(settings, name)
        if hasattr(raw, "get_secret_value"):
            values[name] = raw.get_secret_value()
        elif isinstance(raw, Path):
            values[name] = str(raw.resolve())
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()


def index_with(
    service: CodeService, request: IndexRequest, progress: Progress | None
) -> list[IndexResult]:
    """Run ``request`` with ``service`` (in the daemon, or in the calling process)."""
    return service.index_path(
        Path(request.path),
        repo=request.repo,
        ref=request.ref,
        rev=request.rev,
        since=parse_since(request.since),
        commits=request.commits,
        progress=progress,
    )


def log_path(settings: Settings) -> Path:
    """Where the daemons of a data folder log (their stdout and stderr)."""
    return settings.var_dir / "log" / "indexd.log"


def parse_since(value: str | None) -> datetime | None:
    """``--since`` as an aware datetime (UTC when it names no zone)."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValidationError(f"--since must be an ISO date, got {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def code_fingerprint(ontology_dir: Path) -> str:
    """The name, size and modification time of every source and ontology file."""
    digest = hashlib.sha256()
    for root in (PACKAGE, ontology_dir):
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")):
                    continue
                path = os.path.join(folder, name)
                try:
                    stat = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def send(stream: Stream, message: dict[str, Any]) -> None:
    """One message, as one JSON line."""
    stream.write(json.dumps(message, default=str).encode() + b"\n")
    stream.flush()


def receive(stream: Stream, limit: int = -1) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream."""
    line = stream.readline(limit)
    if not line:
        return None
    if limit > 0 and len(line) >= limit and not line.endswith(b"\n"):
        raise ValidationError(f"message longer than {limit} bytes")
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise ValidationError(f"not a JSON message: {exc}") from exc
    if not isinstance(message, dict):
        raise ValidationError("a message must be a JSON object")
    return message


def error_message(exc: StrataError) -> dict[str, Any]:
    """The ``error`` line for ``exc``: its fields and its class's name."""
    return {"error": {**exc.to_dict(), "type": type(exc).__name__}}


def raise_error(error: dict[str, Any]) -> NoReturn:
    """Raise the StrataError an ``error`` line describes, as its own class when known."""
    cls = getattr(errors, str(error.get("type")), None)
    if not (isinstance(cls, type) and issubclass(cls, StrataError)):
        cls = StrataError
    details = error.get("details")
    raise cls(
        str(error.get("message", "the index daemon failed")),
        hint=error.get("hint"),
        **(details if isinstance(details, dict) else {}),
    )
