"""C# extraction against tests/fixtures/code/csharp."""

from __future__ import annotations

from strata.code.languages import parse_file
from strata.code.model import Import
from tests.unit.code._fixtures import (
    call_sites,
    calls,
    entrypoints_of,
    extract,
    marked_tests,
    outline,
    symbol,
)

LANG = "csharp"


class TestSymbols:
    """Types, overloads, constructors, local functions and const fields with exact lines."""

    def test_models_outline(self) -> None:
        assert outline(extract(LANG, "Shop/Models.cs")) == [
            ("IValidator", "interface", 6, 9),
            ("IValidator.Validate", "method", 8, 8),
            ("Item", "class", 14, 27),
            ("Item.MaxItems", "constant", 16, 16),
            ("Item.Validate", "method", 18, 21),
            ("Item.Save", "method", 23, 26),
            ("Cart", "class", 29, 54),
            ("Cart.Validate", "method", 33, 37),
            ("Cart.Validate#2", "method", 39, 39),
            ("Cart.Checkout", "method", 41, 46),
            ("Cart.Checkout.Add", "function", 44, 44),
            ("Cart.Receipt", "class", 48, 53),
            ("Cart.Receipt.Receipt", "method", 50, 50),
            ("Cart.Receipt.Total", "method", 52, 52),
        ]

    def test_base_list_splits_class_from_interfaces(self) -> None:
        models = extract(LANG, "Shop/Models.cs")
        item = symbol(models, "Item")
        assert (item.bases, item.implements) == (("BaseRule",), ("IValidator",))
        cart = symbol(models, "Cart")
        assert (cart.bases, cart.implements) == (("Item",), ("IValidator",))

    def test_signatures_and_xml_doc(self) -> None:
        models = extract(LANG, "Shop/Models.cs")
        assert symbol(models, "Item").signature == "public class Item : BaseRule, IValidator"
        assert symbol(models, "Item").docstring == "One line of a cart."
        assert symbol(models, "Item.MaxItems").signature == "public const int MaxItems = 50"
        assert symbol(models, "Cart.Validate#2").signature == "public bool Validate(string qty)"
        assert symbol(models, "Cart.Checkout.Add").signature == "int Add(int a, int b)"

    def test_record_struct_is_a_struct(self) -> None:
        source = b"public record struct Point(int X);\npublic record Line(Point A, Point B);\n"
        assert outline(parse_file("Geo.cs", source)) == [
            ("Point", "struct", 1, 1),
            ("Line", "class", 2, 2),
        ]

    def test_namespace_is_the_package(self) -> None:
        assert extract(LANG, "Shop/Models.cs").package == "Shop.Core"
        assert extract(LANG, "Shop/CartsController.cs").package == "Shop.Web"


class TestCalls:
    """this and base (read as super) receivers, overload and constructor calls."""

    def test_every_call_in_models(self) -> None:
        assert calls(extract(LANG, "Shop/Models.cs")) == [
            ("Item.Validate", "Check", None, 20),
            ("Item.Save", "Validate", "this", 25),
            ("Cart", "List", None, 31),
            ("Cart.Validate", "Validate", "super", 35),
            ("Cart.Validate", "TrueForAll", "items", 36),
            ("Cart.Validate", "Validate", "i", 36),
            ("Cart.Validate#2", "Parse", "int", 39),
            ("Cart.Validate#2", "Validate", None, 39),
            ("Cart.Checkout", "Validate", "this", 43),
            ("Cart.Checkout", "Add", None, 45),
            ("Cart.Checkout", "Receipt", None, 45),
            ("Cart.Checkout", "Total", "new Receipt(Add(1, 2))", 45),
        ]

    def test_base_call_keeps_the_written_callee(self) -> None:
        (base_call,) = [
            c
            for c in call_sites(extract(LANG, "Shop/Models.cs"), "Validate")
            if c.receiver == "super"
        ]
        assert base_call.callee == "base.Validate"


class TestImports:
    """using directives, with aliases."""

    def test_models_imports(self) -> None:
        assert extract(LANG, "Shop/Models.cs").imports == (
            Import(module="System.Collections.Generic", line=1),
            Import(module="System.Decimal", line=2, alias="Num"),
        )

    def test_static_and_global_using(self) -> None:
        source = b"global using Xunit;\nusing static System.Math;\n"
        assert parse_file("Usings.cs", source).imports == (
            Import(module="Xunit", line=1),
            Import(module="System.Math", line=2),
        )


class TestTestsAndEntrypoints:
    """xUnit attributes, controller routes, minimal APIs and Main."""

    def test_xunit_tests(self) -> None:
        tests = extract(LANG, "Shop.Tests/CartTests.cs")
        assert tests.is_test_file
        assert marked_tests(tests) == {
            "CartTests.Validates": "xunit",
            "CartTests.ValidatesMany": "xunit",
        }
        assert symbol(tests, "CartTests.ValidatesMany").decorators == ("Theory", "InlineData(1)")

    def test_nunit_and_mstest_attributes(self) -> None:
        source = (
            b"using NUnit.Framework;\n"
            b"class T {\n  [Test] void A() {}\n  [TestCase(1)] void B(int x) {}\n}\n"
        )
        assert marked_tests(parse_file("T.cs", source)) == {"T.A": "nunit", "T.B": "nunit"}
        source = b"class T {\n  [TestMethod] void A() {}\n}\n"
        assert marked_tests(parse_file("T.cs", source)) == {"T.A": "mstest"}

    def test_controller_routes(self) -> None:
        assert entrypoints_of(extract(LANG, "Shop/CartsController.cs")) == {
            "CartsController.Find": ("http GET /api/Carts/{id}", "aspnet"),
            "CartsController.Create": ("http POST /api/Carts", "aspnet"),
            "CartsController.Remove": ("http DELETE /admin/carts/{id}", "aspnet"),
        }

    def test_minimal_api_and_top_level_statements(self) -> None:
        program = extract(LANG, "Shop/Program.cs")
        assert entrypoints_of(program) == {
            "route:GET /health": ("http GET /health", "aspnet"),
            "CreateCart": ("http POST /carts", "aspnet"),
        }
        assert ("CreateCart", "function", 8, 8) in outline(program)
        assert program.entrypoints == ("static void Main",)

    def test_static_main(self) -> None:
        app = extract(LANG, "Shop/App.cs")
        assert entrypoints_of(app) == {"App.Main": ("static void Main", None)}
        assert app.entrypoints == ("static void Main",)


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, "Shop/Broken.cs")
        assert broken.has_errors
        assert ("Broken.Ok", "method", 3, 3) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'/// Caf\xe9.\nclass A {\n  string s = "\xff";\n}\n'
        assert symbol(parse_file("A.cs", source), "A").docstring == "Caf\ufffd."
