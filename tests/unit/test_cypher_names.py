"""The gateway's second line of defence: names spliced into Cypher must look like names."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from strata.errors import ValidationError
from strata.graph.gateway import checked_label, checked_property, checked_rel_type


@pytest.mark.parametrize(
    ("check", "good"),
    [
        (checked_label, "Symbol"),
        (checked_rel_type, "IMPLEMENTED_BY"),
        (checked_property, "valid_at"),
    ],
)
def test_a_plain_name_passes_unchanged(check: Callable[[str], str], good: str) -> None:
    assert check(good) == good


@pytest.mark.parametrize("check", [checked_label, checked_rel_type, checked_property])
@pytest.mark.parametrize(
    "bad",
    ["", "Symbol\n", "Symbol`) DETACH DELETE n //", "Sym bol", "x" * 64, "A-B", "Symbol{}"],
)
def test_anything_else_is_refused(check: Callable[[str], str], bad: str) -> None:
    with pytest.raises(ValidationError):
        check(bad)
