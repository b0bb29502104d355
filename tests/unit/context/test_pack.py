"""Fitting a pack: never over budget, lowest value dropped first, the headline kept."""

from __future__ import annotations

import pytest

from strata.context.pack import REQUIRED, Cite, Line, Pack, fit
from strata.context.tokens import count_tokens, usable


def pack(lines: list[Line], budget: int) -> Pack:
    return Pack(
        task="t",
        repository="r",
        intent="explain",
        target="k",
        target_name="pricing.discount",
        sufficient=True,
        reasons=[],
        lines=lines,
        candidates=[],
        budget=budget,
        as_of={},
    )


def many(n: int) -> list[Line]:
    cite = Cite("a/b.py", 3, "0123456789abcdef")
    head = [
        Line("Target", "function `pricing.discount` — `def discount(total, code)`", cite, REQUIRED)
    ]
    return head + [
        Line("Callers", f"called by `mod{i}.caller_{i}` (import, 0.95)", cite, float(i % 7))
        for i in range(n)
    ]


class TestFit:
    """The rendered markdown, counted by the real tokenizer, stays within the usable budget."""

    @pytest.mark.parametrize("budget", [50, 80, 120, 300, 1000])
    def test_never_over(self, budget: int) -> None:
        fitted = fit(pack(many(200), budget))
        assert fitted.tokens == count_tokens(fitted.markdown())
        assert fitted.tokens <= usable(budget)
        assert fitted.lines[0].value == REQUIRED  # the headline survives

    def test_lowest_value_dropped_first(self) -> None:
        lines = many(60)
        fitted = fit(pack(lines, 200))
        kept = fitted.lines[1:]
        dropped = [line for line in lines[1:] if line not in kept]
        assert dropped
        assert kept
        assert min(line.value for line in kept) >= max(line.value for line in dropped)

    def test_untouched_when_it_fits(self) -> None:
        fitted = fit(pack(many(3), 2000))
        assert fitted.dropped == 0
        assert len(fitted.lines) == 4

    def test_every_line_cited(self) -> None:
        text = fit(pack(many(10), 300)).markdown()
        for line in text.splitlines():
            if line.startswith("- "):
                assert line.endswith("[a/b.py:3@0123456789ab]")

    def test_structured_matches_markdown(self) -> None:
        fitted = fit(pack(many(10), 300))
        data = fitted.to_dict()
        assert data["markdown"] == fitted.markdown()
        lines = [line for s in data["sections"] for line in s["lines"]]
        assert len(lines) == len(fitted.lines)
        assert all(line["citation"] == "a/b.py:3@0123456789ab" for line in lines)


class TestTokenizer:
    """The tokenizer is real BPE (cl100k_base) and loads from the package, offline."""

    def test_known_counts(self) -> None:
        assert count_tokens("") == 0
        assert count_tokens("hello world") == 2
        # a special-token string is counted as plain text, never refused
        assert count_tokens("<|endoftext|>") > 1


class TestLine:
    """A line never breaks: each markdown row keeps its citation."""

    def test_breaks_flattened(self) -> None:
        line = Line("Target", "doc: first\n  second\r\nthird", Cite("a.py", 1, "c" * 40), 1.0)
        assert line.text == "doc: first second third"
        assert line.markdown() == f"- doc: first second third [a.py:1@{'c' * 12}]"

    def test_indentation_kept(self) -> None:
        assert Line("Outline", "  if: `x`", Cite("a.py", 1, None), 1.0).text == "  if: `x`"
