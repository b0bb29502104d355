"""Against the real Neo4j: an npm package's entry-file exports (through a barrel) and a Rust
library's ``pub`` items (through ``pub mod`` and ``pub use``) are marked ``public_api``."""

from __future__ import annotations

from pathlib import Path

from strata.code.indexer import CodeIndexer
from strata.code.reads import CodeReads
from strata.ontology import Ontology
from tests.integration.code.test_calls_identity import C1, _at, _key, index_files

FILES = {
    "web/package.json": '{"name": "web", "main": "dist/index.js"}\n',
    "web/index.ts": 'export * from "./lib/barrel";\nexport function run() {}\n'
    "function hidden() {}\n",
    "web/lib/barrel.ts": 'export { get } from "./api";\n',
    "web/lib/api.ts": "export function get() {}\nexport function unlisted() {}\n",
    "crate/Cargo.toml": '[package]\nname = "demo"\n',
    "crate/src/lib.rs": "pub mod api;\nmod inner;\npub use crate::inner::Thing;\n"
    "pub fn run() {}\nfn hidden() {}\n",
    "crate/src/api.rs": "pub fn get() {}\nfn private() {}\n",
    "crate/src/inner.rs": "pub struct Thing;\npub fn internal() {}\n",
}


class TestPublicApiLanguages:
    def test_exports_and_pub_items_are_public_api(
        self,
        tmp_path: Path,
        indexer: CodeIndexer,
        code_reads: CodeReads,
        ontology: Ontology,
        unique: str,
    ) -> None:
        name = index_files(tmp_path, indexer, f"libraries-{unique}", FILES)

        def entrypoint(path: str, qualname: str) -> object:
            view = code_reads.symbol(_key(ontology, name, path, qualname), _at(C1))
            assert view is not None, (path, qualname)
            return view.state.get("entrypoint")

        marked = {
            ("web/index.ts", "run"): "public_api",
            ("web/index.ts", "hidden"): None,
            ("web/lib/api.ts", "get"): "public_api",
            ("web/lib/api.ts", "unlisted"): None,
            ("crate/src/lib.rs", "run"): "public_api",
            ("crate/src/lib.rs", "hidden"): None,
            ("crate/src/api.rs", "get"): "public_api",
            ("crate/src/api.rs", "private"): None,
            ("crate/src/inner.rs", "Thing"): "public_api",
            ("crate/src/inner.rs", "internal"): None,
        }
        assert {where: entrypoint(*where) for where in marked} == marked
