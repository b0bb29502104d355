"""graphiti's schema comes from migrations/0005 only; constructing graphiti creates nothing."""

from __future__ import annotations

import asyncio
import re

import pytest
from graphiti_core.driver import neo4j_driver
from graphiti_core.driver.driver import GraphProvider
from graphiti_core.graph_queries import get_fulltext_indices, get_range_indices

from strata.graph.gateway import Gateway
from strata.knowledge.documents import KnowledgeDriver, open_graph
from strata.knowledge.embedder import LocalEmbedder
from strata.ontology import Ontology
from strata.settings import Settings
from tests.integration.knowledge_docs.scripted import ScriptedLLMClient

# Owned by the uniqueness constraints of 0002/0005 instead (same label and property).
BY_CONSTRAINT = {"entity_uuid", "episode_uuid", "community_uuid", "saga_uuid"}


def graphiti_index_names() -> set[str]:
    statements = get_range_indices(GraphProvider.NEO4J) + get_fulltext_indices(GraphProvider.NEO4J)
    return {re.search(r"INDEX (\w+) IF NOT EXISTS", s).group(1) for s in statements}  # type: ignore[union-attr]


def schema(gateway: Gateway) -> set[tuple[str, str]]:
    rows = gateway.read("SHOW INDEXES YIELD name, type RETURN name, type")
    return {(r["name"], r["type"]) for r in rows}


class TestGraphitiSchema:
    """Every index graphiti's queries need exists, under graphiti's names, from our migration."""

    def test_indexes_present(self, gateway: Gateway) -> None:
        present = {name for name, _ in schema(gateway)}
        assert graphiti_index_names() - BY_CONSTRAINT <= present
        fulltext = {name for name, kind in schema(gateway) if kind == "FULLTEXT"}
        assert {
            "episode_content",
            "node_name_and_summary",
            "community_name",
            "edge_name_and_fact",
        } <= fulltext

    def test_uuid_lookups_are_served_by_constraints(self, gateway: Gateway) -> None:
        rows = gateway.read(
            "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties, type "
            "WHERE type = 'UNIQUENESS' RETURN labelsOrTypes[0] AS label, properties AS props"
        )
        unique = {(r["label"], tuple(r["props"])) for r in rows}
        for label in ("Entity", "Episodic", "Community", "Saga"):
            assert (label, ("uuid",)) in unique


class TestNoSideEffects:
    """Our driver, built inside a running event loop, never runs graphiti's index builder."""

    def test_constructing_the_wiring_builds_nothing(
        self,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        embedder: LocalEmbedder,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        asked: list[str] = []
        monkeypatch.setattr(
            neo4j_driver, "get_range_indices", lambda provider: asked.append("range") or []
        )
        monkeypatch.setattr(
            neo4j_driver, "get_fulltext_indices", lambda provider: asked.append("fulltext") or []
        )
        before = schema(gateway)

        async def build_inside_a_loop() -> None:
            async with open_graph(
                settings, gateway, ontology, llm=ScriptedLLMClient(), embedder=embedder
            ) as graph:
                assert isinstance(graph.driver, KnowledgeDriver)
                await asyncio.sleep(0.2)  # let the task graphiti's constructor scheduled run

        asyncio.run(build_inside_a_loop())
        assert asked == []
        assert schema(gateway) == before

    def test_the_check_would_see_graphiti_build(
        self, settings: Settings, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Control: graphiti's own driver, built the same way, does ask for its indexes."""
        asked: list[str] = []
        monkeypatch.setattr(
            neo4j_driver, "get_range_indices", lambda provider: asked.append("range") or []
        )
        monkeypatch.setattr(
            neo4j_driver, "get_fulltext_indices", lambda provider: asked.append("fulltext") or []
        )

        async def build_inside_a_loop() -> None:
            driver = neo4j_driver.Neo4jDriver(
                settings.neo4j_uri,
                settings.neo4j_user,
                settings.neo4j_password.get_secret_value(),
            )
            await asyncio.sleep(0.2)
            await driver.close()

        asyncio.run(build_inside_a_loop())
        assert asked == ["range", "fulltext"]

    def test_dropping_indexes_is_refused(self, settings: Settings) -> None:
        async def attempt() -> None:
            driver = KnowledgeDriver(
                settings.neo4j_uri,
                settings.neo4j_user,
                settings.neo4j_password.get_secret_value(),
                database=settings.neo4j_database,
            )
            try:
                with pytest.raises(Exception, match="never drops"):
                    await driver.build_indices_and_constraints(delete_existing=True)
                with pytest.raises(Exception, match="never drops"):
                    driver.delete_all_indexes()
            finally:
                await driver.close()

        asyncio.run(attempt())
