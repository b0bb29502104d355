"""A module index built over the last run's index holds what one built afresh holds."""

from __future__ import annotations

import pytest

from strata.code.languages import parse_file
from strata.code.model import FileExtract
from strata.code.modules import ModuleIndex, PackageInfo

PACKAGES = [PackageInfo("", "shop", "pypi", "pyproject.toml", ())]
FILES = {
    "shop/__init__.py": b"from shop.orders import place\n",
    "shop/orders.py": b"def place(order):\n    return order\n",
    "src/Billing.java": b"package com.shop;\npublic class Billing { void post() {} }\n",
    "web/cart.ts": b"export function add(item: string) { return item }\n",
}


def _parsed(sources: dict[str, bytes]) -> dict[str, FileExtract]:
    return {path: parse_file(path, text) for path, text in sources.items()}


def _tables(index: ModuleIndex) -> tuple[object, ...]:
    return (
        {k: v for k, v in index.by_module.items() if v},
        index.module_of,
        index.top_level,
        {k: v for k, v in index.by_dir.items() if v},
    )


def _next(first: dict[str, FileExtract], path: str, text: bytes | None) -> dict[str, FileExtract]:
    files = dict(first)  # the unchanged files are the very objects of the last run
    if text is None:
        del files[path]
    else:
        files[path] = parse_file(path, text)
    return files


class TestTakenOver:
    @pytest.mark.parametrize(
        ("path", "text", "shared"),
        [
            # A body changed: same names, the tables are taken over.
            (
                "shop/orders.py",
                b"def place(order):\n    return [order]\n\ndef cancel(o):\n    pass\n",
                True,
            ),
            # Java answers to its package: a new package is another module name.
            ("src/Billing.java", b"package com.other;\npublic class Billing {}\n", False),
            # A file gone: the paths differ.
            ("web/cart.ts", None, False),
            # A file added.
            ("shop/refunds.py", b"def refund(order):\n    return order\n", False),
        ],
    )
    def test_a_push_reads_as_a_new_build(self, path: str, text: bytes | None, shared: bool) -> None:
        first = _parsed(FILES)
        kept = ModuleIndex(first, PACKAGES)
        files = _next(first, path, text)
        index = ModuleIndex(files, PACKAGES, kept)
        assert _tables(index) == _tables(ModuleIndex(files, PACKAGES))
        assert (index.by_module is kept.by_module) is shared
        assert kept.top_level == ModuleIndex(first, PACKAGES).top_level  # the last run's stays

    def test_other_packages_build_anew(self) -> None:
        first = _parsed(FILES)
        kept = ModuleIndex(first, PACKAGES)
        moved = [PackageInfo("shop", "shop", "pypi", "shop/pyproject.toml", ())]
        index = ModuleIndex(dict(first), moved, kept)
        assert index.by_module is not kept.by_module
        assert _tables(index) == _tables(ModuleIndex(dict(first), moved))

    def test_a_changed_top_level_symbol_is_found(self) -> None:
        first = _parsed(FILES)
        kept = ModuleIndex(first, PACKAGES)
        files = _next(first, "shop/orders.py", b"def cancel(order):\n    return order\n")
        index = ModuleIndex(files, PACKAGES, kept)
        assert index.by_module is kept.by_module
        assert index.symbol_in(["shop/orders.py"], "cancel") is not None
        assert index.symbol_in(["shop/orders.py"], "place") is None
        assert kept.symbol_in(["shop/orders.py"], "place") is not None
