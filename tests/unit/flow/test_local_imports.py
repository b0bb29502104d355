"""An import inside a function binds its names in that function (and the functions
nested in it) only, not across the file."""

from __future__ import annotations

from tests.unit.flow._pipeline import edges, unresolved

FILES = {
    "pkg/__init__.py": "",
    "pkg/testing.py": """
        class Fake:
            def launch(self):
                return 0


        def helper():
            return 1
        """,
    "pkg/real.py": """
        class Real:
            def launch(self):
                return 1
        """,
    "pkg/app.py": """
        from .real import Real as cls


        def build():
            from .testing import Fake as cls
            return cls().launch()


        def build_real():
            return cls().launch()


        def outer():
            from .testing import helper

            def inner():
                return helper()

            return inner()


        def elsewhere():
            return helper()
        """,
}


class TestFunctionLocalImports:
    """``from .testing import X as cls`` inside a function is seen there only."""

    def test_the_local_import_wins_inside_its_function(self) -> None:
        found = {(c, d) for c, d, _ in edges(FILES, "pkg/app.py") if c == "build"}
        assert ("build", "pkg/testing.py:Fake") in found
        assert ("build", "pkg/testing.py:Fake.launch") in found
        assert not any("real.py" in d for _, d in found)

    def test_other_functions_see_the_file_import(self) -> None:
        found = {(c, d) for c, d, _ in edges(FILES, "pkg/app.py") if c == "build_real"}
        assert ("build_real", "pkg/real.py:Real") in found
        assert ("build_real", "pkg/real.py:Real.launch") in found
        assert not any("testing.py" in d for _, d in found)

    def test_a_nested_function_sees_the_enclosing_functions_import(self) -> None:
        assert ("outer.inner", "pkg/testing.py:helper", "import") in edges(FILES, "pkg/app.py")

    def test_a_sibling_function_does_not(self) -> None:
        # Only the repository-wide name rule may still guess it (one `helper` exists).
        found = {(d, r) for c, d, r in edges(FILES, "pkg/app.py") if c == "elsewhere"}
        assert found == {("pkg/testing.py:helper", "name_only")}

    def test_without_a_guess_it_stays_unresolved(self) -> None:
        files = dict(FILES)
        files["pkg/other.py"] = "def helper():\n    return 2\n"  # two helpers: no guess
        assert unresolved(files, "pkg/app.py")["elsewhere"] == ["helper@24"]
