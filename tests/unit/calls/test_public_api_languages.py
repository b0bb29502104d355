"""The exported API beyond Python on the pure pipeline: what an npm package's entry file
exports (own ``export``s, ``export {x} from``, ``export *``, barrels) and what a Rust
library's ``lib.rs`` makes ``pub`` (``pub mod``, ``pub use``) are ``public_api``."""

from __future__ import annotations

from strata.code.languages import parse_file
from strata.code.modules import ModuleIndex, detect_packages, is_manifest
from strata.code.resolver import Resolver


def public(files: dict[str, bytes]) -> dict[str, list[str]]:
    """Per source file, the sorted qualnames marked public_api."""
    manifests = {p: s for p, s in files.items() if is_manifest(p)}
    extracts = {p: parse_file(p, s) for p, s in files.items() if p not in manifests}
    resolver = Resolver(ModuleIndex(extracts, detect_packages(sorted(files), manifests)))
    return {p: sorted(resolver.resolve_file(p).public_api) for p in sorted(extracts)}


ECMA = {
    "web/package.json": b'{"name": "web"}',
    "web/index.ts": b"export function run() {}\nfunction hidden() {}\nconst LIMIT = 1;\n"
    b'export { LIMIT as MAX };\nexport { api } from "./lib/api";\nexport { post as send } from '
    b'"./lib/api";\nexport * from "./lib/barrel";\nimport { internal } from "./lib/api";\n'
    b"export class Client { call() { return internal(); } }\n"
    b"export default function main() {}\n",
    "web/lib/api.ts": b"export function api() {}\nexport function post() {}\n"
    b"export function internal() {}\nexport function unused() {}\n",
    "web/lib/barrel.ts": b'export * from "./deep";\nexport { shared } from "./shared";\n',
    "web/lib/deep.ts": b"export const deep = () => 1;\nexport default function dflt() {}\n"
    b"function local() {}\n",
    "web/lib/shared.ts": b"export function shared() {}\nexport function other() {}\n",
    "tool/main.ts": b"export function notALibrary() {}\n",
}


class TestEcmaScript:
    def test_entry_file_exports_and_reexports(self) -> None:
        assert public(ECMA) == {
            "tool/main.ts": [],
            "web/index.ts": ["Client", "LIMIT", "main", "run"],
            "web/lib/api.ts": ["api", "post"],
            "web/lib/barrel.ts": [],
            "web/lib/deep.ts": ["deep"],
            "web/lib/shared.ts": ["shared"],
        }

    def test_without_an_entry_file_nothing_is_exported(self) -> None:
        files = {p: s for p, s in ECMA.items() if p != "web/index.ts"}
        assert all(names == [] for names in public(files).values())

    def test_package_json_names_the_entry_file(self) -> None:
        found = public(
            {
                "pkg/package.json": b'{"name": "pkg", "main": "./src/main.ts",\n'
                b'  "types": "dist/main.d.ts", "exports": {".": "./src/main.ts"}}',
                "pkg/src/main.ts": b'export { util } from "./util";\nexport function go() {}\n',
                "pkg/src/util.ts": b"export function util() {}\nexport function more() {}\n",
                "pkg/index.ts": b"export function notTheEntry() {}\n",
            }
        )
        assert found == {
            "pkg/index.ts": [],
            "pkg/src/main.ts": ["go"],
            "pkg/src/util.ts": ["util"],
        }

    def test_commonjs_module_exports(self) -> None:
        found = public(
            {
                "package.json": b'{"name": "cjs"}',
                "index.js": b"function start() {}\nfunction helper() {}\n"
                b"module.exports = { start };\n",
            }
        )
        assert found == {"index.js": ["start"]}


RUST = {
    "Cargo.toml": b'[package]\nname = "demo"\n',
    "src/lib.rs": b"pub mod api;\nmod inner;\npub use crate::inner::Thing;\n"
    b"use crate::inner::Other;\n"
    b"pub fn run() {}\nfn hidden() {}\npub(crate) fn crate_only() {}\npub struct S;\n"
    b"impl S { pub fn m(&self) {} }\n",
    "src/api.rs": b"pub fn get() {}\nfn private() {}\n",
    "src/inner.rs": b"pub struct Thing;\npub struct Other;\npub fn not_reexported() {}\n",
}


class TestRust:
    def test_pub_items_pub_mod_and_pub_use(self) -> None:
        assert public(RUST) == {
            "src/api.rs": ["get"],
            "src/inner.rs": ["Thing"],
            "src/lib.rs": ["S", "run"],
        }

    def test_a_binary_crate_exports_nothing(self) -> None:
        files = {("src/main.rs" if p == "src/lib.rs" else p): s for p, s in RUST.items()}
        assert all(names == [] for names in public(files).values())
