"""TypeScript and TSX: one query file, two grammars."""

from __future__ import annotations

import tree_sitter_typescript

from strata.code.languages._ecmascript import EcmaScriptAdapter


class TypeScriptAdapter(EcmaScriptAdapter):
    language = "typescript"
    extensions = (".ts", ".mts", ".cts")
    query_file = "typescript"

    def grammar(self) -> object:
        return tree_sitter_typescript.language_typescript()


class TsxAdapter(EcmaScriptAdapter):
    language = "tsx"
    extensions = (".tsx",)
    query_file = "typescript"

    def grammar(self) -> object:
        return tree_sitter_typescript.language_tsx()
