"""Python extraction against the sample project in tests/fixtures/code/python."""

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

LANG = "python"


class TestSymbols:
    """Every class, method, nested function and constant comes out with its exact lines."""

    def test_models_outline(self) -> None:
        assert outline(extract(LANG, "shop/models.py")) == [
            ("MAX_ITEMS", "constant", 8, 8),
            ("Item", "class", 11, 21),
            ("Item.validate", "method", 17, 18),
            ("Item.save", "method", 20, 21),
            ("Cart", "class", 24, 40),
            ("Cart.validate", "method", 25, 28),
            ("Cart.checkout", "method", 30, 40),
            ("Cart.checkout.add", "function", 33, 34),
            ("Cart.checkout.Receipt", "class", 36, 38),
            ("Cart.checkout.Receipt.render", "method", 37, 38),
        ]

    def test_type_aliases_and_constants_only_at_module_level(self) -> None:
        source = (
            b"from typing import TypeAlias\n"
            b"Ids: TypeAlias = list[int]\n"
            b"type Name = str\n"
            b"LIMIT: int = 3\n"
            b"lower = 4\n"
            b"class A:\n"
            b"    INNER = 5\n"
        )
        assert outline(parse_file("t.py", source)) == [
            ("Ids", "type", 2, 2),
            ("Name", "type", 3, 3),
            ("LIMIT", "constant", 4, 4),
            ("A", "class", 6, 7),
        ]

    def test_decorators_are_part_of_the_span(self) -> None:
        get_cart = symbol(extract(LANG, "shop/api.py"), "get_cart")
        assert (get_cart.line_start, get_cart.line_end) == (8, 10)
        assert get_cart.decorators == ('router.get("/{cart_id}")',)

    def test_parents_follow_nesting(self) -> None:
        models = extract(LANG, "shop/models.py")
        assert symbol(models, "Cart.checkout.Receipt.render").parent == "Cart.checkout.Receipt"
        assert symbol(models, "Cart.checkout.add").parent == "Cart.checkout"
        assert symbol(models, "Item").parent is None

    def test_bases_leave_out_keyword_arguments(self) -> None:
        models = extract(LANG, "shop/models.py")
        assert symbol(models, "Item").bases == ("BaseRule",)
        assert symbol(models, "Cart").bases == ("Item",)
        assert symbol(models, "Cart").implements == ()

    def test_signatures_are_the_head_on_one_line(self) -> None:
        models = extract(LANG, "shop/models.py")
        assert symbol(models, "Item.validate").signature == "def validate(self, qty: int) -> bool"
        assert symbol(models, "Cart").signature == "class Cart(Item, metaclass=Registry)"
        assert symbol(models, "MAX_ITEMS").signature == "MAX_ITEMS = 50"
        get_cart = symbol(extract(LANG, "shop/api.py"), "get_cart")
        assert get_cart.signature == "async def get_cart(cart_id: int) -> dict[str, int]"

    def test_docstrings_are_dedented_without_quotes(self) -> None:
        models = extract(LANG, "shop/models.py")
        assert symbol(models, "Item").docstring == "One line of a cart.\n\nKnows its own price."
        assert symbol(models, "Cart.validate").docstring == "Validate every item, then the cart."
        assert symbol(models, "Item.validate").docstring is None

    def test_body_hash_ignores_indentation_but_not_tokens(self) -> None:
        flat = parse_file("a.py", b"def f(x):\n    return x + 1\n").symbols[0]
        indented = parse_file("a.py", b"if True:\n  def f(x):\n        return x  +  1\n").symbols[0]
        changed = parse_file("a.py", b"def f(x):\n    return x + 2\n").symbols[0]
        assert flat.body_hash == indented.body_hash
        assert flat.body_hash != changed.body_hash


class TestCalls:
    """Calls carry their innermost caller and their receiver as written."""

    def test_every_call_in_models(self) -> None:
        assert calls(extract(LANG, "shop/models.py")) == [
            ("Item.validate", "check", None, 18),
            ("Item.save", "validate", "self", 21),
            ("Cart.validate", "super", None, 27),
            ("Cart.validate", "validate", "super", 27),
            ("Cart.validate", "all", None, 28),
            ("Cart.validate", "validate", "i", 28),
            ("Cart.checkout", "len", None, 31),
            ("Cart.checkout", "validate", "self", 31),
            ("Cart.checkout.Receipt.render", "Decimal", "dec", 38),
            ("Cart.checkout.Receipt.render", "Decimal", "dec", 38),
            ("Cart.checkout.Receipt.render", "add", None, 38),
            ("Cart.checkout.Receipt.render", "str", None, 38),
            ("Cart.checkout", "Receipt", None, 40),
            ("Cart.checkout", "render", "Receipt()", 40),
        ]

    def test_callee_text_is_the_expression_as_written(self) -> None:
        models = extract(LANG, "shop/models.py")
        assert {c.callee for c in call_sites(models, "validate")} == {
            "self.validate",
            "super().validate",
            "i.validate",
        }
        assert {c.callee for c in call_sites(models, "Decimal")} == {"dec.Decimal"}

    def test_decorator_calls_belong_to_the_enclosing_scope(self) -> None:
        api = extract(LANG, "shop/api.py")
        assert [(c.caller, c.callee, c.line) for c in call_sites(api, "get")] == [
            (None, "router.get", 8)
        ]
        assert [(c.caller, c.line) for c in call_sites(api, "Cart")] == [("create_cart", 15)]
        assert [(c.caller, c.line) for c in call_sites(api, "create_cart")] == [(None, 19)]

    def test_multi_line_chains_read_on_one_line(self) -> None:
        source = (
            b"def f():\n    return (\n        session.query(User)\n"
            b"        .filter(x)\n        .all()\n    )\n"
        )
        (all_call,) = call_sites(parse_file("q.py", source), "all")
        assert all_call.receiver == "session.query(User).filter(x)"
        assert all_call.callee == "session.query(User).filter(x).all"
        assert all_call.line == 3

    def test_long_receivers_are_cut_at_200_characters(self) -> None:
        source = b"x = " + b"a" * 300 + b".b()\n"
        (call,) = call_sites(parse_file("long.py", source), "b")
        assert call.receiver == "a" * 200
        assert call.callee == "a" * 200 + ".b"


