"""Secrets at rest, webhook verification, API key tokens, and the caller's :class:`Principal`.

Pure: no I/O; the stores that persist these live in :mod:`strata.registry`.

Everything secret is derived from ``STRATA_SECRET_KEY`` with HKDF-SHA256, one
sub-key per purpose, so a leak of one derived key does not expose the others:

- API keys and GitLab webhook tokens are *compared*, so only an HMAC-SHA256 of
  them is stored, and checked with :func:`hmac.compare_digest`;
- GitHub, Gitea/Forgejo and Bitbucket sign the raw body with the shared secret,
  so the secret itself is needed: it is stored encrypted (AES-256-GCM, random
  96-bit nonce, the repository name as associated data so a ciphertext cannot be
  moved to another registration).

Rotating ``STRATA_SECRET_KEY`` therefore invalidates every stored API key and
webhook secret: re-create them after a rotation.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Literal, TypeVar, get_args

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from strata.errors import ConfigError, Forbidden, ValidationError

Scope = Literal["read", "write", "admin"]
Provider = Literal["github", "gitlab", "gitea", "bitbucket"]
SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)
ALL_REPOS: Final = "*"

API_KEY_PREFIX: Final = "stk"
_API_KEY = re.compile(r"^stk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
_SALT: Final = b"strata/v1"
_CIPHER_VERSION: Final = "v1"

T = TypeVar("T")


def derive_key(secret_key: str, purpose: str) -> bytes:
    """A 256-bit key for one purpose, derived from the server secret with HKDF-SHA256."""
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=_SALT, info=purpose.encode())
    return hkdf.derive(secret_key.encode())


def hmac_hex(key: bytes, data: bytes) -> str:
    """Hex HMAC-SHA256 (what GitHub, Gitea and Bitbucket put in their signature headers)."""
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def same(a: str, b: str) -> bool:
    """Constant-time string comparison that never raises on non-ASCII input."""
    return hmac.compare_digest(a.encode("utf-8", "replace"), b.encode("utf-8", "replace"))


class ServerKeys:
    """The derived keys of this deployment: token hashing and secret encryption."""

    def __init__(self, secret_key: str) -> None:
        if not secret_key:
            raise ConfigError("STRATA_SECRET_KEY is empty")
        self._api_key_hash = derive_key(secret_key, "strata api-key hash v1")
        self._token_hash = derive_key(secret_key, "strata webhook-token hash v1")
        self._aead = AESGCM(derive_key(secret_key, "strata webhook-secret encryption v1"))

    # -- compared secrets: store a keyed hash -------------------------------------

    def hash_api_key(self, token: str) -> str:
        return hmac_hex(self._api_key_hash, token.encode())

    def check_api_key(self, token: str, stored_hash: str) -> bool:
        return same(self.hash_api_key(token), stored_hash)

    def hash_webhook_token(self, token: str) -> str:
        return hmac_hex(self._token_hash, token.encode())

    def check_webhook_token(self, token: str, stored_hash: str) -> bool:
        return same(self.hash_webhook_token(token), stored_hash)

    # -- secrets needed in clear: encrypt -----------------------------------------

    def encrypt(self, plaintext: str, *, context: str) -> str:
        """AES-256-GCM; ``context`` (e.g. the repository name) is bound as associated data."""
        nonce = secrets.token_bytes(12)
        sealed = self._aead.encrypt(nonce, plaintext.encode(), context.encode())
        return f"{_CIPHER_VERSION}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    def decrypt(self, ciphertext: str, *, context: str) -> str:
        version, _, payload = ciphertext.partition(".")
        if version != _CIPHER_VERSION or not payload:
            raise ConfigError("stored secret has an unknown format", context=context)
        try:
            raw = base64.urlsafe_b64decode(payload.encode())
            return self._aead.decrypt(raw[:12], raw[12:], context.encode()).decode()
        except (InvalidTag, ValueError) as exc:
            raise ConfigError(
                f"cannot decrypt the stored secret of {context!r}",
                hint="STRATA_SECRET_KEY changed since it was stored: register the secret again",
                context=context,
            ) from exc


# -- webhook verification -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WebhookCredentials:
    """What verifies one repository's deliveries; holds the secret, prints nothing of it."""

    repo: str
    provider: Provider
    default_branch: str = ""
    _secret: str | None = field(default=None, repr=False)
    _token_hash: str | None = field(default=None, repr=False)
    _keys: ServerKeys | None = field(default=None, repr=False)

    def signature_matches(self, body: bytes, signature_hex: str) -> bool:
        """Constant-time check of a hex HMAC-SHA256 of the raw body."""
        key = (self._secret or secrets.token_hex(32)).encode()
        return same(hmac_hex(key, body), signature_hex) and self._secret is not None

    def token_matches(self, token: str) -> bool:
        """Constant-time check of a GitLab-style shared token against its stored hash."""
        if self._keys is None:
            return False
        stored = self._token_hash or secrets.token_hex(32)
        return self._keys.check_webhook_token(token, stored) and self._token_hash is not None


def decoy_credentials(keys: ServerKeys, provider: Provider) -> WebhookCredentials:
    """Credentials that never verify, taking the same work as real ones.

    Used for unknown repositories so a caller cannot tell an unregistered
    repository from a bad signature, by status or by timing.
    """
    return WebhookCredentials(
        repo="", provider=provider, _secret=None, _token_hash=None, _keys=keys
    )


