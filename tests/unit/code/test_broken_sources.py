"""Files cut off or broken mid-declaration (a work in progress, a truncated fixture)
extract to records the ontology accepts, and their parse ends."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from strata.code.languages import parse_file

# tree-sitter's recovery reads the cut-off comment as a declaration with no name.
CUT_JAVA = (
    b"import a.N;\n/**\n */\npublic interface Box<B extends @N Object>\n"
    b"    extends Map<Tok<? extends @M B>, B> {\n  /**\n"
    b"   * <p>{@code put(Foo.class, foo)} is like {@code"
)


class TestNamelessDeclarations:
    """A declaration without a name is no symbol; what it holds stays with its parent."""

    def test_cut_off_java_keeps_only_named_symbols(self) -> None:
        extract = parse_file("Box.java", CUT_JAVA)
        assert [(s.name, s.qualname) for s in extract.symbols] == [("Box", "Box")]
        assert extract.has_errors

    def test_no_symbol_or_import_is_nameless_in_cut_off_files(self) -> None:
        sources = {
            "Box.java": CUT_JAVA,
            "a.kt": b"package p\nimport \nclass A {\n  fun f() {}\n  class",
            "A.cs": b"namespace N { class A { void F() { } struct",
            "a.go": b"package p\nfunc (r *R) ",
            "a.rs": b"use ;\nimpl A { fn f(&self) {} fn",
            "a.ts": b"import {} from '';\nclass { m() {} }\nfunction",
            "a.php": b"<?php\nclass { function f() {} }\nfunction",
        }
        for path, source in sources.items():
            extract = parse_file(path, source)
            for symbol in extract.symbols:
                assert symbol.name.strip(), (path, symbol)
                assert symbol.qualname.strip(), (path, symbol)
            assert all(imp.module for imp in extract.imports), (path, extract.imports)


class TestParseEnds:
    """A grammar that loops on an input is never given that input."""

    def test_kotlin_cut_off_annotation_at_the_end(self) -> None:
        # In its own process: before the fix the parse never returned (tree-sitter-
        # kotlin 1.0.1 and 1.1.0), and a hung test would hold the whole suite.
        code = textwrap.dedent(
            """
            from strata.code.languages import parse_file
            extract = parse_file("a.kt", b"val x = 1\\n@get:S")
            print(extract.lines)
            """
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "2"
