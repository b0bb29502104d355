"""Admin records in Neo4j: registered repositories and API keys.

These are bookkeeping nodes (``RepoRegistration``, ``ApiKey``), not ontology
facts: no layer writer touches them and they carry no bitemporal history.
Secrets never leave this module in clear except to verify a webhook: a
registration stores a hash of a GitLab token, or the encrypted HMAC secret of
the other providers (see :mod:`strata.security`); an API key stores only the
HMAC of its token.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any, Final, Literal, get_args
from urllib.parse import urlsplit

from strata.errors import NotFound, Unauthorized, ValidationError
from strata.git import branch_ref
from strata.graph.gateway import Gateway, Tx
from strata.jobs import REPO_NAME_PATTERN
from strata.security import (
    ALL_REPOS,
    Principal,
    Provider,
    Scope,
    ServerKeys,
    WebhookCredentials,
    api_key_id,
    decoy_credentials,
    new_api_key,
    parse_scopes,
)

PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)
HMAC_PROVIDERS: Final = frozenset({"github", "gitea", "bitbucket"})

_REPO_NAME = re.compile(REPO_NAME_PATTERN)
# https://host/x, ssh://git@host/x, git://host/x, or scp-like git@host:x. Never
# ext:: or file:: transports (git runs commands for ext::), never a leading dash.
_URL = re.compile(r"^(?:(?:https?|ssh|git)://[^\s]+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+)$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MIN_SECRET: Final = 16
MAX_SECRET: Final = 1024

GET_REPO = "MATCH (r:RepoRegistration {name: $name}) RETURN r {.*} AS r"
LIST_REPOS = "MATCH (r:RepoRegistration) RETURN r {.*} AS r ORDER BY r.name"
UPSERT_REPO = (
    "MERGE (r:RepoRegistration {name: $name}) "
    "ON CREATE SET r.created_at = $now "
    "SET r.url = $url, r.path = $path, r.default_branch = $default_branch, "
    "r.provider = $provider, r.secret_hash = $secret_hash, "
    "r.secret_ciphertext = $secret_ciphertext, r.updated_at = $now "
    "RETURN r {.*} AS r"
)
REMOVE_REPO = "MATCH (r:RepoRegistration {name: $name}) DELETE r RETURN count(*) AS n"

CREATE_KEY = (
    "CREATE (k:ApiKey {key_id: $key_id, name: $name, hash: $hash, scopes: $scopes, "
    "repos: $repos, created_at: $now, expires_at: $expires_at})"
)
GET_KEY = "MATCH (k:ApiKey {key_id: $key_id}) RETURN k {.*} AS k"
LIST_KEYS = "MATCH (k:ApiKey) RETURN k {.*} AS k ORDER BY k.created_at"
REVOKE_KEY = (
    "MATCH (k:ApiKey {key_id: $key_id}) SET k.revoked_at = coalesce(k.revoked_at, $now) "
    "RETURN k {.*} AS k"
)


def _now() -> datetime:
    return datetime.now(UTC)


def check_repo_name(name: str) -> str:
    if not _REPO_NAME.fullmatch(name):
        raise ValidationError(
            f"invalid repository name {name[:100]!r}",
            hint="letters, digits, '.', '_' and '-', starting with a letter or digit (≤ 100)",
            field="name",
        )
    return name


# -- repositories -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepoRegistration:
    """A registered repository, as shown to admins (never with its secret)."""

    name: str
    provider: Provider
    default_branch: str
    url: str | None
    path: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def webhook_path(self) -> str:
        return f"/webhooks/{self.provider}/{self.name}"

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> RepoRegistration:
        return cls(
            name=row["name"],
            provider=row["provider"],
            default_branch=row["default_branch"],
            url=row.get("url"),
            path=row.get("path"),
            created_at=datetime.fromisoformat(row["created_at"]),
            updated_at=datetime.fromisoformat(row["updated_at"]),
        )


def _check_secret(secret: str) -> str:
    if not MIN_SECRET <= len(secret) <= MAX_SECRET:
        raise ValidationError(
            f"webhook secret must be {MIN_SECRET}..{MAX_SECRET} characters",
            hint="generate one with `strata repo add --generate-secret`",
            field="secret",
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in secret):
        raise ValidationError("webhook secret contains control characters", field="secret")
    return secret


def check_clone_url(url: str) -> str:
    """A clone URL git will treat as a location, never as an option or a command.

    ``https``/``http``/``ssh``/``git`` URLs or scp-like ``user@host:path``; no
    control characters, and no part (user, host, port, path segment) that
    starts with ``-``: ``ssh://-oProxyCommand=...`` would reach ssh as an option.
    """
    if len(url) > 2000 or not _URL.fullmatch(url) or _CONTROL.search(url):
        raise ValidationError(
            "clone URL must be https://, http://, ssh://, git:// or user@host:path",
            field="url",
        )
    if "://" in url:
        parts = urlsplit(url)
        userinfo, _, hostport = parts.netloc.rpartition("@")
        pieces = [*userinfo.split(":"), *hostport.split(":"), *parts.path.split("/")]
    else:
        userinfo, _, rest = url.partition("@")
        host, _, path = rest.partition(":")
        pieces = [userinfo, host, *path.split("/")]
    if not pieces or any(p.startswith("-") for p in pieces) or not _host_of(url):
        raise ValidationError(
            "no part of a clone URL may start with '-', and it needs a host",
            hint="git would pass such a part to ssh or itself as an option",
            field="url",
        )
    return url


def _host_of(url: str) -> str:
    if "://" in url:
        return urlsplit(url).hostname or ""
    return url.partition("@")[2].partition(":")[0]


def check_branch_name(name: str) -> str:
    r"""A branch name (``main`` or ``refs/heads/main``) by git's check-ref-format rules.

    Returns the short name. Refused: a leading ``-`` (git would read an
    option: ``--upload-pack=...``), control characters, space and ``~^:?*[\``,
    ``..``, ``@{``, ``//``, a leading or trailing ``/`` or ``.``, components
    starting with ``.`` or ending with ``.lock``, the name ``@``.
    """
    short = name.removeprefix("refs/heads/")
    problem = _branch_problem(short)
    if problem:
        raise ValidationError(
            f"not a branch name: {name[:80]!r} ({problem})", field="default_branch"
        )
    return short


def _branch_problem(short: str) -> str | None:
    if not short or len(short) > 255:
        return "empty or longer than 255 characters"
    if short.startswith("-"):
        return "starts with '-'"
    if short == "@":
        return "is '@'"
    if _CONTROL.search(short) or re.search(r"[ ~^:?*\[\\]", short):
        return "contains a control character, space or one of ~^:?*[\\"
    if ".." in short or "@{" in short or "//" in short:
        return "contains '..', '@{' or '//'"
    if short.startswith("/") or short.endswith(("/", ".")):
        return "starts with '/' or ends with '/' or '.'"
    for component in short.split("/"):
        if component.startswith(".") or component.endswith(".lock"):
            return "a component starts with '.' or ends with '.lock'"
    return None


def _check_location(url: str | None, path: str | None) -> tuple[str | None, str | None]:
    if not url and not path:
        raise ValidationError("give a clone URL or a local path", field="url")
    if url is not None:
        check_clone_url(url)
    if path is not None:
        pure = PurePosixPath(path)
        if not pure.is_absolute() or "\x00" in path or ".." in pure.parts or len(path) > 4096:
            raise ValidationError("local path must be absolute, without '..'", field="path")
    return url or None, path or None


class RepoRegistry:
    """Registers repositories and hands out their webhook credentials."""

    def __init__(self, gateway: Gateway, keys: ServerKeys) -> None:
        self._gateway = gateway
        self._keys = keys

    def register(
        self,
        *,
        name: str,
        provider: str,
        secret: str,
        default_branch: str = "main",
        url: str | None = None,
        path: str | None = None,
        replace: bool = False,
        timeout: float | None = None,
    ) -> RepoRegistration:
        """Create (or with ``replace``, overwrite) a registration; input checked first."""
        check_repo_name(name)
        if provider not in PROVIDERS:
            raise ValidationError(
                f"unknown provider {provider!r}",
                hint=f"use {', '.join(PROVIDERS)}",
                field="provider",
            )
        default_branch = check_branch_name(default_branch)
        branch_ref(default_branch)
        url, path = _check_location(url, path)
        _check_secret(secret)
        if provider in HMAC_PROVIDERS:
            secret_hash, ciphertext = None, self._keys.encrypt(secret, context=name)
        else:
            secret_hash, ciphertext = self._keys.hash_webhook_token(secret), None
        params = {
            "name": name,
            "url": url,
            "path": path,
            "default_branch": default_branch,
            "provider": provider,
            "secret_hash": secret_hash,
            "secret_ciphertext": ciphertext,
            "now": _now().isoformat(),
        }

        def work(tx: Tx) -> dict[str, Any]:
            if not replace and tx.run_one(GET_REPO, name=name) is not None:
                raise ValidationError(
                    f"repository {name!r} is already registered",
                    hint="pass replace (`--replace`) to overwrite it",
                    repo=name,
                )
            row = tx.run_one(UPSERT_REPO, **params)
            assert row is not None
            return dict(row["r"])

        return RepoRegistration.from_row(self._gateway.write_tx(work, timeout=timeout))

    def get(self, name: str, *, timeout: float | None = None) -> RepoRegistration | None:
        row = self._row(name, timeout)
        return RepoRegistration.from_row(row) if row else None

    def _row(self, name: str, timeout: float | None) -> dict[str, Any] | None:
        if not _REPO_NAME.fullmatch(name):
            return None
        rows = self._gateway.read(GET_REPO, name=name, timeout=timeout)
        return dict(rows[0]["r"]) if rows else None

    def list_all(self, *, timeout: float | None = None) -> list[RepoRegistration]:
        return [
            RepoRegistration.from_row(row["r"])
            for row in self._gateway.read(LIST_REPOS, timeout=timeout)
        ]

    def remove(self, name: str) -> None:
        check_repo_name(name)
        rows = self._gateway.write(REMOVE_REPO, name=name)
        if not rows or rows[0]["n"] == 0:
            raise NotFound(f"repository {name!r} is not registered", repo=name)

    def credentials(
        self, name: str, provider: Provider, *, timeout: float | None = None
    ) -> WebhookCredentials:
        """The credentials for ``name`` delivered by ``provider``.

        An unknown repository, or one registered for another provider, gets
        decoy credentials that never verify (see :func:`decoy_credentials`).
        """
        row = self._row(name, timeout)
        if row is None or row.get("provider") != provider:
            return decoy_credentials(self._keys, provider)
        secret = None
        if row.get("secret_ciphertext"):
            secret = self._keys.decrypt(row["secret_ciphertext"], context=name)
        return WebhookCredentials(
            repo=name,
            provider=provider,
            default_branch=row.get("default_branch") or "",
            _secret=secret,
            _token_hash=row.get("secret_hash"),
            _keys=self._keys,
        )


# -- API keys ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    """A stored API key (its token is never stored, only a keyed hash of it)."""

    key_id: str
    name: str
    scopes: frozenset[Scope]
    repos: frozenset[str]
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    hash: str = field(default="", repr=False)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ApiKeyRecord:
        def when(name: str) -> datetime | None:
            value = row.get(name)
            return datetime.fromisoformat(value) if value else None

        return cls(
            key_id=row["key_id"],
            name=row.get("name") or "",
            scopes=parse_scopes(row.get("scopes") or []),
            repos=frozenset(row.get("repos") or []),
            created_at=when("created_at") or _now(),
            expires_at=when("expires_at"),
            revoked_at=when("revoked_at"),
            hash=row.get("hash") or "",
        )

    def state(self, now: datetime | None = None) -> Literal["active", "revoked", "expired"]:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and (now or _now()) >= self.expires_at:
            return "expired"
        return "active"


def verify_api_key(
    keys: ServerKeys, token: str, record: ApiKeyRecord | None, *, now: datetime | None = None
) -> Principal:
    """The principal for ``token`` given its stored record; Unauthorized otherwise.

    Every failure reads the same to the caller ("invalid API key").
    """
    stored = record.hash if record is not None else secrets.token_hex(32)
    matches = keys.check_api_key(token, stored)
    if record is None or not matches or record.state(now) != "active":
        raise Unauthorized("invalid API key", hint="check the key, or ask for a new one")
    return Principal(
        key_id=record.key_id,
        scopes=record.scopes,
        repos=record.repos,
        kind="api_key",
        name=record.name,
    )


class KeyRing:
    """Creates, lists, revokes and looks up API keys."""

    def __init__(self, gateway: Gateway, keys: ServerKeys) -> None:
        self._gateway = gateway
        self._keys = keys

    def create(
        self,
        *,
        scopes: list[str],
        repos: list[str],
        name: str = "",
        expires_in: timedelta | None = None,
    ) -> tuple[ApiKeyRecord, str]:
        """A new key; returns the record and the token (shown once, never stored)."""
        parsed = parse_scopes(scopes)
        if not parsed:
            raise ValidationError("a key needs at least one scope", field="scopes")
        cleaned = sorted({repo.strip() for repo in repos if repo.strip()})
        if not cleaned:
            raise ValidationError("a key needs repositories (or '*')", field="repos")
        for repo in cleaned:
            if repo != ALL_REPOS:
                check_repo_name(repo)
        if len(name) > 100:
            raise ValidationError("key name is longer than 100 characters", field="name")
        if expires_in is not None and expires_in <= timedelta(0):
            raise ValidationError("expiry must be in the future", field="expires")
        key_id, token = new_api_key()
        now = _now()
        expires_at = now + expires_in if expires_in is not None else None
        self._gateway.write(
            CREATE_KEY,
            key_id=key_id,
            name=name,
            hash=self._keys.hash_api_key(token),
            scopes=sorted(parsed),
            repos=cleaned,
            now=now.isoformat(),
            expires_at=expires_at.isoformat() if expires_at else None,
        )
        record = ApiKeyRecord(
            key_id=key_id,
            name=name,
            scopes=parsed,
            repos=frozenset(cleaned),
            created_at=now,
            expires_at=expires_at,
        )
        return record, token

    def get(self, key_id: str, *, timeout: float | None = None) -> ApiKeyRecord | None:
        rows = self._gateway.read(GET_KEY, key_id=key_id, timeout=timeout)
        return ApiKeyRecord.from_row(rows[0]["k"]) if rows else None

    def list_all(self) -> list[ApiKeyRecord]:
        return [ApiKeyRecord.from_row(row["k"]) for row in self._gateway.read(LIST_KEYS)]

    def revoke(self, key_id: str) -> ApiKeyRecord:
        rows = self._gateway.write(REVOKE_KEY, key_id=key_id, now=_now().isoformat())
        if not rows:
            raise NotFound(f"no API key {key_id!r}", key_id=key_id)
        return ApiKeyRecord.from_row(rows[0]["k"])

    def authenticate(self, token: str) -> Principal:
        """Look the token's key up and verify it (uncached; the API caches lookups)."""
        key_id = api_key_id(token)
        record = self.get(key_id) if key_id else None
        return verify_api_key(self._keys, token, record)
