"""Go extraction against tests/fixtures/code/go."""

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

LANG = "go"


class TestSymbols:
    """Types, interface methods and Receiver.Method qualnames with exact lines."""

    def test_models_outline(self) -> None:
        assert outline(extract(LANG, "shop/models.go")) == [
            ("MaxItems", "constant", 10, 10),
            ("Validator", "interface", 13, 15),
            ("Validator.Validate", "method", 14, 14),
            ("Item", "struct", 18, 20),
            ("Item.Validate", "method", 23, 28),
            ("Item.Save", "method", 31, 33),
            ("Cart", "struct", 36, 39),
            ("Cart.Validate", "method", 41, 50),
            ("Cart.Checkout", "method", 52, 55),
            ("Receipt", "struct", 57, 57),
            ("Receipt.String", "method", 59, 59),
        ]

    def test_methods_hang_off_their_receiver_type(self) -> None:
        models = extract(LANG, "shop/models.go")
        assert symbol(models, "Item.Validate").parent == "Item"
        assert symbol(models, "Cart.Checkout").parent == "Cart"
        assert symbol(models, "Validator.Validate").parent == "Validator"

    def test_embedded_struct_is_a_base(self) -> None:
        assert symbol(extract(LANG, "shop/models.go"), "Cart").bases == ("Item",)

    def test_signatures_and_doc_comments(self) -> None:
        models = extract(LANG, "shop/models.go")
        validate = symbol(models, "Item.Validate")
        assert validate.signature == "func (i *Item) Validate(qty int) error"
        assert validate.docstring == "Validate checks the quantity."
        assert symbol(models, "Item").signature == "type Item struct"
        assert symbol(models, "Item").docstring == "Item is one line of a cart."
        assert symbol(models, "MaxItems").signature == "const MaxItems = 50"
        assert symbol(models, "Cart.Validate").docstring is None

    def test_grouped_declarations_and_trailing_comments(self) -> None:
        source = (
            b"package x\n\n"
            b"type (\n"
            b"\t// A is first.\n"
            b"\tA struct{}\n"
            b"\tB = int\n"
            b")\n\n"
            b"var v = 1 // not a doc comment\n"
            b"func F() {}\n"
        )
        grouped = parse_file("x.go", source)
        assert outline(grouped) == [
            ("A", "struct", 5, 5),
            ("B", "type", 6, 6),
            ("F", "function", 10, 10),
        ]
        assert symbol(grouped, "A").signature == "type A struct"
        assert symbol(grouped, "A").docstring == "A is first."
        assert symbol(grouped, "B").signature == "type B = int"
        assert symbol(grouped, "F").docstring is None

    def test_package_clause(self) -> None:
        assert extract(LANG, "shop/models.go").package == "shop"
        assert extract(LANG, "cmd/server/main.go").package == "main"


class TestCalls:
    """The method's own receiver variable reads as self; literals count as constructors."""

    def test_every_call_in_models(self) -> None:
        assert calls(extract(LANG, "shop/models.go")) == [
            ("Item.Validate", "New", "errors", 25),
            ("Item.Save", "Validate", "self", 32),
            ("Cart.Validate", "Validate", "self.Item", 43),
            ("Cart.Validate", "add", None, 43),
            ("Cart.Validate", "Validate", "it", 47),
            ("Cart.Checkout", "Validate", "self", 53),
            ("Cart.Checkout", "len", None, 53),
            ("Cart.Checkout", "Receipt", None, 54),
            ("Cart.Checkout", "String", "Receipt{Total: 1}", 54),
            ("Cart.Checkout", "ToUpper", "str", 54),
        ]

    def test_callee_keeps_the_written_receiver(self) -> None:
        saves = call_sites(extract(LANG, "shop/models.go"), "Validate")
        assert {c.callee for c in saves} == {
            "i.Validate",
            "c.Item.Validate",
            "it.Validate",
            "c.Validate",
        }


class TestImports:
    """Import paths with aliases, dot and blank imports."""

    def test_models_imports(self) -> None:
        assert extract(LANG, "shop/models.go").imports == (
            Import(module="errors", line=5),
            Import(module="strings", line=6, alias="str"),
        )

    def test_dot_and_blank_imports(self) -> None:
        source = b'package x\n\nimport (\n\t. "strings"\n\t_ "embed"\n)\n'
        assert parse_file("x.go", source).imports == (
            Import(module="strings", line=4, names=("*",), alias="."),
            Import(module="embed", line=5, alias="_"),
        )


class TestTestsAndEntrypoints:
    """go test functions by name, func main, and net/http handlers."""

    def test_go_test_functions(self) -> None:
        tests = extract(LANG, "shop/models_test.go")
        assert tests.is_test_file
        assert marked_tests(tests) == {"TestCartValidate": "go", "BenchmarkCheckout": "go"}
        assert not extract(LANG, "shop/models.go").is_test_file

    def test_main_and_http_handlers(self) -> None:
        server = extract(LANG, "cmd/server/main.go")
        assert entrypoints_of(server) == {
            "listCarts": ("http GET /carts", "nethttp"),
            "main": ("func main", None),
            "main.route:ANY /health": ("http ANY /health", "nethttp"),
        }
        assert ("main.route:ANY /health", "function", 17, 19) in outline(server)
        assert server.entrypoints == ("func main",)
        assert server.frameworks == ("nethttp",)
        assert [c.caller for c in call_sites(server, "WriteHeader")] == ["main.route:ANY /health"]

    def test_main_outside_package_main_is_no_entrypoint(self) -> None:
        lib = parse_file("lib.go", b"package lib\n\nfunc main() {}\n")
        assert entrypoints_of(lib) == {}


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, "shop/broken.go")
        assert broken.has_errors
        assert ("ok", "function", 3, 5) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'package x\n\n// Caf\xe9 opens.\nfunc Open() string { return "\xff" }\n'
        opened = parse_file("x.go", source)
        assert symbol(opened, "Open").docstring == "Caf\ufffd opens."
