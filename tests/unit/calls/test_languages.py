"""Receiver types, exports and overloads in the languages without value flow, on the
pure pipeline (parse, module index, resolver): the hand-written cases under
``tests/fixtures/calls/<language>/`` (the same ones ``bench/calls.py micro --language``
scores) are held to every expected edge and no other."""

from __future__ import annotations

import pytest

from strata.code.languages import parse_file
from strata.code.modules import ModuleIndex
from strata.code.resolver import Resolver
from tests.unit.calls._bench import load_bench

LANGUAGES = ("typescript", "javascript", "java", "csharp", "go", "rust", "kotlin", "php")


BENCH = load_bench()
CASES = {
    f"{language}/{case.name}": case
    for language in LANGUAGES
    for case in BENCH.load_cases(BENCH.LANGUAGES / language)
}


def _edges(files: dict[str, bytes]) -> dict[tuple[str, str, int], str]:
    found: dict[tuple[str, str, int], str] = BENCH.strata_edges(files)
    return found


class TestCases:
    """Each case resolves exactly its hand-written edges: a typed receiver picks its
    type's method, an untyped or external one reaches nothing (no same-name guess)."""

    def test_every_language_has_cases(self) -> None:
        languages = {name.split("/", 1)[0] for name in CASES}
        assert languages == set(LANGUAGES)
        traps = [n for n, c in CASES.items() if b"expect: none" in b"".join(c.files.values())]
        assert {n.split("/", 1)[0] for n in traps} >= {"typescript", "javascript", "java"}

    @pytest.mark.parametrize("name", sorted(CASES))
    def test_case(self, name: str) -> None:
        case = CASES[name]
        result = BENCH.run_case(case)
        assert not result.missed, f"missed: {sorted(result.missed)}"
        assert not result.wrong, f"wrong: {sorted(result.wrong)}"


def _resolve(files: dict[str, str]) -> dict[tuple[str, str, int], str]:
    return _edges({path: text.encode() for path, text in files.items()})


class TestTraps:
    """The same-name trap on its own: two unrelated types with ``save``."""

    TS = """
class A { save(): void {} }
class B { save(): void {} }
export function f(a: A, x: any, m: Map<string, B>): void {
  a.save();
  x.save();
  m.get("k");
}
"""

    def test_typed_receiver_picks_its_type(self) -> None:
        edges = _resolve({"t.ts": self.TS})
        assert ("t.ts:f", "t.ts:A.save", 5) in edges
        assert edges[("t.ts:f", "t.ts:A.save", 5)] == "flow"
        assert not [e for e in edges if e[1] == "t.ts:B.save"]

    def test_untyped_receiver_is_not_guessed(self) -> None:
        edges = _resolve({"t.ts": self.TS})
        assert not [e for e in edges if e[2] == 6]

    def test_one_candidate_is_still_not_guessed_through_an_external_type(self) -> None:
        # Only one `get` exists in the repository, but `m` is a Map: no edge to it.
        source = self.TS + "class C { get(k: string): void {} }\n"
        edges = _resolve({"t.ts": source})
        assert not [e for e in edges if e[2] == 7]

    def test_go_untyped_result_is_not_guessed(self) -> None:
        source = """package main

import "os"

type A struct{}

func (a A) Close() error { return nil }

type B struct{}

func (b B) Close() error { return nil }

func f() {
	file, _ := os.Open("x")
	file.Close()
}
"""
        edges = _resolve({"main.go": source})
        assert not [e for e in edges if e[2] == 15]


