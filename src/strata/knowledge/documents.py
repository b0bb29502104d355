"""Unstructured documents (design and meeting notes) through graphiti-core.

One document is one graphiti episode:

- **reference time**: the document's own date (front matter ``date:``, or a
  ``Date:`` line in its first lines), else the time of the last commit that
  changed the file; graphiti makes it the episode's ``valid_at`` and dates the
  extracted facts relative to it;
- **partition**: the repository, as graphiti ``group_id``
  (:func:`strata.knowledge.facts.group_id`);
- **types**: the ontology's knowledge layer (:func:`extraction_types`);
- **schema**: graphiti's indexes come from ``migrations/0005_graphiti.cypher``;
  :class:`KnowledgeDriver` never builds or drops any.

The ingest is all or nothing per document. graphiti makes every model call
first and then writes the episode, its entities and its facts (including the
old facts it invalidates) in one Neo4j transaction; only after that commits
does Strata record the ``Document`` state (title, content hash, reference time,
episode uuid, tokens) through the KnowledgeWriter. A failed model call writes
nothing. A crash between graphiti's commit and the Document state leaves an
episode without state; the retry finds it by its source marker (repository,
path, content hash, reference time) and records the state without calling the
model again. A document whose content hash is already recorded is skipped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import pydantic
from graphiti_core import Graphiti
from graphiti_core.driver.driver import GraphDriverSession
from graphiti_core.driver.neo4j_driver import Neo4jDriver
from graphiti_core.embedder.client import EmbedderClient
from graphiti_core.llm_client import LLMClient
from graphiti_core.nodes import EpisodeType

from strata.errors import ConfigError, StrataError
from strata.facts import Source
from strata.graph.gateway import Gateway, translate
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.knowledge.document_files import Document
from strata.knowledge.embedder import EmbeddingReranker, build_embedder
from strata.knowledge.facts import group_id
from strata.knowledge.llm import LLMTimeout, build_llm_client, current_usage, metered, replay
from strata.ontology.model import Ontology
from strata.settings import Settings
from strata.writers.base import KnowledgeWriter

# graphiti reports usage to a third party unless told not to; Strata never does.
os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"

MAX_COROUTINES = 8  # graphiti's fan-out per step (a local model serves one call at a time)


class KnowledgeError(StrataError):
    """graphiti could not ingest a document; nothing was written for it."""

    code = "knowledge_error"


# -- extraction types from the ontology ------------------------------------------------

_LABEL_HINTS = {
    "Requirement": "a requirement, usually named by an id such as REQ-012",
    "Decision": "an architecture decision record, usually named by an id such as ADR-0007",
    "Document": "another document of the repository, named by its path",
}


@dataclass(frozen=True, slots=True)
class ExtractionTypes:
    """What graphiti's ``add_episode`` takes as custom entity and edge types."""

    entity_types: dict[str, type[pydantic.BaseModel]]
    edge_types: dict[str, type[pydantic.BaseModel]]
    edge_type_map: dict[tuple[str, str], list[str]]


def entity_type_name(label: str) -> str:
    """graphiti adds entity type names as Neo4j labels on its ``Entity`` nodes; a
    ``Ref`` suffix keeps them apart from the labels Strata's writers own."""
    return f"{label}Ref"


# Strata's own bookkeeping (findings, compiled cards), never something a document talks about.
NOT_EXTRACTED = frozenset({"KnowledgeFinding", "Card"})


def extraction_types(ontology: Ontology) -> ExtractionTypes:
    """Entity types for the knowledge layer's own node types, edge types for its edges.

    An entity type carries the node's identity fields (minus ``repo``, which is
    the partition) as optional attributes, so an extracted ``REQ-012`` can meet
    the parsed Requirement through its id. Each Strata-written knowledge edge
    (e.g. ``SUPERSEDES``) becomes an edge type between the mapped entity types.
    """
    entity_types: dict[str, type[pydantic.BaseModel]] = {}
    for node in ontology.nodes.values():
        if node.layer != "knowledge" or node.writer != "strata" or node.label in NOT_EXTRACTED:
            continue
        hint = _LABEL_HINTS.get(node.label, f"a {node.label} of the knowledge layer")
        fields: dict[str, Any] = {
            spec.name: (
                str | None,
                pydantic.Field(
                    default=None,
                    description=f"The {node.label}'s {spec.name} as written in the text, if any",
                ),
            )
            for spec in node.identity
            if spec.name != "repo"
        }
        entity_types[entity_type_name(node.label)] = pydantic.create_model(
            entity_type_name(node.label),
            __doc__=f"{hint[0].upper()}{hint[1:]}.",
            **fields,
        )
    edge_types: dict[str, type[pydantic.BaseModel]] = {}
    edge_type_map: dict[tuple[str, str], list[str]] = {}
    for edge in ontology.edges.values():
        if edge.layer != "knowledge" or edge.writer != "strata":
            continue
        edge_types[edge.type] = pydantic.create_model(
            edge.type,
            __doc__=f"{' or '.join(edge.from_labels)} {edge.type.lower().replace('_', ' ')} "
            f"{' or '.join(edge.to_labels)}.",
        )
        for src in edge.from_labels:
            for dst in edge.to_labels:
                pair = (entity_type_name(src), entity_type_name(dst))
                edge_type_map.setdefault(pair, []).append(edge.type)
    return ExtractionTypes(entity_types, edge_types, edge_type_map)