class TestImports:
    """Imports keep relative dots, aliases and one record per imported name."""

    def test_models_imports(self) -> None:
        assert extract(LANG, "shop/models.py").imports == (
            Import(module="__future__", line=3, names=("annotations",)),
            Import(module="decimal", line=5, alias="dec"),
            Import(module=".rules", line=6, names=("Rule",), alias="BaseRule"),
            Import(module=".rules", line=6, names=("check",)),
        )

    def test_relative_and_wildcard_forms(self) -> None:
        source = b"from . import views\nfrom ..pkg.mod import *\nimport a.b, c as d\n"
        assert parse_file("x.py", source).imports == (
            Import(module=".", line=1, names=("views",)),
            Import(module="..pkg.mod", line=2, names=("*",)),
            Import(module="a.b", line=3),
            Import(module="c", line=3, alias="d"),
        )


class TestTests:
    """pytest and unittest tests are marked by their conventions, fixtures are not."""

    def test_pytest_and_unittest_in_a_test_file(self) -> None:
        test_file = extract(LANG, "tests/test_models.py")
        assert test_file.is_test_file
        assert marked_tests(test_file) == {
            "test_validate": "pytest",
            "TestCart.test_checkout": "pytest",
            "CartCase.test_save": "unittest",
        }
        assert test_file.frameworks == ("pytest", "unittest")

    def test_conftest_is_test_code_without_tests(self) -> None:
        conftest = extract(LANG, "tests/conftest.py")
        assert conftest.is_test_file
        assert marked_tests(conftest) == {}

    def test_production_files_are_not_test_files(self) -> None:
        models = extract(LANG, "shop/models.py")
        assert not models.is_test_file
        assert marked_tests(models) == {}


class TestEntrypoints:
    """Routes, CLI commands and the __main__ guard are recognised per framework."""

    def test_fastapi_routes_join_the_router_prefix(self) -> None:
        api = extract(LANG, "shop/api.py")
        assert entrypoints_of(api) == {
            "get_cart": ("http GET /carts/{cart_id}", "fastapi"),
            "create_cart": ("http POST /carts/", "fastapi"),
        }
        assert api.entrypoints == ("__main__",)
        assert api.frameworks == ("fastapi",)

    def test_flask_route_lists_its_methods(self) -> None:
        assert entrypoints_of(extract(LANG, "shop/legacy.py")) == {
            "health": ("http GET,HEAD /health", "flask")
        }

    def test_typer_commands_use_the_given_or_dashed_name(self) -> None:
        cli = extract(LANG, "shop/cli.py")
        assert entrypoints_of(cli) == {
            "sync_all": ("cli sync-all", "typer"),
            "collect": ("cli gc", "typer"),
        }

    def test_django_urls_are_file_entrypoints(self) -> None:
        urls = extract(LANG, "shop/urls.py")
        assert urls.entrypoints == ("http ANY /carts/",)
        assert "django" in urls.frameworks


class TestRobustness:
    """Broken, non-UTF-8, empty and deeply nested files still extract."""

    def test_syntax_error_keeps_what_was_recovered(self) -> None:
        broken = extract(LANG, "shop/broken.py")
        assert broken.has_errors
        assert ("ok", "function", 1, 2) in outline(broken)
        assert "After.method" in {s.qualname for s in broken.symbols}
        assert not extract(LANG, "shop/models.py").has_errors

    def test_latin1_bytes_are_replaced_not_fatal(self) -> None:
        latin = extract(LANG, "shop/latin1.py")
        assert symbol(latin, "greet").docstring == "Say h\ufffdllo."
        assert latin.lines == 7

    def test_empty_file(self) -> None:
        empty = parse_file("empty.py", b"")
        assert (empty.lines, empty.symbols, empty.calls, empty.has_errors) == (0, (), (), False)

    def test_deep_nesting_does_not_recurse(self) -> None:
        depth = 400
        lines = [f"{'    ' * i}def f{i}():" for i in range(depth)]
        lines.append(f"{'    ' * depth}return g()")
        deep = parse_file("deep.py", "\n".join(lines).encode())
        assert len(deep.symbols) == depth
        assert deep.symbols[-1].qualname == ".".join(f"f{i}" for i in range(depth))
        assert [c.caller for c in deep.calls] == [deep.symbols[-1].qualname]
