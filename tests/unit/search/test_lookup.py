"""The name prefilter of a qualified-name suffix: what every matching name contains."""

from __future__ import annotations

import pytest

from strata.search.lookup import name_tail


@pytest.mark.parametrize(
    ("suffix", "tail"),
    [
        ("text.capfirst", "capfirst"),
        ("apfirst", "apfirst"),  # starts inside the name
        ("queryset.filt", "filt"),  # ends inside the name
        ("initprepopulatedfields#2", "initprepopulatedfields"),  # an overload
        ("#2", None),
        ("mod::func", "func"),
        ("outer$inner", "inner"),  # `$` may be part of a name (JS) or join two (JVM)
        ("web/cart.ts:store.total", "total"),
        ("cls.<lambda>", None),
        ("café", None),  # ends outside ASCII identifier characters: no prefilter
        (None, None),
    ],
)
def test_name_tail(suffix: str | None, tail: str | None) -> None:
    assert name_tail(suffix) == tail
