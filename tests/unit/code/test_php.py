"""PHP extraction against tests/fixtures/code/php, and its namespace resolution."""

from __future__ import annotations

from pathlib import Path

from strata.code.languages import adapter_for_path, parse_file
from strata.code.model import Import
from strata.code.modules import ModuleIndex, detect_packages, is_manifest
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

LANG = "php"
CART = "src/Models/Cart.php"


class TestRegistry:
    """.php maps to the PHP adapter; composer.json is a package manifest."""

    def test_extension(self) -> None:
        adapter = adapter_for_path("src/Models/Cart.PHP")
        assert adapter is not None
        assert adapter.language == "php"

    def test_composer_package(self) -> None:
        assert is_manifest("app/composer.json")
        content = (FIXTURES / LANG / "composer.json").read_bytes()
        found = detect_packages(["composer.json"], {"composer.json": content})
        assert [(p.path, p.name, p.ecosystem) for p in found] == [("", "example/shop", "composer")]


class TestSymbols:
    """Classes, constants, methods and constructors with exact lines and qualnames."""

    def test_cart_outline(self) -> None:
        assert outline(extract(LANG, CART)) == [
            ("Item", "class", 13, 27),
            ("Item.MAX_ITEMS", "constant", 15, 15),
            ("Item.validate", "method", 17, 21),
            ("Item.save", "method", 23, 26),
            ("Cart", "class", 29, 51),
            ("Cart.validate", "method", 34, 38),
            ("Cart.checkout", "method", 40, 45),
            ("Cart.__toString", "method", 47, 50),
            ("Receipt", "class", 53, 63),
            ("Receipt.__construct", "method", 55, 57),
            ("Receipt.total", "method", 59, 62),
        ]

    def test_extends_implements_and_attributes(self) -> None:
        cart = extract(LANG, CART)
        item = symbol(cart, "Item")
        assert (item.bases, item.implements) == (("BaseRule",), ("Validator", "CanSave"))
        assert symbol(cart, "Cart").implements == ("\\Stringable",)
        validate = symbol(cart, "Item.validate")
        assert validate.decorators == ("\\Override",)
        assert validate.signature == "public function validate(int $qty): bool"
        assert symbol(cart, "Item.MAX_ITEMS").signature == "public const MAX_ITEMS = 50"
        assert item.docstring == "One line of a cart."

    def test_other_kinds(self) -> None:
        source = (
            b"<?php\ninterface V { public function v(): void; }\ntrait T {}\n"
            b"enum Status: string { case Open = 'open'; }\nfunction top(): int { return 1; }\n"
            b"const A = 1, B = 2;\n"
        )
        assert [(s.qualname, s.kind) for s in parse_file("a.php", source).symbols] == [
            ("V", "interface"),
            ("V.v", "method"),
            ("T", "trait"),
            ("Status", "enum"),
            ("top", "function"),
            ("A", "constant"),
            ("B", "constant"),
        ]


class TestCalls:
    """$this/parent/static receivers read this/super/self; written callees are kept."""

    def test_every_call_in_cart(self) -> None:
        assert calls(extract(LANG, CART)) == [
            ("Item.validate", "check", "this", 20),
            ("Item.save", "validate", "this", 25),
            ("Cart.validate", "validate", "super", 36),
            ("Cart.validate", "count", None, 37),
            ("Cart.checkout", "count", None, 42),
            ("Cart.checkout", "validate", "this", 42),
            ("Cart.checkout", "Receipt", None, 43),
            ("Cart.checkout", "total", "(new Receipt($this))", 43),
            ("Cart.checkout", "round", "Prices", 44),
            ("Cart.checkout", "zero", "\\App\\Support\\Money", 44),
            ("Cart.__toString", "count", None, 49),
            ("Cart.__toString", "sprintf", None, 49),
        ]

    def test_receiver_normalization(self) -> None:
        source = b"<?php\nclass A { function f() { static::g(); $this->repo->h(); self::k(); } }\n"
        assert [(c.receiver, c.callee) for c in parse_file("a.php", source).calls] == [
            ("self", "static::g"),
            ("this.repo", "$this->repo->h"),
            ("self", "self::k"),
        ]


class TestImportsAndNamespace:
    """`use` clauses flattened with their aliases, includes as paths, the namespace."""

    def test_cart_imports(self) -> None:
        cart = extract(LANG, CART)
        assert cart.imports == (
            Import(module="App\\Contracts\\Validator", line=7),
            Import(module="App\\Contracts\\Saver", line=7, alias="CanSave"),
            Import(module="App\\Support\\Prices", line=8),
        )
        assert cart.package == "App\\Models"

    def test_includes(self) -> None:
        front = extract(LANG, "public/index.php")
        assert front.imports == (
            Import(module="./../vendor/autoload.php", line=3),
            Import(module="./../src/Support/helpers.php", line=4),
        )


