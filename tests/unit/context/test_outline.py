"""The statement outline of a real function, read from the bytes of a real file."""

from __future__ import annotations

from pathlib import Path

import strata.code.reads as reads_module
from strata.context.outline import outline

SOURCE = Path(reads_module.__file__).read_bytes()


def lines_of(name: str) -> tuple[int, int]:
    text = SOURCE.decode().splitlines()
    start = next(i for i, line in enumerate(text, 1) if line.strip().startswith(f"def {name}("))
    end = start
    while end < len(text) and (not text[end].strip() or text[end].startswith("        ")):
        end += 1
    return start, end


class TestOutline:
    """Branches, loops, returns and jumps of CodeReads._walk, nested as in the source."""

    def test_walk(self) -> None:
        start, end = lines_of("_walk")
        steps = outline("src/strata/code/reads.py", SOURCE, start, end)
        kinds = [(s.kind, s.depth) for s in steps]
        assert kinds[:3] == [("for", 0), ("if", 1), ("break", 2)]
        assert ("continue", 3) in kinds
        assert steps[-1].kind == "return"
        assert steps[-1].depth == 0
        assert "return found[:first]" in steps[-1].text
        text = SOURCE.decode().splitlines()
        for step in steps:  # each step cites the line its statement starts on
            assert text[step.line - 1].strip().startswith(step.kind)

    def test_unknown_language_or_span(self) -> None:
        assert outline("notes.txt", b"if x: y", 1, 1) == []
        assert outline("a.py", b"x = 1\n", 1, 1) == []

    def test_nested_functions_left_out(self) -> None:
        src = b"def f(x):\n    def g():\n        return 1\n    if x:\n        return g()\n"
        steps = outline("a.py", src, 1, 5)
        assert [(s.line, s.kind) for s in steps] == [(4, "if"), (5, "return")]

    def test_clauses_at_their_statements_depth(self) -> None:
        src = (
            b"def f(x, y):\n    if x:\n        return 1\n    elif y:\n        return 2\n"
            b"    else:\n        raise ValueError(x)\n"
        )
        steps = outline("a.py", src, 1, 7)
        assert [(s.line, s.kind, s.depth) for s in steps] == [
            (2, "if", 0),
            (3, "return", 1),
            (4, "elif", 0),
            (5, "return", 1),
            (6, "else", 0),
            (7, "raise", 1),
        ]
