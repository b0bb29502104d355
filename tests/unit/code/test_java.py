"""Java extraction against tests/fixtures/code/java."""

from __future__ import annotations

from strata.code.languages import parse_file
from strata.code.model import Import
from tests.unit.code._fixtures import (
    calls,
    entrypoints_of,
    extract,
    marked_tests,
    outline,
    symbol,
)

LANG = "java"
MAIN = "src/main/java/com/example/shop"


class TestSymbols:
    """Classes, nested classes, overloads, constructors and constants with exact lines."""

    def test_cart_outline(self) -> None:
        assert outline(extract(LANG, f"{MAIN}/Cart.java")) == [
            ("Validator", "interface", 7, 9),
            ("Validator.validate", "method", 8, 8),
            ("Item", "class", 14, 25),
            ("Item.MAX_ITEMS", "constant", 15, 15),
            ("Item.validate", "method", 17, 20),
            ("Item.save", "method", 22, 24),
            ("Cart", "class", 27, 52),
            ("Cart.validate", "method", 30, 34),
            ("Cart.validate#2", "method", 36, 38),
            ("Cart.checkout", "method", 40, 43),
            ("Cart.Receipt", "class", 45, 51),
            ("Cart.Receipt.Receipt", "method", 46, 46),
            ("Cart.Receipt.total", "method", 48, 50),
        ]

    def test_extends_and_implements(self) -> None:
        cart = extract(LANG, f"{MAIN}/Cart.java")
        item = symbol(cart, "Item")
        assert (item.bases, item.implements) == (("BaseRule",), ("Validator",))
        assert symbol(cart, "Cart").implements == ("Validator", "Comparable<Cart>")
        assert symbol(cart, "Cart.Receipt").parent == "Cart"

    def test_signatures_leave_annotations_out(self) -> None:
        cart = extract(LANG, f"{MAIN}/Cart.java")
        validate = symbol(cart, "Item.validate")
        assert validate.signature == "public boolean validate(int qty)"
        assert validate.decorators == ("Override",)
        assert symbol(cart, "Item.MAX_ITEMS").signature == "public static final int MAX_ITEMS = 50"
        assert symbol(cart, "Cart.validate#2").signature == "public boolean validate(String qty)"
        assert symbol(cart, "Item").docstring == "One line of a cart."

    def test_only_static_final_fields_are_constants(self) -> None:
        source = b"class A {\n  static final int X = 1;\n  final int y = 2;\n  static int z;\n}\n"
        assert [s.qualname for s in parse_file("A.java", source).symbols] == ["A", "A.X"]


class TestCalls:
    """this/super calls, unqualified calls and constructor calls keep their callers."""

    def test_every_call_in_cart(self) -> None:
        assert calls(extract(LANG, f"{MAIN}/Cart.java")) == [
            ("Item.validate", "check", None, 19),
            ("Item.save", "validate", "this", 23),
            ("Cart", "ArrayList", None, 28),
            ("Cart.validate", "validate", "super", 32),
            ("Cart.validate", "allMatch", "items.stream()", 33),
            ("Cart.validate", "stream", "items", 33),
            ("Cart.validate", "validate", "i", 33),
            ("Cart.validate#2", "parseInt", "Integer", 37),
            ("Cart.validate#2", "validate", None, 37),
            ("Cart.checkout", "size", "items", 41),
            ("Cart.checkout", "validate", "this", 41),
            ("Cart.checkout", "Receipt", None, 42),
            ("Cart.checkout", "requireNonNull", None, 42),
            ("Cart.checkout", "total", "new Receipt(requireNonNull(this))", 42),
        ]


class TestImportsAndPackage:
    """Imports as written, wildcard and static; the package declaration."""

    def test_cart_imports(self) -> None:
        cart = extract(LANG, f"{MAIN}/Cart.java")
        assert cart.imports == (
            Import(module="java.math.BigDecimal", line=3),
            Import(module="java.util.*", line=4),
            Import(module="java.util.Objects.requireNonNull", line=5),
        )
        assert cart.package == "com.example.shop"


class TestTestsAndEntrypoints:
    """JUnit annotations, Spring mappings joined with the class prefix, and main."""

    def test_junit_tests(self) -> None:
        tests = extract(LANG, "src/test/java/com/example/shop/CartTest.java")
        assert tests.is_test_file
        assert marked_tests(tests) == {
            "CartTest.validatesOne": "junit",
            "CartTest.validatesMany": "junit",
        }
        assert symbol(tests, "CartTest.validatesMany").decorators == (
            "ParameterizedTest",
            "ValueSource(ints = {1, 2})",
        )
        assert tests.frameworks == ("junit",)

    def test_spring_routes(self) -> None:
        controller = extract(LANG, f"{MAIN}/CartController.java")
        assert entrypoints_of(controller) == {
            "CartController.find": ("http GET /api/carts/{id}", "spring"),
            "CartController.create": ("http POST /api/carts", "spring"),
            "CartController.legacy": ("http GET,HEAD /api/carts/legacy", "spring"),
        }
        assert not controller.is_test_file

    def test_static_main(self) -> None:
        app = extract(LANG, f"{MAIN}/App.java")
        assert entrypoints_of(app) == {"App.main": ("static void main", None)}
        assert app.entrypoints == ("static void main",)


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, f"{MAIN}/Broken.java")
        assert broken.has_errors
        assert ("Broken.ok", "method", 4, 6) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'/** Caf\xe9. */\nclass A {\n  String s = "\xff";\n}\n'
        assert symbol(parse_file("A.java", source), "A").docstring == "Caf\ufffd."