class TestTestsAndEntrypoints:
    """PHPUnit tests, Symfony and Laravel routes, the index.php front controller."""

    def test_phpunit(self) -> None:
        tests = extract(LANG, "tests/CartTest.php")
        assert tests.is_test_file
        assert marked_tests(tests) == {
            "CartTest.testValidatesOne": "phpunit",
            "CartTest.validates_many": "phpunit",
            "CartTest.checksOut": "phpunit",
        }
        assert tests.frameworks == ("phpunit",)

    def test_test_methods_need_a_test_case(self) -> None:
        source = b"<?php\nclass Helper { public function testLooksLikeATest() {} }\n"
        assert marked_tests(parse_file("src/Helper.php", source)) == {}

    def test_symfony_routes(self) -> None:
        controller = extract(LANG, "src/Http/CartController.php")
        assert entrypoints_of(controller) == {
            "CartController.show": ("http GET /api/carts/{id}", "symfony"),
            "CartController.create": ("http POST /api/carts", "symfony"),
            "CartController.legacy": ("http GET,HEAD /api/carts/legacy", "symfony"),
        }

    def test_laravel_routes_are_on_the_file(self) -> None:
        routes = extract(LANG, "routes/web.php")
        assert routes.entrypoints == (
            "http GET /carts/{id}",
            "http POST /carts",
            "http GET,HEAD /carts/legacy",
        )
        assert routes.frameworks == ("laravel",)

    def test_front_controller(self) -> None:
        assert extract(LANG, "public/index.php").entrypoints == ("front controller",)


class TestRobustness:
    """Broken and non-UTF-8 sources still extract."""

    def test_broken_file(self) -> None:
        broken = extract(LANG, "src/Broken.php")
        assert broken.has_errors
        assert ("Broken.ok", "method", 7, 10) in outline(broken)

    def test_non_utf8_source(self) -> None:
        source = b'<?php\n/** Caf\xe9. */\nclass A {\n  const S = "\xff";\n}\n'
        assert symbol(parse_file("a.php", source), "A").docstring == "Caf\ufffd."


class TestResolution:
    """Namespaces, `use`, fully qualified names and includes resolve across files."""

    def setup_method(self) -> None:
        root = FIXTURES / LANG
        paths = sorted(str(p.relative_to(root)) for p in root.rglob("*.php"))
        files = {p: parse_file(p, (root / p).read_bytes()) for p in paths}
        self.resolver = Resolver(ModuleIndex(files, []))

    def edges(self, path: str) -> set[tuple[str | None, str, str]]:
        return {
            (c.src_qualname, f"{Path(c.dst_path).name}:{c.dst_qualname}", c.resolution)
            for c in self.resolver.resolve_file(path).calls
        }

    def test_same_name_trap(self) -> None:
        edges = self.edges(CART)
        assert ("Item.save", "Cart.php:Item.validate", "self") in edges
        assert ("Cart.checkout", "Cart.php:Cart.validate", "self") in edges
        assert ("Cart.validate", "Cart.php:Item.validate", "hierarchy") in edges
        assert ("Item.save", "Cart.php:Cart.validate", "self") not in edges
        assert ("Cart.checkout", "Cart.php:Item.validate", "self") not in edges

    def test_namespace_use_and_fully_qualified(self) -> None:
        edges = self.edges(CART)
        # BaseRule is in the same namespace (another file): no `use` needed
        assert ("Item.validate", "BaseRule.php:BaseRule.check", "hierarchy") in edges
        assert ("Cart.checkout", "Prices.php:Prices.round", "qualified") in edges
        assert ("Cart.checkout", "Money.php:Money.zero", "qualified") in edges

    def test_includes_and_fully_qualified_new(self) -> None:
        edges = self.edges("public/index.php")
        assert (None, "helpers.php:format_cents", "import") in edges
        assert (None, "Cart.php:Cart", "qualified") in edges
        imports = {
            i.module: i.paths for i in self.resolver.resolve_file("public/index.php").imports
        }
        assert imports["./../src/Support/helpers.php"] == ("src/Support/helpers.php",)
        assert imports["./../vendor/autoload.php"] == ()

    def test_types_through_use_aliases(self) -> None:
        types = {
            (t.type, t.src_qualname, t.dst_path, t.dst_qualname)
            for t in self.resolver.resolve_file(CART).types
        }
        assert ("IMPLEMENTS_TYPE", "Item", "src/Contracts/Validator.php", "Saver") in types
        assert ("INHERITS", "Cart", CART, "Item") in types
