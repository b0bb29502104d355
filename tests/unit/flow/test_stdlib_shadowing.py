"""``import json`` inside a package with its own ``json`` subpackage is the standard
library; the subpackage is reached only relatively or by its full dotted name."""

from __future__ import annotations

from tests.unit.flow._pipeline import edges, resolver

SHOP = {
    "shop/__init__.py": "",
    "shop/json/__init__.py": "def dumps(value):\n    return str(value)\n",
    "shop/orders.py": """
        import json
        from json import loads


        def save(order):
            return json.dumps(order)


        def read(text):
            return loads(text)
        """,
    "shop/relative.py": """
        from . import json
        from .json import dumps


        def save(order):
            json.dumps(order)
            return dumps(order)
        """,
    "shop/dotted.py": """
        import shop.json


        def save(order):
            return shop.json.dumps(order)
        """,
}


class TestStandardLibraryWins:
    """A standard-library name binds a repository file only at an import root."""

    def test_absolute_import_inside_the_package_is_external(self) -> None:
        found = resolver(SHOP)
        assert found.resolve_file("shop/orders.py").calls == []
        assert found.resolve_file("shop/orders.py").external_calls == 2

    def test_relative_import_reaches_the_subpackage(self) -> None:
        # `json.dumps(...)` and `dumps(...)`: both calls, one merged edge
        assert edges(SHOP, "shop/relative.py") == {
            ("save", "shop/json/__init__.py:dumps", "import")
        }

    def test_full_dotted_name_reaches_the_subpackage(self) -> None:
        assert edges(SHOP, "shop/dotted.py") == {("save", "shop/json/__init__.py:dumps", "import")}

    def test_a_module_at_the_import_root_still_shadows(self) -> None:
        files = {
            "json.py": "def dumps(value):\n    return str(value)\n",
            "main.py": "import json\n\n\ndef save(order):\n    return json.dumps(order)\n",
        }
        assert edges(files, "main.py") == {("save", "json.py:dumps", "import")}

    def test_a_non_stdlib_name_answers_to_every_suffix_as_before(self) -> None:
        files = {
            "shop/__init__.py": "",
            "shop/pricing/__init__.py": "def total(order):\n    return 1\n",
            "shop/cart.py": "import pricing\n\n\ndef pay(o):\n    return pricing.total(o)\n",
        }
        assert edges(files, "shop/cart.py") == {("pay", "shop/pricing/__init__.py:total", "import")}
