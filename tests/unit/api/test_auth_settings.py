"""Authentication settings that would be unsafe are refused at start-up (no services)."""

from __future__ import annotations

from typing import Any

import pytest

from strata.errors import ConfigError
from strata.settings import Settings
from strata_api.auth import _claim_repos, _claim_scopes, check_auth_settings

PEM = """-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
-----END PUBLIC KEY-----"""


def settings(**values: Any) -> Settings:
    base: dict[str, Any] = {
        "environment": "test",
        "secret_key": "s" * 40,
        "neo4j_password": "p" * 20,
    }
    return Settings(**(base | values))


def jwt_settings(**values: Any) -> Settings:
    base: dict[str, Any] = {
        "jwt_public_key": PEM,
        "jwt_algorithms": ["EdDSA"],
        "jwt_issuer": "https://idp.example",
        "jwt_audience": "strata",
    }
    return settings(**(base | values))


class TestAuthSettings:
    """JWT and anonymous-read settings are checked before the app serves anything."""

    def test_valid_jwt_settings_load_the_key(self) -> None:
        assert check_auth_settings(jwt_settings()) is not None

    def test_no_jwt_configured(self) -> None:
        assert check_auth_settings(settings()) is None

    @pytest.mark.parametrize("algorithms", [["none"], [], ["RS256", "none"], ["XX1"]])
    def test_unsafe_algorithms_are_refused(self, algorithms: list[str]) -> None:
        with pytest.raises(ConfigError, match="STRATA_JWT_ALGORITHMS"):
            check_auth_settings(jwt_settings(jwt_algorithms=algorithms))

    def test_mixed_families_are_refused(self) -> None:
        with pytest.raises(ConfigError, match="mixes"):
            check_auth_settings(jwt_settings(jwt_algorithms=["RS256", "HS256"]))

    @pytest.mark.parametrize("missing", ["jwt_issuer", "jwt_audience"])
    def test_issuer_and_audience_are_required(self, missing: str) -> None:
        with pytest.raises(ConfigError, match="ISSUER and STRATA_JWT_AUDIENCE"):
            check_auth_settings(jwt_settings(**{missing: None}))

    def test_short_hmac_secret_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="at least 32"):
            check_auth_settings(jwt_settings(jwt_algorithms=["HS256"], jwt_public_key="short"))

    def test_bad_pem_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="PEM"):
            check_auth_settings(jwt_settings(jwt_public_key="not a key"))

    def test_anonymous_reads_outside_development_are_refused(self) -> None:
        with pytest.raises(ConfigError, match="only allowed"):
            check_auth_settings(settings(dev_anonymous_reads=True))

    def test_anonymous_reads_in_development_are_allowed(self) -> None:
        assert (
            check_auth_settings(Settings(environment="development", dev_anonymous_reads=True))
            is None
        )


class TestClaims:
    """Scopes and repositories read from JWT claims ignore anything unknown."""

    def test_scope_string_and_prefixed_names(self) -> None:
        assert _claim_scopes("openid strata:read write profile") == {"read", "write"}

    def test_scope_list(self) -> None:
        assert _claim_scopes(["admin", 3, "bogus"]) == {"admin"}

    def test_repos(self) -> None:
        assert _claim_repos("a,b c") == {"a", "b", "c"}
        assert _claim_repos(["*", "../etc", "ok"]) == {"*", "ok"}
        assert _claim_repos(None) == frozenset()
