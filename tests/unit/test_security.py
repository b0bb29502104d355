"""Secrets at rest and API key tokens: derived keys, AES-GCM, keyed hashes (no services)."""

from __future__ import annotations

import pytest

from strata.errors import ConfigError
from strata.security import ServerKeys, api_key_id, derive_key, new_api_key

SECRET = "a-server-secret-for-unit-tests-0123456789"


class TestDerivedKeys:
    """Each purpose gets its own key from the server secret."""

    def test_purposes_differ(self) -> None:
        assert derive_key(SECRET, "a") != derive_key(SECRET, "b")

    def test_same_inputs_same_key(self) -> None:
        assert derive_key(SECRET, "a") == derive_key(SECRET, "a")
        assert len(derive_key(SECRET, "a")) == 32

    def test_empty_secret_is_refused(self) -> None:
        with pytest.raises(ConfigError):
            ServerKeys("")


class TestEncryption:
    """Webhook secrets are encrypted with AES-GCM bound to their repository."""

    def test_round_trip(self) -> None:
        keys = ServerKeys(SECRET)
        sealed = keys.encrypt("hunter2-hunter2-hunter2", context="repo-a")
        assert "hunter2" not in sealed
        assert keys.decrypt(sealed, context="repo-a") == "hunter2-hunter2-hunter2"

    def test_nonce_is_fresh(self) -> None:
        keys = ServerKeys(SECRET)
        assert keys.encrypt("x", context="r") != keys.encrypt("x", context="r")

    def test_other_repository_cannot_decrypt(self) -> None:
        keys = ServerKeys(SECRET)
        sealed = keys.encrypt("secret-value-123456", context="repo-a")
        with pytest.raises(ConfigError, match="cannot decrypt"):
            keys.decrypt(sealed, context="repo-b")

    def test_other_server_secret_cannot_decrypt(self) -> None:
        sealed = ServerKeys(SECRET).encrypt("secret-value-123456", context="r")
        with pytest.raises(ConfigError, match="STRATA_SECRET_KEY changed"):
            ServerKeys(SECRET + "x").decrypt(sealed, context="r")

    def test_tampered_ciphertext_is_refused(self) -> None:
        keys = ServerKeys(SECRET)
        sealed = keys.encrypt("secret-value-123456", context="r")
        tampered = sealed[:-4] + ("AAAA" if not sealed.endswith("AAAA") else "BBBB")
        with pytest.raises(ConfigError):
            keys.decrypt(tampered, context="r")

    def test_unknown_format_is_refused(self) -> None:
        with pytest.raises(ConfigError, match="unknown format"):
            ServerKeys(SECRET).decrypt("v9.abc", context="r")


class TestTokens:
    """API keys and GitLab tokens are stored as keyed hashes and compared in constant time."""

    def test_api_key_format_and_id(self) -> None:
        key_id, token = new_api_key()
        assert token.startswith(f"stk_{key_id}_")
        assert api_key_id(token) == key_id

    @pytest.mark.parametrize(
        "token",
        ["", "stk_", "stk_zz_" + "a" * 43, "sk_0123456789abcdef_" + "a" * 43, "x.y.z"],
    )
    def test_malformed_tokens_have_no_id(self, token: str) -> None:
        assert api_key_id(token) is None

    def test_hash_checks(self) -> None:
        keys = ServerKeys(SECRET)
        _, token = new_api_key()
        stored = keys.hash_api_key(token)
        assert token not in stored
        assert keys.check_api_key(token, stored)
        assert not keys.check_api_key(token + "x", stored)
        assert not ServerKeys(SECRET + "x").check_api_key(token, stored)

    def test_webhook_token_hash_is_not_the_api_key_hash(self) -> None:
        keys = ServerKeys(SECRET)
        assert keys.hash_webhook_token("t" * 20) != keys.hash_api_key("t" * 20)
        assert keys.check_webhook_token("t" * 20, keys.hash_webhook_token("t" * 20))
        assert not keys.check_webhook_token("é" * 20, keys.hash_webhook_token("t" * 20))
