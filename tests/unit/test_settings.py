"""Settings: read from STRATA_* variables, unsafe defaults refused outside development."""

from __future__ import annotations

import pytest

from strata.errors import ConfigError
from strata.settings import DEV_NEO4J_PASSWORD, Environment, Settings, load_settings


class TestSettings:
    """The one settings class refuses what would be unsafe in production."""

    def test_development_accepts_defaults(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("STRATA_ENVIRONMENT", raising=False)
        settings = load_settings()
        assert settings.environment is Environment.DEVELOPMENT
        assert settings.neo4j_password.get_secret_value() == DEV_NEO4J_PASSWORD

    def test_production_refuses_default_password(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("STRATA_ENVIRONMENT", "production")
        monkeypatch.setenv("STRATA_SECRET_KEY", "x" * 40)
        with pytest.raises(ConfigError, match="STRATA_NEO4J_PASSWORD is the development default"):
            load_settings()

    def test_production_refuses_short_secret_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("STRATA_ENVIRONMENT", "production")
        monkeypatch.setenv("STRATA_NEO4J_PASSWORD", "a-real-password-123")
        monkeypatch.setenv("STRATA_SECRET_KEY", "short")
        with pytest.raises(ConfigError, match="at least 32 characters"):
            load_settings()

    def test_production_accepts_real_secrets(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("STRATA_ENVIRONMENT", "production")
        monkeypatch.setenv("STRATA_NEO4J_PASSWORD", "a-real-password-123")
        monkeypatch.setenv("STRATA_SECRET_KEY", "k" * 48)
        assert load_settings().environment is Environment.PRODUCTION

    def test_bad_uri_is_a_config_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("STRATA_NEO4J_URI", "http://localhost:7474")
        with pytest.raises(ConfigError, match="neo4j_uri"):
            load_settings()

    def test_settings_are_frozen(self) -> None:
        settings = Settings()
        with pytest.raises(ValueError, match="frozen"):
            settings.api_port = 1  # type: ignore[misc]
