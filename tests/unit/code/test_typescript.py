"""TypeScript and TSX extraction against tests/fixtures/code/typescript."""

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

LANG = "typescript"


class TestSymbols:
    """Classes, interfaces, enums, type aliases, methods and closures with exact lines."""

    def test_models_outline(self) -> None:
        assert outline(extract(LANG, "src/models.ts")) == [
            ("MAX_ITEMS", "constant", 4, 4),
            ("Item", "class", 11, 19),
            ("Item.validate", "method", 12, 14),
            ("Item.save", "method", 16, 18),
            ("Cart", "class", 21, 34),
            ("Cart.validate", "method", 24, 27),
            ("Cart.checkout", "method", 29, 33),
            ("Cart.checkout.add", "function", 31, 31),
            ("Priced", "interface", 36, 38),
            ("Priced.price", "method", 37, 37),
            ("Currency", "enum", 40, 43),
            ("CartId", "type", 45, 45),
        ]

    def test_extends_and_implements(self) -> None:
        models = extract(LANG, "src/models.ts")
        item = symbol(models, "Item")
        assert (item.bases, item.implements) == (("BaseRule",), ("Serializable",))
        assert symbol(models, "Cart").bases == ("Item",)
        assert symbol(models, "Priced").bases == ("Serializable",)

    def test_signatures_and_jsdoc(self) -> None:
        models = extract(LANG, "src/models.ts")
        item = symbol(models, "Item")
        assert item.signature == "class Item extends BaseRule implements Serializable"
        assert item.docstring == "One line of a cart.\n\nKnows its own price."
        assert symbol(models, "Item.validate").signature == "validate(qty: number): boolean"
        add = symbol(models, "Cart.checkout.add")
        assert add.signature == "const add = (a: number, b: number): number"
        assert symbol(models, "Cart").docstring is None

    def test_decorators_start_the_span(self) -> None:
        controller = extract(LANG, "src/controller.ts")
        assert outline(controller) == [
            ("CartController", "class", 3, 12),
            ("CartController.find", "method", 5, 8),
            ("CartController.create", "method", 10, 11),
        ]
        assert symbol(controller, "CartController").decorators == ('Controller("carts")',)
        assert symbol(controller, "CartController.find").decorators == ('Get(":id")',)


class TestCalls:
    """this/super receivers, constructor calls and closures resolve to the right caller."""

    def test_decorator_calls_belong_to_the_enclosing_scope(self) -> None:
        source = b"@Injectable()\nclass S {\n  @Get()\n  m() {\n    go();\n  }\n}\n"
        extract_ = parse_file("s.ts", source)
        assert outline(extract_) == [("S", "class", 1, 7), ("S.m", "method", 3, 6)]
        assert calls(extract_) == [
            (None, "Injectable", None, 1),
            ("S", "Get", None, 3),
            ("S.m", "go", None, 5),
        ]

    def test_every_call_in_models(self) -> None:
        assert calls(extract(LANG, "src/models.ts")) == [
            ("Item.validate", "check", None, 13),
            ("Item.save", "validate", "this", 17),
            ("Cart.validate", "validate", "super", 25),
            ("Cart.validate", "every", "this.items", 26),
            ("Cart.validate", "validate", "i", 26),
            ("Cart.checkout", "validate", "this", 30),
            ("Cart.checkout", "Receipt", None, 32),
            ("Cart.checkout", "add", None, 32),
            ("Cart.checkout", "total", "new Receipt(this)", 32),
        ]

    def test_new_is_a_call_to_the_class(self) -> None:
        (receipt,) = call_sites(extract(LANG, "src/models.ts"), "Receipt")
        assert (receipt.callee, receipt.receiver) == ("Receipt", None)


