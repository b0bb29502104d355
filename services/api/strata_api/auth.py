"""Who is calling: ``Authorization: Bearer <API key or JWT>`` to a :class:`Principal`.

- API keys (``stk_<id>_<secret>``) are looked up by id in Neo4j (cached for
  ``STRATA_API_KEY_CACHE_S`` seconds) and checked by a constant-time compare of
  their HMAC;
- a JWT is accepted only when ``STRATA_JWT_PUBLIC_KEY`` is set: the algorithms
  come from settings (never ``none``, never symmetric and asymmetric mixed),
  ``exp``, ``iss``, ``aud`` and ``sub`` are required and checked; scopes come
  from the ``scope`` claim (``read`` or ``strata:read``), repositories from
  ``strata_repos``;
- no header: 401, except in development with ``STRATA_DEV_ANONYMOUS_READS=true``
  (read-only, every repository). The API refuses to start with that setting
  in any other environment.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from fastapi import Request
from starlette.requests import HTTPConnection

from strata.errors import ConfigError, Unauthorized
from strata.jobs import REPO_NAME_PATTERN
from strata.registry import ApiKeyRecord, KeyRing, verify_api_key
from strata.security import ALL_REPOS, SCOPES, Principal, Scope, ServerKeys, api_key_id
from strata.settings import Settings
from strata_api.ratelimit import RateLimiter

ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
SYMMETRIC = frozenset({"HS256", "HS384", "HS512"})
_REPO = re.compile(REPO_NAME_PATTERN)
_CACHE_MAX = 4096


class Authenticator:
    """Resolves bearer tokens; one per process (holds the key cache)."""

    def __init__(self, settings: Settings, ring: KeyRing, keys: ServerKeys) -> None:
        self._settings = settings
        self._ring = ring
        self._keys = keys
        self._cache: dict[str, tuple[float, ApiKeyRecord | None]] = {}
        self._lock = threading.Lock()
        self._jwt_key: Any = check_auth_settings(settings)

    def authenticate(self, authorization: str | None) -> Principal:
        """The principal for an Authorization header value (blocking: may read Neo4j)."""
        if not authorization:
            if self._settings.is_development and self._settings.dev_anonymous_reads:
                return Principal.anonymous_reader()
            raise Unauthorized("missing bearer token", hint="send `Authorization: Bearer <key>`")
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise Unauthorized("expected `Authorization: Bearer <token>`")
        key_id = api_key_id(token)
        if key_id is not None:
            return verify_api_key(self._keys, token, self._record(key_id))
        if self._jwt_key is not None and token.count(".") == 2:
            return self._from_jwt(token)
        raise Unauthorized("invalid bearer token")

    def _record(self, key_id: str) -> ApiKeyRecord | None:
        ttl = self._settings.api_key_cache_s
        now = time.monotonic()
        if ttl > 0:
            with self._lock:
                hit = self._cache.get(key_id)
            if hit is not None and now - hit[0] < ttl:
                return hit[1]
        record = self._ring.get(key_id, timeout=2.0)
        if ttl > 0 and record is not None:  # unknown ids are not cached (no cache flooding)
            with self._lock:
                if len(self._cache) >= _CACHE_MAX:
                    self._cache.clear()
                self._cache[key_id] = (now, record)
        return record

    def _from_jwt(self, token: str) -> Principal:
        s = self._settings
        try:
            claims = jwt.decode(
                token,
                self._jwt_key,
                algorithms=list(s.jwt_algorithms),
                audience=s.jwt_audience,
                issuer=s.jwt_issuer,
                leeway=s.jwt_leeway_s,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_signature": True},
            )
        except jwt.PyJWTError as exc:
            raise Unauthorized("invalid token", hint=type(exc).__name__) from None
        return Principal(
            key_id=f"jwt:{claims['sub']}"[:200],
            scopes=_claim_scopes(claims.get(s.jwt_scopes_claim)),
            repos=_claim_repos(claims.get(s.jwt_repos_claim)),
            kind="jwt",
        )


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return value.replace(",", " ").split()
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _claim_scopes(value: object) -> frozenset[Scope]:
    found: set[Scope] = set()
    for word in _words(value):
        name = word.removeprefix("strata:")
        for scope in SCOPES:
            if name == scope:
                found.add(scope)
    return frozenset(found)


def _claim_repos(value: object) -> frozenset[str]:
    return frozenset(w for w in _words(value) if w == ALL_REPOS or _REPO.fullmatch(w))


def check_auth_settings(settings: Settings) -> Any:
    """Refuse unsafe authentication settings (ConfigError); return the JWT key, if any."""
    if settings.dev_anonymous_reads and not settings.is_development:
        raise ConfigError(
            "STRATA_DEV_ANONYMOUS_READS is only allowed with STRATA_ENVIRONMENT=development",
            hint="create API keys with `strata key create`",
        )
    if settings.jwt_public_key is None:
        return None
    algorithms = set(settings.jwt_algorithms)
    unknown = algorithms - ASYMMETRIC - SYMMETRIC
    if not algorithms or unknown:
        raise ConfigError(
            f"STRATA_JWT_ALGORITHMS must name signing algorithms; refused: {sorted(unknown)}",
            hint=f'e.g. ["RS256"]; allowed: {", ".join(sorted(ASYMMETRIC | SYMMETRIC))}',
        )
    if algorithms & ASYMMETRIC and algorithms & SYMMETRIC:
        raise ConfigError("STRATA_JWT_ALGORITHMS mixes HMAC and public-key algorithms")
    if not settings.jwt_issuer or not settings.jwt_audience:
        raise ConfigError("JWT needs STRATA_JWT_ISSUER and STRATA_JWT_AUDIENCE")
    material = settings.jwt_public_key.get_secret_value()
    if algorithms & SYMMETRIC:
        if len(material) < 32:
            raise ConfigError("an HMAC JWT secret must be at least 32 characters")
        return material
    try:
        return load_pem_public_key(material.encode())
    except ValueError as exc:
        raise ConfigError("STRATA_JWT_PUBLIC_KEY is not a PEM public key") from exc


def client_subject(connection: HTTPConnection, principal: Principal) -> str:
    """What rate limiting counts: the key, or the client address when anonymous."""
    if principal.kind != "anonymous":
        return principal.key_id
    host = connection.client.host if connection.client else "unknown"
    return f"anon:{host}"


async def require_principal(request: Request) -> Principal:
    """FastAPI dependency: authenticate, then count the request against the rate limit.

    Both block (a Neo4j read on a key-cache miss, one Redis round trip), so both run
    off the event loop, in one thread hop: each hop costs a GIL hand-over, which on a
    busy machine was a good part of a symbol lookup's p99 (bench/load.py).
    """
    state = request.app.state
    authenticator: Authenticator = state.authenticator
    limiter: RateLimiter = state.rate_limiter
    authorization = request.headers.get("authorization")

    def admit() -> Principal:
        principal = authenticator.authenticate(authorization)
        limiter.hit(client_subject(request, principal))
        return principal

    return await asyncio.to_thread(admit)
