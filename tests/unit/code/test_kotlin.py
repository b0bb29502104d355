"""Kotlin extraction against tests/fixtures/code/kotlin, and its JVM module resolution."""

from __future__ import annotations

from pathlib import Path

from strata.code.languages import adapter_for_path, parse_file
from strata.code.model import Import
from strata.code.modules import FAMILY, ModuleIndex, detect_packages
from strata.code.resolver import Resolver
from tests.unit.code._fixtures import (
    FIXTURES,
    calls,
    entrypoints_of,
    extract,
    marked_tests,
    outline,
    symbol,
)

LANG = "kotlin"
MAIN = "src/main/kotlin/com/example/shop"


class TestRegistry:
    """.kt and .kts map to the Kotlin adapter, which shares Java's module system."""

    def test_extensions(self) -> None:
        for path in ("src/main/kotlin/A.kt", "build.gradle.kts", "B.KT"):
            adapter = adapter_for_path(path)
            assert adapter is not None
            assert adapter.language == "kotlin"

    def test_same_family_as_java(self) -> None:
        assert FAMILY["kotlin"] == FAMILY["java"]


class TestSymbols:
    """Classes, interfaces, objects, nested classes, companion constants, with exact lines."""

    def test_cart_outline(self) -> None:
        assert outline(extract(LANG, f"{MAIN}/Cart.kt")) == [
            ("Validator", "interface", 7, 9),
            ("Validator.validate", "method", 8, 8),
            ("Item", "class", 14, 27),
            ("Item.MAX_ITEMS", "constant", 16, 16),
            ("Item.validate", "method", 19, 22),
            ("Item.save", "method", 24, 26),
            ("Cart", "class", 29, 47),
            ("Cart.validate", "method", 32, 35),
            ("Cart.checkout", "method", 37, 40),
            ("Cart.compareTo", "method", 42, 42),
            ("Cart.Receipt", "class", 44, 46),
            ("Cart.Receipt.total", "method", 45, 45),
        ]

    def test_superclass_and_interfaces(self) -> None:
        cart = extract(LANG, f"{MAIN}/Cart.kt")
        item = symbol(cart, "Item")
        assert (item.bases, item.implements) == (("BaseRule",), ("Validator",))
        assert symbol(cart, "Cart").implements == ("Validator", "Comparable<Cart>")
        assert symbol(cart, "Cart.Receipt").parent == "Cart"

    def test_signatures_docs_and_annotations(self) -> None:
        cart = extract(LANG, f"{MAIN}/Cart.kt")
        validate = symbol(cart, "Item.validate")
        assert validate.signature == "override fun validate(qty: Int): Boolean"
        assert validate.decorators == ('Suppress("UNUSED")',)
        assert symbol(cart, "Item.MAX_ITEMS").signature == "const val MAX_ITEMS = 50"
        assert symbol(cart, "Cart.Receipt.total").signature == "fun total(): BigDecimal"
        assert symbol(cart, "Item").docstring == "One line of a cart."
        assert symbol(cart, "Item").signature == "open class Item : BaseRule(), Validator"

    def test_kinds_and_only_const_properties(self) -> None:
        source = (
            b"enum class Color { RED }\nobject Registry {\n  val plain = 1\n}\n"
            b"typealias Name = String\nconst val LIMIT = 3\nval other = 4\nfun top() {}\n"
        )
        assert [(s.qualname, s.kind) for s in parse_file("A.kt", source).symbols] == [
            ("Color", "enum"),
            ("Registry", "class"),
            ("Name", "type"),
            ("LIMIT", "constant"),
            ("top", "function"),
        ]


class TestCalls:
    """this/super calls, bare calls and constructor calls keep their callers."""

    def test_every_call_in_cart(self) -> None:
        assert calls(extract(LANG, f"{MAIN}/Cart.kt")) == [
            ("Item.validate", "check", None, 21),
            ("Item.save", "validate", "this", 25),
            ("Cart", "mutableListOf", None, 30),
            ("Cart.validate", "validate", "super", 33),
            ("Cart.validate", "all", "items", 34),
            ("Cart.validate", "validate", "it", 34),
            ("Cart.checkout", "validate", "this", 38),
            ("Cart.checkout", "Receipt", None, 39),
            ("Cart.checkout", "round", "Prices", 39),
            ("Cart.checkout", "total", "Receipt(this)", 39),
        ]


