"""A function's statement outline (branches, loops, returns, raises), computed on demand.

Nothing here is stored: the caller reads the file's blob at the commit the
symbol's state cites and passes its bytes; tree-sitter parses it with the
grammar the code layer uses for that path. Node types are matched by family
(``if``/``elif``/``else``, loops, ``try``/``except``/``catch``, ``return``,
``raise``/``throw``, ``yield``, ``match``/``switch``/``case``), so every
language with an adapter gets an outline.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Parser

from strata.code.languages import adapter_for_path

MAX_STEPS = 80

_KINDS: dict[str, str] = {
    "if_statement": "if",
    "elif_clause": "elif",
    "else_clause": "else",
    "if_expression": "if",
    "for_statement": "for",
    "for_in_statement": "for",
    "enhanced_for_statement": "for",
    "for_expression": "for",
    "foreach_statement": "for",
    "while_statement": "while",
    "while_expression": "while",
    "do_statement": "do",
    "loop_expression": "loop",
    "try_statement": "try",
    "except_clause": "except",
    "catch_clause": "catch",
    "finally_clause": "finally",
    "with_statement": "with",
    "return_statement": "return",
    "return_expression": "return",
    "raise_statement": "raise",
    "throw_statement": "throw",
    "yield": "yield",
    "match_statement": "match",
    "match_expression": "match",
    "switch_statement": "switch",
    "expression_switch_statement": "switch",
    "case_clause": "case",
    "switch_case": "case",
    "expression_case": "case",
    "break_statement": "break",
    "continue_statement": "continue",
}
_FUNCTIONS = ("function", "method", "lambda", "closure", "arrow")
# Clauses continue the statement they belong to: shown at its depth, not inside it.
_CLAUSES = frozenset({"elif", "else", "except", "catch", "finally", "case"})


@dataclass(frozen=True, slots=True)
class Step:
    """One statement of the outline: its line (1-based), nesting depth, kind and text."""

    line: int
    depth: int
    kind: str
    text: str


def outline(path: str, source: bytes, line_start: int, line_end: int) -> list[Step]:
    """The control-flow statements of the definition spanning ``line_start..line_end``.

    Nested function bodies are left out (they are other symbols). An unknown
    language or a span that holds no definition gives an empty outline.
    """
    adapter = adapter_for_path(path)
    if adapter is None or line_start < 1:
        return []
    tree = Parser(adapter.ts_language()).parse(source)
    target = _definition(tree.root_node, line_start - 1, line_end - 1)
    if target is None:
        return []
    steps: list[Step] = []
    _walk(target, 0, steps, top=target)
    return steps[:MAX_STEPS]


def _definition(root: Node, first: int, last: int) -> Node | None:
    """The innermost node starting on ``first`` that spans to ``last`` and has a body."""
    best: Node | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        start, end = node.start_point[0], node.end_point[0]
        if end < first or start > last:
            continue
        if start == first and end >= last - 1 and node.child_by_field_name("body") is not None:
            best = node
        stack.extend(node.children)
    return best


def _walk(node: Node, depth: int, steps: list[Step], *, top: Node) -> None:
    for child in node.children:
        if len(steps) >= MAX_STEPS:
            return
        if child is not top and any(f in child.type for f in _FUNCTIONS):
            continue  # a nested definition is its own symbol
        kind = _KINDS.get(child.type)
        if kind is not None:
            at = depth - 1 if kind in _CLAUSES and depth > 0 else depth
            steps.append(Step(child.start_point[0] + 1, at, kind, _first_line(child)))
            _walk(child, at + 1, steps, top=top)
        else:
            _walk(child, depth, steps, top=top)


def _first_line(node: Node) -> str:
    text = (node.text or b"").decode("utf-8", "replace").splitlines()
    line = text[0].strip() if text else ""
    return line if len(line) <= 100 else line[:97] + "..."
