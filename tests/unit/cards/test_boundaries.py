"""The path map: parsed strictly, applied by the deepest folder that holds a file."""

from __future__ import annotations

import pytest

from strata.cards.boundaries import Boundary, PathMap, holder, parse_path_map, recorded_map
from strata.cards.compile import compile_card
from strata.cards.gate import check_card, split_frontmatter
from strata.cards.graph import regroup
from strata.errors import ValidationError
from tests.unit.cards.snapshot import snapshot


class TestParse:
    """A map is a list of folders with optional names and owners; anything else is refused."""

    def test_entries(self) -> None:
        parsed = parse_path_map(
            "packages:\n  - core/ops/\n  - path: web\n    name: site\n    owners: ['@web']\n"
        )
        assert parsed.entries == (
            Boundary("core/ops", "core/ops"),
            Boundary("web", "site", ("@web",)),
        )
        assert not parsed.replace
        assert parse_path_map("") == PathMap()
        assert parse_path_map("replace: true\n").replace

    @pytest.mark.parametrize(
        ("text", "why"),
        [
            ("packages: [", "not YAML"),
            ("- a\n", "must be a mapping"),
            ("packages: []\nextra: 1\n", "unknown keys"),
            ("packages:\n  - path: ../x\n", "not a folder inside"),
            ("packages:\n  - path: a/./b\n", "not a folder inside"),
            ("packages:\n  - name: x\n", "needs a 'path'"),
            ("packages:\n  - a\n  - a/\n", "mapped twice"),
            ("packages:\n  - {path: a, name: n}\n  - {path: b, name: n}\n", "used twice"),
            ("packages:\n  - {path: a, owners: '@x'}\n", "list of names"),
            ("replace: yes please\n", "true or false"),
        ],
    )
    def test_refused(self, text: str, why: str) -> None:
        with pytest.raises(ValidationError, match=why):
            parse_path_map(text)


def test_holder_is_the_deepest_folder() -> None:
    folders = {".": 1, "a": 1, "a/b": 1}
    assert holder("a/b/c/x.py", folders) == "a/b"
    assert holder("a/bc/x.py", folders) == "a"
    assert holder("z.py", folders) == "."
    assert holder("z/z.py", {"a": 1}) is None


class TestRegroup:
    """Mapped folders split the detected packages; the cards carry the map they used."""

    def test_a_mapped_folder_takes_its_files(self) -> None:
        snap = snapshot()
        regroup(snap, PathMap((Boundary("core/sub", "unused"), Boundary("web", "site"))))
        assert sorted(snap.packages) == ["core", "web"]  # a folder holding nothing is dropped
        assert snap.packages["web"].name == "site"
        assert snap.package_of["web/app.js"] == "web"

    def test_replace_puts_the_rest_in_the_root(self) -> None:
        snap = snapshot()
        snap.package_of["core/deep/x.py"] = "core"
        regroup(snap, PathMap((Boundary("core/deep", "deep"),), replace=True))
        assert snap.package_of == {
            "core/calc.py": ".",
            "core/test_calc.py": ".",
            "web/app.js": ".",
            "core/deep/x.py": "core/deep",
        }
        assert snap.packages["."].name == "demo"

    def test_the_map_is_recorded_and_fingerprinted(self) -> None:
        snap = snapshot()
        plain = compile_card(snap, "core")
        boundaries = PathMap((Boundary("web", "web-app"),))
        snap.boundaries = boundaries
        mapped = compile_card(snap, "core")
        assert mapped.fingerprint != plain.fingerprint
        assert mapped.sources["map:web"] == "web-app"
        assert recorded_map(split_frontmatter(mapped.markdown)[0]) == boundaries
        assert recorded_map(split_frontmatter(plain.markdown)[0]) == PathMap()
        assert check_card(mapped, snap).ok