class TestImportsAndPackage:
    """Imports as written (wildcards end in .*, aliases kept) and the package header."""

    def test_cart_imports(self) -> None:
        cart = extract(LANG, f"{MAIN}/Cart.kt")
        assert cart.imports == (
            Import(module="com.example.shop.pricing.Prices", line=3),
            Import(module="java.math.BigDecimal", line=4),
            Import(module="kotlin.collections.*", line=5),
        )
        assert cart.package == "com.example.shop"

    def test_alias(self) -> None:
        source = b"package a\n\nimport org.junit.jupiter.api.Assertions.assertTrue as ok\n"
        assert parse_file("A.kt", source).imports == (
            Import(module="org.junit.jupiter.api.Assertions.assertTrue", line=3, alias="ok"),
        )


class TestTestsAndEntrypoints:
    """JUnit annotations, Spring mappings joined with the class prefix, and fun main."""

    def test_junit_tests(self) -> None:
        tests = extract(LANG, "src/test/kotlin/com/example/shop/CartTest.kt")
        assert tests.is_test_file
        assert marked_tests(tests) == {
            "CartTest.validatesOne": "junit",
            "CartTest.validatesMany": "junit",
        }
        assert tests.frameworks == ("junit",)

    def test_spring_routes(self) -> None:
        controller = extract(LANG, f"{MAIN}/CartController.kt")
        assert entrypoints_of(controller) == {
            "CartController.find": ("http GET /api/carts/{id}", "spring"),
            "CartController.create": ("http POST /api/carts", "spring"),
            "CartController.legacy": ("http GET,HEAD /api/carts/legacy", "spring"),
        }
        assert not controller.is_test_file

    def test_fun_main(self) -> None:
        app = extract(LANG, f"{MAIN}/App.kt")
        assert entrypoints_of(app) == {"main": ("fun main", None)}
        assert app.entrypoints == ("fun main",)

    def test_a_method_named_main_is_no_entrypoint(self) -> None:
        source = b"class A {\n  fun main() {}\n}\n"
        assert parse_file("A.kt", source).entrypoints == ()


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, f"{MAIN}/Broken.kt")
        assert broken.has_errors
        assert ("Broken.ok", "method", 4, 6) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'/** Caf\xe9. */\nclass A {\n  val s = "\xff"\n}\n'
        assert symbol(parse_file("A.kt", source), "A").docstring == "Caf\ufffd."


class TestResolution:
    """The fixture resolves through this/super, same-package siblings and imports."""

    def setup_method(self) -> None:
        root = FIXTURES / LANG
        paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.kt"))
        files = {p: parse_file(p, (root / p).read_bytes()) for p in paths}
        self.resolver = Resolver(ModuleIndex(files, []))

    def edges(self, path: str) -> set[tuple[str | None, str, str]]:
        return {
            (c.src_qualname, f"{Path(c.dst_path).name}:{c.dst_qualname}", c.resolution)
            for c in self.resolver.resolve_file(path).calls
        }

    def test_same_name_trap(self) -> None:
        edges = self.edges(f"{MAIN}/Cart.kt")
        assert ("Item.save", "Cart.kt:Item.validate", "self") in edges
        assert ("Cart.checkout", "Cart.kt:Cart.validate", "self") in edges
        assert ("Cart.validate", "Cart.kt:Item.validate", "hierarchy") in edges
        assert ("Item.save", "Cart.kt:Cart.validate", "self") not in edges
        assert ("Cart.checkout", "Cart.kt:Item.validate", "self") not in edges

    def test_siblings_and_imports(self) -> None:
        edges = self.edges(f"{MAIN}/Cart.kt")
        # BaseRule is in another file of the same package: no import needed
        assert ("Item.validate", "BaseRule.kt:BaseRule.check", "hierarchy") in edges
        assert ("Cart.checkout", "Prices.kt:Prices.round", "qualified") in edges
        assert ("main", "Cart.kt:Cart", "import") in self.edges(f"{MAIN}/App.kt")

    def test_gradle_kts_is_a_package(self) -> None:
        found = detect_packages(["build.gradle.kts"], {})
        assert [(p.path, p.ecosystem) for p in found] == [("", "gradle")]