# -- graphiti, wired for Strata --------------------------------------------------------


class KnowledgeDriver(Neo4jDriver):
    """graphiti's Neo4j driver without schema side effects, with a write barrier.

    Its constructor schedules ``build_indices_and_constraints`` when an event loop
    runs; here that builds nothing (migrations own the schema). ``session`` is
    what graphiti writes an episode through: once a model call of the current
    ingest has failed (graphiti swallows some, e.g. edge dating), it refuses,
    so a document is never written from a partial extraction.
    """

    def __init__(self, uri: str, user: str, password: str, *, database: str) -> None:
        super().__init__(uri, user, password, database=database)
        # graphiti's reads name properties that may not exist yet; the server's
        # notifications about that are noise (the gateway turns them off too).
        logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)

    async def build_indices_and_constraints(self, delete_existing: bool = False) -> None:
        if delete_existing:
            raise ConfigError("Strata never drops graphiti's indexes (migrations own them)")

    def delete_all_indexes(self) -> Any:
        raise ConfigError("Strata never drops graphiti's indexes (migrations own them)")

    def session(self, database: str | None = None) -> GraphDriverSession:
        usage = current_usage()
        if usage is not None and usage.failure is not None:
            raise replay(usage.failure)
        return super().session(database)


@dataclass(frozen=True, slots=True)
class DocumentOutcome:
    """What happened to one document."""

    path: str
    status: Literal["ingested", "unchanged", "recovered"]
    episode_uuid: str | None
    reference_time: datetime | None = None
    tokens: Mapping[str, int] = field(default_factory=dict)
    entities: int = 0
    facts: int = 0
    invalidated: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "episode_uuid": self.episode_uuid,
            "reference_time": self.reference_time.isoformat() if self.reference_time else None,
            "tokens": dict(self.tokens),
            "entities": self.entities,
            "facts": self.facts,
            "invalidated": self.invalidated,
            "seconds": round(self.seconds, 3),
        }


FIND_EPISODE = """
MATCH (e:Episodic {group_id: $group_id, name: $name})
WHERE e.source_description = $marker
RETURN e.uuid AS uuid
ORDER BY e.created_at
LIMIT 1
"""


def source_marker(repo: str, doc: Document) -> str:
    """The episode's ``source_description``: finds an episode Strata did not record yet."""
    return f"strata document {repo}:{doc.path} {doc.content_hash} {doc.reference_time.isoformat()}"