class TestImports:
    """Named, aliased, default and namespace imports; type-only imports count too."""

    def test_models_imports(self) -> None:
        assert extract(LANG, "src/models.ts").imports == (
            Import(module="./rules", line=1, names=("Rule",), alias="BaseRule"),
            Import(module="./rules", line=1, names=("check",)),
            Import(module="./types", line=2, names=("Serializable",)),
        )

    def test_default_and_namespace_imports(self) -> None:
        assert extract(LANG, "src/server.ts").imports == (
            Import(module="express", line=1, names=("default",), alias="express"),
            Import(module="path", line=2, alias="path"),
        )

    def test_re_exports_and_side_effect_imports(self) -> None:
        source = b'export { a as b } from "./m";\nexport * from "./all";\nimport "./polyfill";\n'
        assert parse_file("index.ts", source).imports == (
            Import(module="./m", line=1, names=("a",), alias="b"),
            Import(module="./all", line=2, names=("*",)),
            Import(module="./polyfill", line=3),
        )


class TestTests:
    """vitest describe/it calls become nested synthetic function symbols."""

    def test_describe_and_it_titles_make_the_qualnames(self) -> None:
        spec = extract(LANG, "src/cart.test.ts")
        assert spec.is_test_file
        assert outline(spec) == [
            ("describe:Cart", "function", 4, 14),
            ("describe:Cart > it:validates items", "function", 5, 7),
            ("describe:Cart > describe:checkout", "function", 9, 13),
            ("describe:Cart > describe:checkout > it:sums totals", "function", 10, 12),
        ]
        assert marked_tests(spec) == {
            "describe:Cart > it:validates items": "vitest",
            "describe:Cart > describe:checkout > it:sums totals": "vitest",
        }
        assert "vitest" in spec.frameworks

    def test_calls_inside_a_test_belong_to_it(self) -> None:
        spec = extract(LANG, "src/cart.test.ts")
        assert [c.caller for c in call_sites(spec, "validate")] == [
            "describe:Cart > it:validates items"
        ]
        assert [(c.caller, c.receiver) for c in call_sites(spec, "skip")] == [
            ("describe:Cart > describe:checkout", "it")
        ]

    def test_without_vitest_import_it_is_jest(self) -> None:
        source = b'test("adds", () => {\n  add(1);\n});\n'
        spec = parse_file("src/__tests__/add.ts", source)
        assert marked_tests(spec) == {"test:adds": "jest"}

    def test_describe_outside_test_files_is_an_ordinary_call(self) -> None:
        source = b'describe("x", () => {});\n'
        assert parse_file("src/describe.ts", source).symbols == ()


class TestEntrypoints:
    """NestJS decorators and Express registrations become HTTP entrypoints."""

    def test_nestjs_joins_the_controller_prefix(self) -> None:
        assert entrypoints_of(extract(LANG, "src/controller.ts")) == {
            "CartController.find": ("http GET /carts/:id", "nestjs"),
            "CartController.create": ("http POST /carts", "nestjs"),
        }

    def test_express_named_and_inline_handlers(self) -> None:
        server = extract(LANG, "src/server.ts")
        assert entrypoints_of(server) == {
            "listCarts": ("http GET /carts", "express"),
            "route:POST /carts": ("http POST /carts", "express"),
        }
        assert ("route:POST /carts", "function", 11, 13) in outline(server)
        assert [c.caller for c in call_sites(server, "join")] == ["route:POST /carts"]
        assert [c.caller for c in call_sites(server, "post")] == [None]


class TestTsx:
    """.tsx files use the tsx grammar with the same query."""

    def test_component_and_its_handler(self) -> None:
        app = extract(LANG, "src/App.tsx")
        assert app.language == "tsx"
        assert outline(app) == [("App", "function", 4, 8), ("App.onClick", "function", 6, 6)]
        assert symbol(app, "App").docstring == "The root component."
        assert app.imports == (
            Import(module="react", line=1, names=("default",), alias="React"),
            Import(module="react", line=1, names=("useState",), alias="useLocalState"),
        )
        assert [(c.caller, c.line) for c in call_sites(app, "setCount")] == [("App.onClick", 6)]


class TestRobustness:
    """Syntax errors keep the recovered declarations."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, "src/broken.ts")
        assert broken.has_errors
        assert ("ok", "function", 1, 3) in outline(broken)
        assert "After.method" in {s.qualname for s in broken.symbols}
        assert not extract(LANG, "src/models.ts").has_errors
