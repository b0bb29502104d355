"""GraphQL request bodies are decoded strictly: a clear BadRequest, never a crash."""

from __future__ import annotations

import pytest

from strata_api.graphql.router import MAX_JSON_DEPTH, BadRequest, decode_request


class TestDecode:
    """Objects (and lists, refused later as batches) pass; everything else is BadRequest."""

    def test_object(self) -> None:
        assert decode_request(b'{"query": "{ version }"}') == {"query": "{ version }"}

    @pytest.mark.parametrize("body", [b'"x"', b"42", b"null", b"true", b"{", b"\xff"])
    def test_refused(self, body: bytes) -> None:
        with pytest.raises(BadRequest):
            decode_request(body)

    def test_nesting_at_the_cap_passes(self) -> None:
        nested = "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1)
        assert decode_request('{"v": ' + nested + "}")

    @pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 100_000])
    def test_deeper_is_refused(self, depth: int) -> None:
        with pytest.raises(BadRequest):
            decode_request('{"v": ' + "[" * depth + "]" * depth + "}")
