"""Absolute imports of standard-library names are not captured by a same-named subpackage."""

from __future__ import annotations

from strata.code.flow.imports import absolute_paths, package_dirs

TREE = [
    "shop/__init__.py",
    "shop/json/__init__.py",
    "shop/json/encoder.py",
    "shop/orders.py",
    "src/tools/__init__.py",
    "json.py",
    "src/email/__init__.py",
]


class TestAbsoluteImports:
    """Only a file at an import root shadows the standard library."""

    def test_subpackage_of_a_package_is_not_the_stdlib_module(self) -> None:
        packages = package_dirs(TREE)
        assert absolute_paths("json", ["shop/json/__init__.py"], packages) == ()
        assert absolute_paths("json.encoder", ["shop/json/encoder.py"], packages) == ()

    def test_a_root_module_or_src_layout_does_shadow(self) -> None:
        packages = package_dirs(TREE)
        assert absolute_paths("json", ["json.py"], packages) == ("json.py",)
        assert absolute_paths("email", ["src/email/__init__.py"], packages) == (
            "src/email/__init__.py",
        )

    def test_the_full_dotted_path_and_other_names_still_reach_it(self) -> None:
        packages = package_dirs(TREE)
        assert absolute_paths("shop.json", ["shop/json/__init__.py"], packages) == (
            "shop/json/__init__.py",
        )
        assert absolute_paths("orders", ["shop/orders.py"], packages) == ("shop/orders.py",)
