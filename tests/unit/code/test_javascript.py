"""JavaScript extraction against tests/fixtures/code/javascript."""

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

LANG = "javascript"


class TestSymbols:
    """Classes, methods, private methods and function-valued fields with exact lines."""

    def test_models_outline(self) -> None:
        assert outline(extract(LANG, "lib/models.js")) == [
            ("MAX_ITEMS", "constant", 4, 4),
            ("Item", "class", 9, 17),
            ("Item.validate", "method", 10, 12),
            ("Item.save", "method", 14, 16),
            ("Cart", "class", 19, 35),
            ("Cart.validate", "method", 22, 25),
            ("Cart.checkout", "method", 27, 30),
            ("Cart.#total", "method", 32, 34),
        ]

    def test_bases_and_jsdoc(self) -> None:
        models = extract(LANG, "lib/models.js")
        assert symbol(models, "Item").bases == ("BaseRule",)
        assert symbol(models, "Cart").bases == ("Item",)
        assert symbol(models, "Item").docstring == "One line of a cart."
        assert symbol(models, "Item").signature == "class Item extends BaseRule"
        assert symbol(models, "Cart.checkout").signature == "checkout = ()"


class TestCalls:
    """Calls through this, super and private members keep their receivers."""

    def test_every_call_in_models(self) -> None:
        assert calls(extract(LANG, "lib/models.js")) == [
            (None, "require", None, 1),
            (None, "require", None, 2),
            ("Item.validate", "check", None, 11),
            ("Item.save", "validate", "this", 15),
            ("Cart.validate", "validate", "super", 23),
            ("Cart.validate", "every", "this.#items", 24),
            ("Cart.validate", "validate", "i", 24),
            ("Cart.checkout", "validate", "this", 28),
            ("Cart.checkout", "#total", "this", 29),
            ("Cart.checkout", "format", "util", 29),
        ]


class TestImports:
    """require() bindings and ES imports become one record per imported name."""

    def test_destructured_require_keeps_aliases(self) -> None:
        assert extract(LANG, "lib/models.js").imports == (
            Import(module="./rules", line=1, names=("Rule",), alias="BaseRule"),
            Import(module="./rules", line=1, names=("check",)),
            Import(module="util", line=2, alias="util"),
        )

    def test_es_module_imports(self) -> None:
        assert extract(LANG, "lib/server.mjs").imports == (
            Import(module="express", line=1, names=("default",), alias="express"),
            Import(module="express", line=1, names=("Router",)),
            Import(module="./models.js", line=2, names=("Cart",), alias="ShopCart"),
        )

    def test_bare_and_dynamic_imports(self) -> None:
        source = b'require("./polyfill");\nconst m = await import("./lazy.js");\n'
        assert parse_file("x.js", source).imports == (
            Import(module="./polyfill", line=1),
            Import(module="./lazy.js", line=2),
        )


class TestTestsAndEntrypoints:
    """jest tests under __tests__ and an Express route with an inline handler."""

    def test_jest_tests(self) -> None:
        spec = extract(LANG, "__tests__/models.js")
        assert spec.is_test_file
        assert outline(spec) == [
            ("describe:Cart", "function", 3, 7),
            ("describe:Cart > test:validates", "function", 4, 6),
        ]
        assert marked_tests(spec) == {"describe:Cart > test:validates": "jest"}
        assert spec.frameworks == ("jest",)

    def test_express_inline_function_handler(self) -> None:
        server = extract(LANG, "lib/server.mjs")
        assert outline(server) == [
            ("route:GET /carts/:id", "function", 6, 8),
            ("main", "function", 10, 14),
        ]
        assert entrypoints_of(server) == {
            "route:GET /carts/:id": ("http GET /carts/:id", "express")
        }
        assert [c.caller for c in call_sites(server, "ShopCart")] == ["route:GET /carts/:id"]
        assert [c.caller for c in call_sites(server, "use")] == ["main"]


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, "lib/broken.js")
        assert broken.has_errors
        assert ("ok", "function", 1, 3) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'/** Caf\xe9. */\nfunction caf() {\n  return "\xff\xfe";\n}\n'
        extract_ = parse_file("latin.js", source)
        assert outline(extract_) == [("caf", "function", 2, 4)]
        assert symbol(extract_, "caf").docstring == "Caf\ufffd."

    def test_method_decorators_inside_the_node(self) -> None:
        source = b"class S {\n  @Get()\n  m() {\n    go();\n  }\n}\n"
        extract_ = parse_file("s.js", source)
        assert outline(extract_) == [("S", "class", 1, 6), ("S.m", "method", 2, 5)]
        assert calls(extract_) == [("S", "Get", None, 2), ("S.m", "go", None, 4)]

    def test_jsx_in_js_files(self) -> None:
        source = b"export const App = () => <div onClick={() => go()}>hi</div>;\n"
        app = parse_file("App.jsx", source)
        assert not app.has_errors
        assert [(c.caller, c.name) for c in app.calls] == [("App", "go")]