class KnowledgeGraph:
    """graphiti-core with Strata's driver, models, types, and Document bookkeeping."""

    def __init__(
        self,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        *,
        llm: LLMClient,
        embedder: EmbedderClient,
    ) -> None:
        self.settings = settings
        self._gateway = gateway
        self._ontology = ontology
        self._reads = Reads(gateway, ontology)
        self._writer = KnowledgeWriter(FactStore(gateway, ontology))
        self.types = extraction_types(ontology)
        self.driver = KnowledgeDriver(
            settings.neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password.get_secret_value(),
            database=settings.neo4j_database,
        )
        self.graphiti = Graphiti(
            graph_driver=self.driver,
            llm_client=llm,
            embedder=embedder,
            cross_encoder=EmbeddingReranker(embedder),
            max_coroutines=MAX_COROUTINES,
        )

    async def close(self) -> None:
        await self.driver.close()  # all Graphiti.close does

    def document_key(self, repo: str, path: str) -> str:
        return self._ontology.node("Document").make_key({"repo": repo, "path": path})

    async def ingest(self, repo: str, doc: Document, *, commit: str | None) -> DocumentOutcome:
        """Make ``doc`` an episode of ``repo`` and record its Document state (idempotent)."""
        started = time.monotonic()
        current = await asyncio.to_thread(
            self._reads.node_current, "Document", self.document_key(repo, doc.path)
        )
        if current is not None and current.state.props.get("content_hash") == doc.content_hash:
            return DocumentOutcome(
                doc.path,
                "unchanged",
                current.state.props.get("episode_uuid"),
                current.state.valid_at,
            )
        group, marker = group_id(repo), source_marker(repo, doc)
        rows = await asyncio.to_thread(
            self._gateway.read, FIND_EPISODE, group_id=group, name=doc.path, marker=marker
        )
        if rows:  # written by an attempt that died before recording it
            await self._record(repo, doc, commit, str(rows[0]["uuid"]), tokens=None)
            return DocumentOutcome(
                doc.path,
                "recovered",
                str(rows[0]["uuid"]),
                doc.reference_time,
                seconds=time.monotonic() - started,
            )
        budget = self.settings.knowledge_document_timeout_s
        with metered() as usage:
            try:
                async with asyncio.timeout(budget):
                    result = await self.graphiti.add_episode(
                        name=doc.path,
                        episode_body=doc.text,
                        source_description=marker,
                        reference_time=doc.reference_time,
                        source=EpisodeType.text,
                        group_id=group,
                        # Documents stand alone: earlier episodes are not pasted into
                        # the prompts (facts still meet through the graph search).
                        previous_episode_uuids=[],
                        entity_types=self.types.entity_types,
                        edge_types=self.types.edge_types,
                        edge_type_map=self.types.edge_type_map,
                    )
            except TimeoutError:
                raise LLMTimeout(
                    f"{doc.path}: the model calls took longer than {budget:g} s in all",
                    hint="raise STRATA_KNOWLEDGE_DOCUMENT_TIMEOUT_S or use a faster model",
                    path=doc.path,
                    tokens=usage.as_dict(),
                ) from None
            except Exception as exc:
                error = _translated(exc, doc.path)
                error.details.setdefault("tokens", usage.as_dict())  # spent all the same
                raise error from exc
        if usage.failure is not None:  # the barrier in KnowledgeDriver.session makes this rare
            raise replay(usage.failure)
        episode = result.episode.uuid
        await self._record(repo, doc, commit, episode, tokens=usage.total_tokens)
        invalidated = sum(1 for e in result.edges if e.expired_at is not None)
        return DocumentOutcome(
            doc.path,
            "ingested",
            episode,
            doc.reference_time,
            tokens=usage.as_dict(),
            entities=len(result.nodes),
            facts=len(result.edges) - invalidated,
            invalidated=invalidated,
            seconds=time.monotonic() - started,
        )

    async def _record(
        self, repo: str, doc: Document, commit: str | None, episode: str, *, tokens: int | None
    ) -> None:
        props: dict[str, Any] = {
            "title": doc.title,
            "content_hash": doc.content_hash,
            "reference_time": doc.reference_time,
            "episode_uuid": episode,
        }
        if tokens is not None:
            props["tokens"] = tokens
        fact = self._writer.assert_state(
            "Document",
            {"repo": repo, "path": doc.path},
            props,
            valid_at=doc.reference_time,
            source=Source(commit=commit, path=doc.path, doc=episode),
            scope=doc.path,
        )
        await asyncio.to_thread(self._writer.write, [fact])


def _translated(exc: Exception, path: str) -> StrataError:
    if isinstance(exc, StrataError):
        return exc
    try:
        return translate(exc)  # the Neo4j driver's errors, as the gateway maps them
    except Exception:
        return KnowledgeError(
            f"graphiti could not ingest {path}: {type(exc).__name__}: {exc}", path=path
        )


@asynccontextmanager
async def open_graph(
    settings: Settings,
    gateway: Gateway,
    ontology: Ontology,
    *,
    llm: LLMClient | None = None,
    embedder: EmbedderClient | None = None,
) -> AsyncIterator[KnowledgeGraph]:
    """graphiti for one run in this event loop (the models' weights are loaded once per
    process; the clients and the async driver belong to the loop)."""
    graph = KnowledgeGraph(
        settings,
        gateway,
        ontology,
        llm=llm if llm is not None else build_llm_client(settings),
        embedder=embedder if embedder is not None else build_embedder(settings),
    )
    try:
        yield graph
    finally:
        await graph.close()
