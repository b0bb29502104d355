"""The gate on a hand-built snapshot: compiled cards pass, every invented claim is named."""

from __future__ import annotations

import pytest

from strata.cards import check_card, compile_card, compile_cards, parse_card
from strata.cards.fingerprint import diff_sources, fingerprint, sources_of
from strata.cards.gate import prose_claims, split_frontmatter
from strata.cards.model import Claim
from strata.cards.owners import owners_of, parse_codeowners
from strata.errors import ValidationError
from tests.unit.cards.snapshot import snapshot


def test_compiled_cards_pass_and_parse_back() -> None:
    snap = snapshot()
    for card in compile_cards(snap):
        assert sorted(parse_card(card.markdown).claims) == sorted(card.claims)
        assert check_card(card, snap).ok
        front, _ = split_frontmatter(card.markdown)
        assert front["claims"] == len(card.claims)
        assert front["fingerprint"] == card.fingerprint


def test_sections() -> None:
    snap = snapshot()
    core, web = compile_card(snap, "core"), compile_card(snap, "web")
    assert Claim("called_by", "core", "web-app", "imports 2, calls 3") in core.claims
    assert Claim("depends_on", "web-app", "core", "imports 2, calls 3") in web.claims
    api = sorted(c.object for c in core.claims if c.kind == "api")
    assert api == ["core/calc.py:Calc", "core/calc.py:add"]  # no method, no _hidden, no test
    assert Claim("doc", "core", "core/calc.py:add", "Add two numbers.") in core.claims
    assert Claim("test", "core", "core/test_calc.py:test_add") in core.claims
    assert Claim("entrypoint", "web-app", "web/app.js:handler", "http GET /sum") in web.claims
    assert "- @core-team" in core.markdown
    assert "## Owners\n\n(none)" in web.markdown


@pytest.mark.parametrize(
    ("old", "new", "kind", "obj"),
    [
        (
            "- `web-app`: imports 2, calls 3",
            "- `web-app`: imports 2, calls 4",
            "called_by",
            "web-app",
        ),
        (
            "## Depends on\n\n(none)",
            "## Depends on\n\n- `web-app`: imports 1, calls 0",
            "depends_on",
            "web-app",
        ),
        (
            "- `core/test_calc.py:test_add`",
            "- `core/test_calc.py:test_sub`",
            "test",
            "core/test_calc.py:test_sub",
        ),
        ("(class)", "(function)", "api", "core/calc.py:Calc"),
        (
            "IMPLEMENTED_BY `core/calc.py:add`",
            "IMPLEMENTED_BY `core/calc.py:Calc`",
            "requirement",
            "REQ-7",
        ),
        ("`REQ-7`", "`REQ-8`", "requirement", "REQ-8"),
        ("# core\n", "# core\n\nThe core depends on numpy for speed.\n", "depends_on", "numpy"),
        ("# core\n", "# core\n\nIt calls `web/app.js:handler`.\n", "calls", "web/app.js:handler"),
        ("# core\n", "# core\n\nIt wraps `Decimal`.\n", "mentions", "Decimal"),
        ("- `core/calc.py`\n", "- `core/calc.py`\n- `core/gone.py`\n", "file", "core/gone.py"),
        ("- `core/calc.py`\n", "- `web/app.js`\n", "file", "web/app.js"),
    ],
)
def test_every_invented_claim_is_caught(old: str, new: str, kind: str, obj: str) -> None:
    snap = snapshot()
    card = compile_card(snap, "core")
    assert old in card.markdown
    result = check_card(card.markdown.replace(old, new, 1), snap)
    assert not result.ok
    assert (kind, obj) in [(c.kind, c.object) for c, _ in result.unsupported]


def test_a_claim_about_another_package() -> None:
    snap = snapshot()
    claims = [Claim("file", "core", "core/calc.py"), Claim("file", "web-app", "web/app.js")]
    result = check_card(claims, snap)
    assert [why for _, why in result.unsupported] == ["claim about 'web-app' on the card of 'core'"]


def test_prose_claims() -> None:
    found = prose_claims("core", "It depends on `web-app` and calls helper_fn; see `Calc`.")
    assert found == [
        Claim("depends_on", "core", "web-app"),
        Claim("calls", "core", "helper_fn"),
        Claim("mentions", "core", "Calc"),
    ]
    assert prose_claims("core", "It calls the server once.") == []  # not an identifier


def test_frontmatter_is_required() -> None:
    with pytest.raises(ValidationError):
        parse_card("# no frontmatter\n")
    with pytest.raises(ValidationError):
        parse_card("---\npackage: x\n")


def test_fingerprints() -> None:
    snap = snapshot()
    before = sources_of(snap, "core")
    assert before["file:core/calc.py"] == "f1"
    assert before["imports:in:web"] == "2"
    assert before["calls:in:web"] == "3"
    assert "req:REQ-7" in before
    snap.files["core"]["core/calc.py"] = "f1b"
    snap.imports[("web", "core")] = 1
    after = sources_of(snap, "core")
    assert fingerprint(before) != fingerprint(after)
    delta = diff_sources(before, after)
    assert delta.changed == ("file:core/calc.py", "imports:in:web")
    assert delta.stale
    assert not diff_sources(after, dict(after)).stale
    assert sources_of(snap, "web")["file:web/app.js"] == "f3"


def test_codeowners() -> None:
    rules = parse_codeowners("# owners\n* @all\n/core/ @core-team @lead\nweb/** @web\n*.md @docs\n")
    assert owners_of("core", rules) == ["@core-team", "@lead"]
    assert owners_of("web", rules) == ["@web"]
    assert owners_of("tools/x", rules) == ["@all"]
    assert owners_of(".", rules) == ["@all"]
