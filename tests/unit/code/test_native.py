"""The compiled build of the code layer (strata.code.native): a real mypyc build of
a small package, run when it matches its sources and never when it does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from strata.code import native

SRC = Path(native.__file__).resolve().parents[2]
PROBE = """
import sys
sys.path[:0] = [{src!r}, {tmp!r}]
from pathlib import Path
from strata.code import native
guarded = {guarded}
status = native.choose(Path({root!r}), ("calc.py",), "tinypkg") if guarded else None
import tinypkg.calc as calc
print(calc.__file__.endswith(".py"), calc.answer(), status.reason if status else "-")
"""


def _probe(tmp: Path, *, guarded: bool = True, env: dict[str, str] | None = None) -> list[str]:
    code = PROBE.format(src=str(SRC), tmp=str(tmp), root=str(tmp / "tinypkg"), guarded=guarded)
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().split(" ", 2)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("native")
    package = tmp / "tinypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "calc.py").write_text("def answer() -> int:\n    return 41 + 1\n")
    status = native.build(package, ("calc.py",), group="tinypkg._mypyc", work=tmp / "build")
    assert status.compiled, status.reason
    return tmp


class TestInspect:
    """What the manifest and the files on disk say about a build."""

    def test_a_package_never_built_runs_its_sources(self, tmp_path: Path) -> None:
        (tmp_path / "calc.py").write_text("X = 1\n")
        assert native.inspect(tmp_path, ("calc.py",)) == native.Status(False, "not built")

    def test_an_extension_module_without_a_manifest_is_not_trusted(self, tmp_path: Path) -> None:
        (tmp_path / "calc.py").write_text("X = 1\n")
        (tmp_path / f"calc{native._suffix()}").write_bytes(b"not a library")
        status = native.inspect(tmp_path, ("calc.py",))
        assert not status.compiled
        assert "without a manifest" in status.reason

    def test_strata_lists_only_modules_that_exist(self) -> None:
        assert all((native.PACKAGE_ROOT / m).is_file() for m in native.COMPILED)
        assert not any(m.endswith("__init__.py") for m in native.COMPILED)


class TestBuild:
    """A mypyc build of a one-module package, imported by fresh interpreters."""

    def test_the_build_runs_while_it_matches_its_sources(self, built: Path) -> None:
        assert _probe(built) == ["False", "42", "built from these sources"]

    def test_strata_native_0_runs_the_sources(self, built: Path) -> None:
        assert _probe(built, env={native.DISABLE_ENV: "0"}) == ["True", "42", "STRATA_NATIVE=0"]

    def test_an_edited_source_runs_instead_of_its_stale_build(self, built: Path) -> None:
        calc = built / "tinypkg" / "calc.py"
        original = calc.read_text()
        calc.write_text(original.replace("41 + 1", "41 + 2"))
        try:
            # Python itself prefers the extension module: without the guard the old code runs.
            assert _probe(built, guarded=False)[:2] == ["False", "42"]
            assert _probe(built) == ["True", "43", "calc.py changed since the build"]
        finally:
            calc.write_text(original)
        assert _probe(built)[:2] == ["False", "42"]


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="CI builds before testing")
def test_ci_tests_the_compiled_build() -> None:
    """scripts/bootstrap compiled these sources, so the suite exercises what users run."""
    assert native.guard().compiled, native.guard().reason
    from strata.code.flow import demand

    assert not str(demand.__file__).endswith(".py")
