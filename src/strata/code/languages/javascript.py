"""JavaScript and JSX (the javascript grammar parses both)."""

from __future__ import annotations

import tree_sitter_javascript

from strata.code.languages._ecmascript import EcmaScriptAdapter


class JavaScriptAdapter(EcmaScriptAdapter):
    language = "javascript"
    extensions = (".js", ".jsx", ".mjs", ".cjs")
    query_file = "javascript"

    def grammar(self) -> object:
        return tree_sitter_javascript.language()
