"""Rust extraction against tests/fixtures/code/rust."""

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

LANG = "rust"


class TestSymbols:
    """Items, impl methods named Type.method, modules and attributes with exact lines."""

    def test_models_outline(self) -> None:
        assert outline(extract(LANG, "src/models.rs")) == [
            ("MAX_ITEMS", "constant", 7, 7),
            ("Validate", "trait", 10, 12),
            ("Validate.validate", "method", 11, 11),
            ("Item", "struct", 15, 18),
            ("Item.validate", "method", 21, 23),
            ("Item.save", "method", 27, 29),
            ("Cart", "struct", 32, 35),
            ("Cart.new", "method", 38, 40),
            ("Cart.validate", "method", 42, 45),
            ("Cart.checkout", "method", 47, 50),
            ("tests", "module", 53, 65),
            ("tests.cart_validates", "function", 57, 60),
            ("tests.helper", "function", 62, 64),
        ]

    def test_trait_impls_are_recorded(self) -> None:
        models = extract(LANG, "src/models.rs")
        assert symbol(models, "Item").implements == ("Validate",)
        assert symbol(models, "Item.validate").implements == ("Validate",)
        assert symbol(models, "Item.save").implements == ()
        assert symbol(models, "Item.save").parent == "Item"

    def test_doc_comments_attributes_and_signatures(self) -> None:
        models = extract(LANG, "src/models.rs")
        item = symbol(models, "Item")
        assert item.docstring == "One line of a cart."
        assert item.decorators == ("derive(Debug, Clone)",)
        assert item.signature == "pub struct Item"
        assert symbol(models, "MAX_ITEMS").docstring == "Largest quantity per line."
        assert (
            symbol(models, "Validate.validate").signature == "fn validate(&self, qty: u32) -> bool"
        )
        assert symbol(models, "Cart.validate").docstring is None

    def test_package_is_the_crate_path(self) -> None:
        assert extract(LANG, "src/models.rs").package == "crate::models"
        assert extract(LANG, "src/main.rs").package == "crate"
        assert parse_file("src/shop/mod.rs", b"").package == "crate::shop"
        assert extract(LANG, "tests/cart.rs").package is None


class TestCalls:
    """self calls, paths, struct literals and calls written inside macro arguments."""

    def test_every_call_in_models(self) -> None:
        assert calls(extract(LANG, "src/models.rs")) == [
            ("Item.validate", "check", None, 22),
            ("Item.save", "validate", "self", 28),
            ("Cart.new", "Cart", None, 39),
            ("Cart.new", "new", "Map", 39),
            ("Cart.new", "new", "Vec", 39),
            ("Cart.validate", "add", None, 44),
            ("Cart.validate", "all", "self.items.iter()", 44),
            ("Cart.validate", "iter", "self.items", 44),
            ("Cart.validate", "validate", "i", 44),
            ("Cart.checkout", "len", "self.items", 48),
            ("Cart.checkout", "validate", "self", 48),
            ("Cart.checkout", "default", "Receipt", 49),
            ("Cart.checkout", "total", "Receipt::default()", 49),
            ("tests.cart_validates", "new", "Cart", 59),
            ("tests.cart_validates", "validate", "Cart::new()", 59),
            ("tests.helper", "new", "Cart", 63),
        ]

    def test_macro_argument_calls(self) -> None:
        assert calls(extract(LANG, "src/main.rs")) == [
            ("main", "new", "ShopCart", 4),
            ("main", "checkout", "cart", 5),
        ]


class TestImports:
    """use trees are flattened to one record per name, with aliases."""

    def test_models_imports(self) -> None:
        assert extract(LANG, "src/models.rs").imports == (
            Import(module="std::collections", line=3, names=("HashMap",), alias="Map"),
            Import(module="crate::rules", line=4, names=("check",)),
            Import(module="crate::rules", line=4, names=("Rule",)),
            Import(module="super", line=55, names=("*",)),
        )

    def test_nested_use_tree(self) -> None:
        source = b"use a::{b::{C as D, self}, e::*};\nuse serde;\n"
        assert parse_file("x.rs", source).imports == (
            Import(module="a::b", line=1, names=("C",), alias="D"),
            Import(module="a", line=1, names=("b",)),
            Import(module="a::e", line=1, names=("*",)),
            Import(module="serde", line=2),
        )

    def test_a_bare_path_renamed_is_the_module_itself(self) -> None:
        # tokio's tests rename crates: `use std as tokio;`, `use ::tokio as tokio1;`
        source = (
            b"use std as tokio;\nuse ::tokio as tokio1;\nuse ::std::fmt;\n"
            b"fn f() { use Kind as K; }\n"
        )
        assert parse_file("x.rs", source).imports == (
            Import(module="std", line=1, alias="tokio"),
            Import(module="tokio", line=2, alias="tokio1"),
            Import(module="std", line=3, names=("fmt",)),
            Import(module="Kind", line=4, alias="K"),
        )


class TestTestsAndEntrypoints:
    """cargo tests by attribute or cfg(test) module; fn main of a binary."""

    def test_unit_tests_in_cfg_test_module(self) -> None:
        models = extract(LANG, "src/models.rs")
        assert marked_tests(models) == {
            "tests.cart_validates": "cargo",
            "tests.helper": "cargo",
        }
        assert not models.is_test_file

    def test_integration_test_file(self) -> None:
        integration = extract(LANG, "tests/cart.rs")
        assert integration.is_test_file
        assert marked_tests(integration) == {"checkout_is_zero": "cargo"}
        assert symbol(integration, "checkout_is_zero").decorators == ("tokio::test",)

    def test_main_of_a_binary(self) -> None:
        main = extract(LANG, "src/main.rs")
        assert entrypoints_of(main) == {"main": ("fn main", None)}
        assert main.entrypoints == ("fn main",)
        assert entrypoints_of(parse_file("src/lib.rs", b"fn main() {}\n")) == {}


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, "src/broken.rs")
        assert broken.has_errors
        assert ("ok", "function", 1, 3) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'/// Caf\xe9.\nfn caf() -> &\'static str { "\xff" }\n'
        assert symbol(parse_file("x.rs", source), "caf").docstring == "Caf\ufffd."
