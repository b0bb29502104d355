"""`strata repo ...` and `strata key ...` on the real Neo4j: secrets shown once, never stored."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from strata.cli import console
from strata.cli.main import app
from strata.graph.gateway import Gateway
from strata.registry import KeyRing, RepoRegistry
from strata.security import ServerKeys
from strata.settings import Settings
from tests.conftest import TEST_SECRET, settings_env

runner = CliRunner()


@pytest.fixture
def cli_env(
    settings: Settings, gateway: Gateway, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    for name, value in settings_env(settings).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLUMNS", "250")  # rich tables at full width
    console.settings.cache_clear()
    yield
    console.settings.cache_clear()


class TestRepoCommands:
    """Registrations are added, listed without secrets, and removed."""

    def test_add_list_remove(self, cli_env: None, gateway: Gateway, unique: str) -> None:
        name = f"cli-{unique}"
        secret = "cli-secret-value-0123456789"
        added = runner.invoke(
            app,
            [
                "repo",
                "add",
                name,
                "--provider",
                "gitea",
                "--url",
                "https://git.example/x.git",
                "--secret-stdin",
            ],
            input=secret + "\n",
        )
        assert added.exit_code == 0, added.output
        assert f"/webhooks/gitea/{name}" in added.output
        assert secret not in added.output
        creds = RepoRegistry(gateway, ServerKeys(TEST_SECRET)).credentials(name, "gitea")
        assert creds.repo == name

        listed = runner.invoke(app, ["repo", "list"])
        assert name in listed.output
        assert secret not in listed.output

        removed = runner.invoke(app, ["repo", "remove", name])
        assert removed.exit_code == 0
        assert RepoRegistry(gateway, ServerKeys(TEST_SECRET)).get(name) is None

    def test_generated_secret_is_printed_once(self, cli_env: None, unique: str) -> None:
        result = runner.invoke(
            app,
            [
                "repo",
                "add",
                f"gen-{unique}",
                "--provider",
                "github",
                "--path",
                "/srv/git/x",
                "--generate-secret",
            ],
        )
        assert result.exit_code == 0, result.output
        assert "shown once" in result.output

    def test_bad_name_is_refused(self, cli_env: None) -> None:
        result = runner.invoke(
            app,
            [
                "repo",
                "add",
                "../x",
                "--provider",
                "github",
                "--url",
                "https://h/x",
                "--secret-stdin",
            ],
            input="s" * 20 + "\n",
        )
        assert result.exit_code != 0

    def test_ext_transport_url_is_refused(self, cli_env: None, unique: str) -> None:
        result = runner.invoke(
            app,
            [
                "repo",
                "add",
                f"ext-{unique}",
                "--provider",
                "github",
                "--url",
                "ext::sh -c id",
                "--secret-stdin",
            ],
            input="s" * 20 + "\n",
        )
        assert result.exit_code != 0


class TestKeyCommands:
    """Keys are printed once, stored as a hash, listed without tokens, and revocable."""

    def test_create_list_revoke(self, cli_env: None, gateway: Gateway, unique: str) -> None:
        created = runner.invoke(
            app, ["key", "create", "--scopes", "read,write", "--repos", f"a-{unique},b-{unique}"]
        )
        assert created.exit_code == 0, created.output
        token = re.search(r"stk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}", created.output)
        assert token is not None
        ring = KeyRing(gateway, ServerKeys(TEST_SECRET))
        principal = ring.authenticate(token.group(0))
        assert principal.can_write(f"a-{unique}")
        assert not principal.can_read(f"c-{unique}")
        stored = gateway.read(
            "MATCH (k:ApiKey {key_id: $id}) RETURN k {.*} AS k", id=principal.key_id
        )[0]["k"]
        assert token.group(0) not in str(stored)

        listed = runner.invoke(app, ["key", "list"])
        assert principal.key_id in listed.output
        assert token.group(0) not in listed.output

        assert runner.invoke(app, ["key", "revoke", principal.key_id]).exit_code == 0
        assert ring.get(principal.key_id).state() == "revoked"  # type: ignore[union-attr]

    def test_unknown_scope_is_refused(self, cli_env: None) -> None:
        result = runner.invoke(app, ["key", "create", "--scopes", "root", "--repos", "*"])
        assert result.exit_code != 0
