"""The index daemon's protocol: its address, its messages, its errors (no services)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from strata.code.result import IndexResult
from strata.errors import ConfigError, NotFound, StrataError, ValidationError
from strata.indexd import protocol
from strata.indexd.protocol import IndexRequest, address, error_message, raise_error
from strata.settings import Settings


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "run"
    base.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    return base


class TestAddress:
    """One daemon per settings and code; its folder is private to the user."""

    def test_same_settings_same_daemon(self, runtime: Path) -> None:
        assert address(Settings()) == address(Settings())
        assert address(Settings()).socket.parent == runtime / "strata"
        assert (runtime / "strata").stat().st_mode & 0o777 == 0o700

    def test_any_setting_or_secret_names_another_daemon(self, runtime: Path) -> None:
        base = address(Settings()).key
        assert address(Settings(max_file_bytes=5)).key != base
        assert address(Settings(neo4j_password="another-password")).key != base

    def test_a_relative_folder_is_read_from_the_working_folder(
        self, runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        monkeypatch.chdir(tmp_path / "a")
        in_a = address(Settings(var_dir=Path("var"))).key
        monkeypatch.chdir(tmp_path / "b")
        assert address(Settings(var_dir=Path("var"))).key != in_a

    def test_changed_code_names_another_daemon(
        self, runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        package = tmp_path / "pkg"
        package.mkdir()
        source = package / "mod.py"
        source.write_text("x = 1\n")
        monkeypatch.setattr(protocol, "PACKAGE", package)
        before = address(Settings()).key
        source.write_text("x = 22\n")
        assert address(Settings()).key != before

    def test_a_shared_folder_is_refused(self, runtime: Path) -> None:
        folder = runtime / "strata"
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o770)  # noqa: S103 - the shared folder refused
        with pytest.raises(ConfigError, match="not a folder private to this user"):
            address(Settings())


class TestMessages:
    """Requests and answers survive the socket whole; bad requests are refused."""

    def test_request_round_trip(self) -> None:
        request = IndexRequest("/abs/repo", "r", "main", "HEAD", "2025-01-01T00:00:00+00:00", 3)
        assert IndexRequest.from_message(request.to_message()) == request

    @pytest.mark.parametrize(
        ("change", "error"),
        [
            ({"path": "rel"}, "absolute"),
            ({"repo": 3}, "strings"),
            ({"commits": 0}, "positive"),
            ({"commits": "2"}, "positive"),
            ({"since": 5}, "ISO"),
        ],
    )
    def test_bad_requests(self, change: dict[str, object], error: str) -> None:
        message = IndexRequest("/abs", "r", "main").to_message() | change
        with pytest.raises(ValidationError, match=error):
            IndexRequest.from_message(message)

    def test_result_round_trip(self) -> None:
        result = IndexResult("r", "main", "c" * 40, None, "full", files_total=3)
        result.changed_nodes = [("Symbol", "k1"), ("File", "k2")]
        result.changed_symbols = ["a.b"]
        result.seconds = {"total": 1.5}
        stream = io.BytesIO()
        protocol.send(stream, {"results": [result.as_full_dict()]})
        stream.seek(0)
        message = protocol.receive(stream)
        assert message is not None
        assert IndexResult.from_dict(message["results"][0]) == result

    def test_an_oversized_or_broken_line_is_refused(self) -> None:
        with pytest.raises(ValidationError, match="longer than"):
            protocol.receive(io.BytesIO(b'{"op": "' + b"x" * 100 + b'"}\n'), limit=50)
        with pytest.raises(ValidationError, match="not a JSON message"):
            protocol.receive(io.BytesIO(b"{nope\n"))
        assert protocol.receive(io.BytesIO(b"")) is None

    def test_errors_keep_their_class_and_hint(self) -> None:
        sent = error_message(NotFound("no such commit", hint="fetch it", commit="abc"))
        with pytest.raises(NotFound) as caught:
            raise_error(sent["error"])
        assert (caught.value.message, caught.value.hint) == ("no such commit", "fetch it")
        assert caught.value.details == {"commit": "abc"}

    def test_an_unknown_class_is_a_strata_error(self) -> None:
        with pytest.raises(StrataError, match="boom"):
            raise_error({"type": "os.system", "message": "boom"})
