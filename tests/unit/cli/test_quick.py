"""The quick `strata graphql` path reads a command line exactly as typer would, or
leaves it to typer: its options are the typer command's, and both call the same
function with the same arguments."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from strata.cli import api, client, quick
from strata.cli.main import app
from strata.cli.output import Format
from strata.cli.quick import GRAPHQL, parse_graphql
from strata.errors import ConfigError


def _typer_parse(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any] | None:
    """What the typer command hands to run_graphql for ``argv`` (None: it refused)."""
    seen: dict[str, Any] = {}

    def record(query: str, variables: str, fmt: Format, url: str | None, key: str | None) -> int:
        seen.update(query=query, variables=variables, fmt=str(fmt), url=url, api_key=key)
        return 0

    monkeypatch.setattr(api, "run_graphql", record)
    done = CliRunner().invoke(app, argv)
    return seen if done.exit_code == 0 else None


class TestSameOptionsAsTheTyperCommand:
    """The quick parser's option table is the typer command's declaration."""

    def test_flags_defaults_envvars_and_choices(self) -> None:
        command = typer.main.get_command_from_info(
            typer.models.CommandInfo(name="graphql", callback=api.graphql),
            pretty_exceptions_short=True,
            rich_markup_mode=None,
        )
        options = {p.name: p for p in command.params if p.param_type_name == "option"}
        assert sorted(options) == sorted(opt.name for opt in GRAPHQL)
        for opt in GRAPHQL:
            declared = options[opt.name]
            assert declared.opts == [opt.flag], opt
            default = declared.default
            assert (default.value if isinstance(default, Format) else default) == opt.default
            assert declared.envvar == opt.envvar, opt
        assert quick.GRAPHQL[1].choices == tuple(f.value for f in Format)
        [argument] = [p for p in command.params if p.param_type_name == "argument"]
        assert argument.name == "query"
        assert argument.required


CASES = [
    ["graphql", "{ version }"],
    ["graphql", "{ version }", "--format", "table", "--url", "http://h:1"],
    ["graphql", "--format=compact", "{ a }", "--variables", '{"x": 1}'],
    ["graphql", "{ a }", "--api-key", "k1", "--url=http://x", "--url", "http://y"],
    ["graphql", "{ a }", "--variables", "-1"],  # an option's value may start with a dash
]
REFUSED = [
    ["graphql"],
    ["graphql", "--help"],
    ["graphql", "{ a }", "-h"],
    ["graphql", "{ a }", "{ b }"],
    ["graphql", "{ a }", "--format", "xml"],
    ["graphql", "{ a }", "--url"],
    ["graphql", "{ a }", "--no-such"],
    ["graphql", "--", "{ a }"],
    ["search", "x"],
    [],
]


class TestSameReading:
    """Where the quick path reads a line, typer reads it the same; the rest goes to typer."""

    @pytest.mark.parametrize("argv", CASES)
    def test_read_like_typer(self, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("STRATA_API_KEY", raising=False)
        assert parse_graphql(argv) == _typer_parse(argv, monkeypatch)

    def test_the_key_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        argv = ["graphql", "{ a }"]
        monkeypatch.setenv("STRATA_API_KEY", "from-env")
        assert parse_graphql(argv) == _typer_parse(argv, monkeypatch)
        assert (parse_graphql(argv) or {})["api_key"] == "from-env"
        monkeypatch.setenv("STRATA_API_KEY", "")  # empty: as if unset, in click too
        assert parse_graphql(argv) == _typer_parse(argv, monkeypatch)

    @pytest.mark.parametrize("argv", REFUSED)
    def test_left_to_typer(self, argv: list[str]) -> None:
        assert parse_graphql(argv) is None


class TestTheApiAddress:
    """Without --url the quick path finds the API where the settings say it is."""

    def test_the_defaults_are_the_settings_defaults(self) -> None:
        from strata.settings import Settings

        fields = Settings.model_fields
        assert client.API_HOST[1] == fields["api_host"].default
        assert client.API_PORT[1] == fields["api_port"].default

    @pytest.mark.parametrize(
        "env",
        [{}, {"STRATA_API_HOST": "10.0.0.5", "STRATA_API_PORT": "9001"}, {"strata_api_port": "81"}],
    )
    def test_read_as_the_settings_read_them(
        self, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from strata.settings import Settings

        for name in ("STRATA_API_HOST", "STRATA_API_PORT", "strata_api_port"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        s = Settings(environment="test")  # type: ignore[arg-type]
        assert client.default_base() == f"http://{s.api_host}:{s.api_port}"

    def test_a_bad_port_is_a_config_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("STRATA_API_PORT", "eighty")
        with pytest.raises(ConfigError, match="STRATA_API_PORT"):
            client.default_base()