# -- API key tokens ---------------------------------------------------------------------


def new_api_key() -> tuple[str, str]:
    """A fresh ``(key_id, token)``; the token is ``stk_<16 hex id>_<43 url-safe chars>``."""
    key_id = secrets.token_hex(8)
    return key_id, f"{API_KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"


def api_key_id(token: str) -> str | None:
    """The key id inside a well-formed token, or None (the token is then not an API key)."""
    match = _API_KEY.match(token)
    return match.group(1) if match else None


def parse_scopes(values: Iterable[str]) -> frozenset[Scope]:
    scopes: set[Scope] = set()
    for raw in values:
        value = raw.strip()
        if not value:
            continue
        if value not in SCOPES:
            raise ValidationError(
                f"unknown scope {value!r}", hint=f"use {', '.join(SCOPES)}", scope=value
            )
        scopes.add(value)
    return frozenset(scopes)


# -- the caller -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepoSet:
    """A set of repository names, or every repository (``all``).

    Use ``repo in repo_set``, :meth:`filter`, or :meth:`as_params` for Cypher:
    ``WHERE $all_repos OR n.repo IN $repos``.
    """

    all: bool = False
    names: frozenset[str] = frozenset()

    def __contains__(self, repo: object) -> bool:
        return self.all or repo in self.names

    def filter(self, repos: Iterable[str]) -> list[str]:
        return [repo for repo in repos if repo in self]

    def as_params(self) -> dict[str, object]:
        return {"all_repos": self.all, "repos": sorted(self.names)}


_NOTHING = RepoSet()


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling, what they may do, and on which repositories.

    Scopes imply each other downwards: ``admin`` ⊇ ``write`` ⊇ ``read``.
    ``repos`` is a set of repository names or ``{"*"}`` for every one; it
    bounds ``read`` and ``write``. ``admin`` is global (registering
    repositories, managing keys) and does not widen ``repos``.

    For resolver authors (the GraphQL context carries one as
    ``info.context.principal``):

    - ``principal.can_read(repo)`` / ``can_write(repo)``: a boolean check;
    - ``principal.require("read", repo)``: raise :class:`strata.errors.Forbidden`
      (the API turns it into a GraphQL error with ``extensions.code == "FORBIDDEN"``);
    - ``principal.readable_repos()``: a :class:`RepoSet` to filter results with
      (``repo in repos``, ``repos.filter(names)``), or to pass to Cypher with
      ``**repos.as_params()`` and ``WHERE $all_repos OR n.repo IN $repos``;
    - ``principal.visible(items, repo_of)``: keep only the items whose
      repository the caller may read.

    A list query should filter silently (an unreadable repository simply has
    no results); a query about one named repository should return nothing or
    ``require`` read, never reveal whether the repository exists.
    """

    key_id: str
    scopes: frozenset[Scope] = frozenset()
    repos: frozenset[str] = frozenset()
    kind: Literal["api_key", "jwt", "anonymous"] = "api_key"
    name: str = field(default="", compare=False)

    @classmethod
    def nobody(cls) -> Principal:
        """May do nothing at all (the default of a context nobody authenticated)."""
        return cls(key_id="nobody", kind="anonymous")

    @classmethod
    def anonymous_reader(cls) -> Principal:
        """Development only, when explicitly enabled: read every repository."""
        return cls(
            key_id="anonymous",
            scopes=frozenset({"read"}),
            repos=frozenset({ALL_REPOS}),
            kind="anonymous",
        )

    def has_scope(self, scope: Scope) -> bool:
        if "admin" in self.scopes:
            return True
        if scope == "read":
            return bool(self.scopes & {"read", "write"})
        return scope in self.scopes

    def _repo_set(self) -> RepoSet:
        if ALL_REPOS in self.repos:
            return RepoSet(all=True)
        return RepoSet(names=self.repos)

    def can(self, scope: Scope, repo: str | None = None) -> bool:
        """``scope`` held, and (when given) ``repo`` within the key's repositories."""
        if not self.has_scope(scope):
            return False
        return repo is None or scope == "admin" or repo in self._repo_set()

    def can_read(self, repo: str) -> bool:
        return self.can("read", repo)

    def can_write(self, repo: str) -> bool:
        return self.can("write", repo)

    def is_admin(self) -> bool:
        return self.has_scope("admin")

    def require(self, scope: Scope, repo: str | None = None) -> None:
        """Raise :class:`Forbidden` unless :meth:`can` allows it."""
        if self.can(scope, repo):
            return
        target = f" on repository {repo!r}" if repo is not None else ""
        raise Forbidden(
            f"this key lacks the {scope!r} scope{target}",
            hint="ask an admin for a key with that scope and repository",
            scope=scope,
        )

    def readable_repos(self) -> RepoSet:
        """The repositories this caller may read (possibly every one, possibly none)."""
        return self._repo_set() if self.has_scope("read") else _NOTHING

    def visible(self, items: Iterable[T], repo_of: Callable[[T], str]) -> list[T]:
        """The items whose repository this caller may read, in their order."""
        readable = self.readable_repos()
        return [item for item in items if repo_of(item) in readable]
