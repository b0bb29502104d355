"""JWT bearer tokens from an identity provider: signature, algorithm, audience, issuer, expiry."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.integration.api.conftest import Api

ISSUER = "https://idp.example"
AUDIENCE = "strata-api"
JOBS = "query J($r: String!) { jobs(repository: $r) { id } }"


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def jwt_api(make_api: Any, rsa_key: rsa.RSAPrivateKey) -> Iterator[Api]:
    public = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    with make_api(
        jwt_public_key=public.decode(),
        jwt_algorithms=["RS256"],
        jwt_issuer=ISSUER,
        jwt_audience=AUDIENCE,
        jwt_leeway_s=0,
    ) as api:
        yield api


def claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    return {
        "sub": "agent-7",
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": now,
        "exp": now + 300,
        "scope": "openid strata:read",
        "strata_repos": ["alpha"],
    } | overrides


def token(key: rsa.RSAPrivateKey, **overrides: Any) -> str:
    return jwt.encode(claims(**overrides), key, algorithm="RS256")


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class TestJwt:
    """Only a correctly signed, current token for our audience and issuer gets in."""

    def test_valid_token_reads_its_repositories(
        self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey
    ) -> None:
        response = jwt_api.gql(JOBS, token(rsa_key), {"r": "alpha"})
        assert response.status_code == 200
        assert response.json() == {"data": {"jobs": []}}

    def test_claims_limit_scopes(self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        mutation = 'mutation { reindex(repository: "alpha", after: "%s") { id } }' % ("a" * 40)
        response = jwt_api.gql(mutation, token(rsa_key))
        assert response.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"

    def test_expired_token(self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        past = int(time.time()) - 60
        expired = token(rsa_key, iat=past - 300, exp=past)
        assert jwt_api.gql(JOBS, expired, {"r": "alpha"}).status_code == 401

    def test_token_without_expiry(self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        body = claims()
        del body["exp"]
        unbounded = jwt.encode(body, rsa_key, algorithm="RS256")
        assert jwt_api.gql(JOBS, unbounded, {"r": "alpha"}).status_code == 401

    def test_alg_none(self, jwt_api: Api) -> None:
        header = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
        unsigned = f"{header}.{b64(json.dumps(claims()).encode())}."
        assert jwt_api.gql(JOBS, unsigned, {"r": "alpha"}).status_code == 401

    def test_hmac_with_the_public_key_as_secret(
        self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey
    ) -> None:
        public = rsa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        header = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        payload = b64(json.dumps(claims()).encode())
        signature = hmac.new(public, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        forged = f"{header}.{payload}.{b64(signature)}"
        assert jwt_api.gql(JOBS, forged, {"r": "alpha"}).status_code == 401

    def test_wrong_audience(self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        assert jwt_api.gql(JOBS, token(rsa_key, aud="other"), {"r": "alpha"}).status_code == 401

    def test_wrong_issuer(self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        bad = token(rsa_key, iss="https://evil.example")
        assert jwt_api.gql(JOBS, bad, {"r": "alpha"}).status_code == 401

    def test_other_signing_key(self, jwt_api: Api) -> None:
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        assert jwt_api.gql(JOBS, token(other), {"r": "alpha"}).status_code == 401

    def test_not_yet_valid(self, jwt_api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        future = token(rsa_key, nbf=int(time.time()) + 600)
        assert jwt_api.gql(JOBS, future, {"r": "alpha"}).status_code == 401

    def test_jwt_refused_when_not_configured(self, api: Api, rsa_key: rsa.RSAPrivateKey) -> None:
        assert api.gql(JOBS, token(rsa_key), {"r": "alpha"}).status_code == 401
