"""Which retrievers a search runs: all by default, a chosen few for benchmarks."""

from __future__ import annotations

import pytest

from strata.errors import ValidationError
from strata.search.service import RETRIEVERS, check_retrievers


class TestRetrieverChoice:
    """Unknown or empty choices are refused; the default is every retriever."""

    def test_default_is_all(self) -> None:
        assert check_retrievers(None) == frozenset(RETRIEVERS)

    def test_a_chosen_few(self) -> None:
        assert check_retrievers(["fulltext", "graph"]) == {"fulltext", "graph"}

    @pytest.mark.parametrize("choice", [[], ["bm25"], ["vector", "grep"]])
    def test_refused(self, choice: list[str]) -> None:
        with pytest.raises(ValidationError, match="retrievers"):
            check_retrievers(choice)
