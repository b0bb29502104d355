"""Free prose saying "depends on X": a name is a claim, an ordinary word is not."""

from __future__ import annotations

import pytest

from strata.cards.gate import prose_claims
from strata.cards.model import Claim


class TestDependsOn:
    """Only names after "depends on" claim a dependency; noun phrases stay prose."""

    @pytest.mark.parametrize(
        "line",
        [
            "It depends on the caller's settings.",
            "Whether it retries depends on how it is called.",
            "Depends on whether the cache is warm.",
            "The answer depends on several inputs.",
        ],
    )
    def test_ordinary_words_are_not_claims(self, line: str) -> None:
        assert prose_claims("core", line) == []

    def test_bare_and_backticked_names_are(self) -> None:
        assert prose_claims("core", "It depends on numpy.") == [
            Claim("depends_on", "core", "numpy")
        ]
        assert prose_claims("core", "It depends on the `web-app` package.") == [
            Claim("depends_on", "core", "web-app")
        ]

    def test_a_list_of_backticked_names_claims_each(self) -> None:
        found = prose_claims("core", "It depends on `a`, `b` and `c`; see `d`.")
        assert found == [
            Claim("depends_on", "core", "a"),
            Claim("depends_on", "core", "b"),
            Claim("depends_on", "core", "c"),
            Claim("mentions", "core", "d"),
        ]
