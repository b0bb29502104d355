"""The language registry: extension mapping, unknown files, one query per process."""

from __future__ import annotations

import pytest

from strata.code.languages import (
    ADAPTERS,
    adapter_for_language,
    adapter_for_path,
    module_system_for,
    parse_file,
)
from strata.code.languages.base import LanguageAdapter, compiled_query
from strata.errors import ValidationError
from strata.ontology import load_ontology
from strata.settings import PROJECT_ROOT


class TestAdapterForPath:
    """Each documented extension maps to its language; anything else maps to None."""

    @pytest.mark.parametrize(
        ("path", "language"),
        [
            ("pkg/mod.py", "python"),
            ("pkg/stub.pyi", "python"),
            ("src/app.ts", "typescript"),
            ("src/app.mts", "typescript"),
            ("src/app.cts", "typescript"),
            ("src/types.d.ts", "typescript"),
            ("src/App.tsx", "tsx"),
            ("src/app.js", "javascript"),
            ("src/App.jsx", "javascript"),
            ("src/app.mjs", "javascript"),
            ("src/app.cjs", "javascript"),
            ("cmd/main.go", "go"),
            ("src/main/java/A.java", "java"),
            ("src/lib.rs", "rust"),
            ("Shop/Cart.cs", "csharp"),
            ("Shop/CART.CS", "csharp"),
        ],
    )
    def test_known_extensions(self, path: str, language: str) -> None:
        adapter = adapter_for_path(path)
        assert adapter is not None
        assert adapter.language == language

    @pytest.mark.parametrize("path", ["README.md", "Makefile", "lib.c", "a.py.bak", ".py/x"])
    def test_unknown_extensions(self, path: str) -> None:
        assert adapter_for_path(path) is None

    def test_parse_file_refuses_unknown_files(self) -> None:
        with pytest.raises(ValidationError):
            parse_file("notes.txt", b"hello")

    def test_every_extension_has_one_owner(self) -> None:
        extensions = [ext for adapter in ADAPTERS for ext in adapter.extensions]
        assert len(extensions) == len(set(extensions))


class TestQueries:
    """Every adapter's query compiles, and only once per process."""

    @pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.language)
    def test_query_is_compiled_once(self, adapter: LanguageAdapter) -> None:
        first = adapter.query()
        assert adapter.query() is first
        assert compiled_query(adapter.ts_language(), adapter.query_file) is first

    @pytest.mark.parametrize("adapter", ADAPTERS, ids=lambda a: a.language)
    def test_empty_source(self, adapter: LanguageAdapter) -> None:
        extract = adapter.extract(f"empty{adapter.extensions[0]}", b"")
        assert extract.language == adapter.language
        assert (extract.lines, extract.symbols, extract.calls, extract.imports) == (0, (), (), ())
        assert not extract.has_errors


class TestModuleSystems:
    """Every adapter names a module system whose manifests the ontology accepts."""

    def test_manifest_ecosystems_are_in_the_ontology(self) -> None:
        allowed = load_ontology(PROJECT_ROOT / "ontology").node("Package").state.all["ecosystem"]
        declared = {m.ecosystem for a in ADAPTERS for m in a.module_system.manifests}
        assert declared <= set(allowed.enum)

    def test_adapter_for_language(self) -> None:
        for adapter in ADAPTERS:
            assert adapter_for_language(adapter.language) is adapter
            assert module_system_for(adapter.language) is adapter.module_system
        assert module_system_for("cobol") is None
