"""Every layer writes through its own writer; the store's apply methods are the writers' alone."""

from __future__ import annotations

import re

from strata.ontology import load_ontology
from strata.settings import PROJECT_ROOT
from strata.writers import CodeWriter, KnowledgeWriter, LayerWriter, TraceWriter

_APPLY = re.compile(r"\.(?:_?apply|_?apply_many)\(")


class TestWriters:
    """One writer class per ontology layer, named ``<Layer>Writer``."""

    def test_one_writer_per_layer(self) -> None:
        ontology = load_ontology(PROJECT_ROOT / "ontology")
        writers: list[type[LayerWriter]] = [CodeWriter, KnowledgeWriter, TraceWriter]
        assert sorted(w.layer for w in writers) == sorted(ontology.layers)
        for writer in writers:
            assert writer.__name__ == f"{writer.layer.capitalize()}Writer"

    def test_no_module_but_the_writers_calls_the_store_apply(self) -> None:
        writers = PROJECT_ROOT / "src" / "strata" / "writers"
        callers = [
            str(path.relative_to(PROJECT_ROOT))
            for top in ("src", "services", "bench")
            for path in (PROJECT_ROOT / top).rglob("*.py")
            if writers not in path.parents
            and any(
                _APPLY.search(line) and "store" in line for line in path.read_text().splitlines()
            )
        ]
        assert callers == []
