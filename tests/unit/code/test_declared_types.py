"""The text helpers behind declared receiver types and overloads by arity."""

from __future__ import annotations

import pytest

from strata.code.languages import parse_file
from strata.code.languages._text import parameter_range
from strata.code.languages.base import plain_type
from strata.code.receivers import split_receiver


class TestPlainType:
    """A declared type reads as one type name, or as none."""

    @pytest.mark.parametrize(
        ("written", "name"),
        [
            ("Repo", "Repo"),
            ("&mut Repo", "Repo"),
            ("*store.DB", "store.DB"),
            ("Repo | null", "Repo"),
            ("?Item", "Item"),
            ("Log?", "Log"),
            ("List<Item>", "List"),
            ("crate::models::Cart", "crate::models::Cart"),
            ("dyn Shape", "Shape"),
        ],
    )
    def test_one_type(self, written: str, name: str) -> None:
        assert plain_type(written) == name

    @pytest.mark.parametrize("written", ["[]T", "int[]", "A | B", "(a: number) => void", ""])
    def test_no_type(self, written: str) -> None:
        assert plain_type(written) is None


class TestParameterRange:
    """How many arguments a signature accepts."""

    @pytest.mark.parametrize(
        ("signature", "name", "accepted"),
        [
            ("void f()", "f", (0, 0)),
            ("public boolean validate(String qty)", "validate", (1, 1)),
            ("void g(Map<String, Integer> m, int... xs)", "g", (1, None)),
            ("public void H(int a, int b = 2)", "H", (1, 2)),
            ("static string E(this string s, int n)", "E", (1, 1)),
            ("void P(params int[] xs)", "P", (0, None)),
            ('fun k(a: Int, b: String = "x"): Int', "k", (1, 2)),
        ],
    )
    def test_ranges(self, signature: str, name: str, accepted: tuple[int, int | None]) -> None:
        assert parameter_range(signature, name) == accepted

    def test_no_parameter_list(self) -> None:
        assert parameter_range("val x", "x") is None


class TestSplitReceiver:
    """Receivers split at dots outside brackets."""

    def test_chain(self) -> None:
        assert split_receiver("this.repo.find(a.b).items") == ["this", "repo", "find(a.b)", "items"]

    def test_paths_and_arrows(self) -> None:
        assert split_receiver("Cart::new()") == ["Cart", "new()"]
        assert split_receiver("$this->repo") == ["$this", "repo"]

    def test_empty_part_is_no_receiver(self) -> None:
        assert split_receiver("a..b") == []


class TestExtraction:
    """Declared types are scoped to the symbol that declares them."""

    def test_typescript_scopes(self) -> None:
        source = b"""class A {
  private repo: Repo;
  constructor(private svc: Service) {}
  get(): Repo { const x = new X(); return this.repo; }
}
"""
        rows = {(t.scope, t.name): (t.type, t.from_call) for t in parse_file("a.ts", source).types}
        assert rows[("A", "repo")] == ("Repo", False)
        assert rows[("A", "svc")] == ("Service", False)
        assert rows[("A.constructor", "svc")] == ("Service", False)
        assert rows[("A.get", "()")] == ("Repo", False)
        assert rows[("A.get", "x")] == ("X", False)

    def test_go_first_result(self) -> None:
        source = b"package p\n\nfunc New() (*Store, error) { return nil, nil }\n"
        rows = {(t.scope, t.name): t.type for t in parse_file("p/a.go", source).types}
        assert rows[("New", "()")] == "Store"

    def test_java_var_is_no_type(self) -> None:
        source = b"class A { void f() { var x = new B(); } }\n"
        rows = {(t.scope, t.name): t.type for t in parse_file("A.java", source).types}
        assert rows[("A.f", "x")] == "B"