class TestOverloads:
    """TypeScript overload signatures are one symbol: adding one moves no id."""

    ONE = """export function parse(text: string): number {
  return 0;
}
export function use(): void {
  parse("1");
}
"""
    TWO = """export function parse(text: string): number;
export function parse(text: string, radix: number): number;
export function parse(text: string, radix?: number): number {
  return 0;
}
export function use(): void {
  parse("1");
}
"""

    def test_overloads_keep_the_qualname(self) -> None:
        before = [s.qualname for s in parse_file("p.ts", self.ONE.encode()).symbols]
        after = [s.qualname for s in parse_file("p.ts", self.TWO.encode()).symbols]
        assert before == after == ["parse", "use"]

    def test_the_symbol_is_the_implementation(self) -> None:
        symbol = parse_file("p.ts", self.TWO.encode()).symbols[0]
        assert (symbol.line_start, symbol.line_end) == (3, 5)

    def test_declarations_without_implementation_are_one_symbol(self) -> None:
        source = b"declare function f(a: string): void;\ndeclare function f(a: number): void;\n"
        assert [s.qualname for s in parse_file("d.d.ts", source).symbols] == ["f"]

    def test_calls_reach_the_one_symbol(self) -> None:
        edges = _resolve({"p.ts": self.TWO})
        assert ("p.ts:use", "p.ts:parse", 7) in edges


class TestExports:
    """What a module exports under a name, through renames, CommonJS and barrels."""

    def test_barrel_chain_of_two(self) -> None:
        files = {
            "a/impl.ts": "export class Impl { run(): void {} }\n",
            "a/index.ts": 'export * from "./impl";\n',
            "index.ts": 'export { Impl as Engine } from "./a";\n',
            "main.ts": 'import { Engine } from "./index";\nnew Engine().run();\n',
        }
        edges = _resolve(files)
        assert ("main.ts:<module>", "a/impl.ts:Impl", 2) in edges
        assert ("main.ts:<module>", "a/impl.ts:Impl.run", 2) in edges

    def test_reexport_cycle_ends(self) -> None:
        files = {
            "a.ts": 'export * from "./b";\n',
            "b.ts": 'export * from "./a";\n',
            "main.ts": 'import { x } from "./a";\nx();\n',
        }
        assert _resolve(files) == {}

    def test_commonjs_module_is_the_exported_class(self) -> None:
        files = {
            "svc.js": "class Svc { go() {} }\nmodule.exports = Svc;\n",
            "main.js": 'const Service = require("./svc");\nconst s = new Service();\ns.go();\n',
        }
        edges = _resolve(files)
        assert ("main.js:<module>", "svc.js:Svc", 2) in edges
        assert ("main.js:<module>", "svc.js:Svc.go", 3) in edges
        extract = ModuleIndex({p: parse_file(p, t.encode()) for p, t in files.items()}, [])
        assert Resolver(extract).index.files["svc.js"].exports == (("=", "Svc"),)


class TestWildcardPackages:
    """Kotlin and Java packages are many files, each with wildcard imports of the same
    packages: a name none of them declares is looked for once per (package, depth), not
    once per path through the files (kotlinx.coroutines took over ten minutes)."""

    @pytest.mark.interpreted  # patches a method of the resolver
    def test_a_missing_name_walks_each_package_once_per_depth(self) -> None:
        files: dict[str, bytes] = {}
        for package in ("a", "b", "c"):
            for n in range(4):
                files[f"src/{package}/F{n}.kt"] = (
                    f"package {package}\nimport a.*\nimport b.*\nimport c.*\n"
                    f"fun f{n}() {{ missing() }}\n"
                ).encode()
        resolver = Resolver(ModuleIndex({p: parse_file(p, s) for p, s in files.items()}, []))
        walked: list[tuple[str, str, int]] = []
        once = resolver._in_module_once

        def counted(module, name, depth):  # type: ignore[no-untyped-def]
            walked.append((module.name, name, depth))
            return once(module, name, depth)

        resolver._in_module_once = counted  # type: ignore[method-assign]
        for path in sorted(files):
            assert resolver.resolve_file(path).calls == []
        assert walked  # the wildcards were followed
        assert len(walked) == len(set(walked)) <= 3 * 5  # packages x depths 0..4
