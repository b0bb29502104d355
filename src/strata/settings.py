"""The one settings class, read from the environment (``STRATA_`` prefix).

Settings are built once by the entry point (CLI, API app factory, Celery app)
and passed down; nothing builds them at import time. Development defaults are
convenient and unsafe, so :meth:`Settings.check_safe` refuses them in any other
environment.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from strata.errors import ConfigError

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# Known-unsafe values: refused outside development.
DEV_NEO4J_PASSWORD = "strata-dev-password"  # noqa: S105 - loopback development database only
DEV_SECRET_KEY = "strata-dev-secret-key-change-me"  # noqa: S105 - development only, refused elsewhere


class Environment(StrEnum):
    DEVELOPMENT = "development"
    TEST = "test"
    PRODUCTION = "production"


class Settings(BaseSettings):
    """Everything Strata reads from its environment."""

    model_config = SettingsConfigDict(
        env_prefix="STRATA_", env_file=None, extra="forbid", frozen=True
    )

    environment: Environment = Environment.DEVELOPMENT

    # Neo4j
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr(DEV_NEO4J_PASSWORD)
    neo4j_database: str = "neo4j"
    neo4j_max_pool_size: int = Field(default=50, ge=1, le=1000)
    neo4j_connect_timeout_s: float = Field(default=5.0, gt=0)
    neo4j_query_timeout_s: float = Field(default=30.0, gt=0)

    # Redis (Celery broker + result backend + webhook de-duplication)
    redis_url: str = "redis://127.0.0.1:6379/0"

    # Celery
    queue_code: str = "code"
    queue_knowledge: str = "knowledge"
    queue_trace: str = "trace"
    # A worker that consumes only the background queues (knowledge, trace: embedding,
    # cards, requirement sync) lowers its CPU priority by this much (0: not at all), so
    # on a shared host a push's code worker is not slowed by the previous push's cards.
    background_nice: int = Field(default=10, ge=0, le=19)
    task_time_limit_s: int = Field(default=3600, ge=10)
    # Must exceed the longest task, or Redis redelivers a task still running.
    visibility_timeout_s: int = Field(default=7200, ge=60)

    # API
    secret_key: SecretStr = SecretStr(DEV_SECRET_KEY)
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_public_key: SecretStr | None = None
    jwt_algorithms: list[str] = Field(default_factory=lambda: ["RS256"])
    webhook_max_body_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    request_timeout_s: float = Field(default=10.0, gt=0)
    rate_limit_per_minute: int = Field(default=600, ge=1)
    # Searches and context packs run in this many processes beside the API's own, so
    # cheap lookups never wait behind them (strata_api.heavy); 0: in the API process.
    api_heavy_workers: int = Field(default=1, ge=0, le=16)
    cors_origins: list[str] = Field(default_factory=list)
    # Access control (docs/api-security.md). Anonymous reads are honoured only
    # in development, and the API refuses to start with them elsewhere.
    dev_anonymous_reads: bool = False
    # Revocation reaches every API process within this many seconds (0: no cache).
    api_key_cache_s: float = Field(default=5.0, ge=0, le=300)
    jwt_scopes_claim: str = "scope"
    jwt_repos_claim: str = "strata_repos"
    jwt_leeway_s: int = Field(default=10, ge=0, le=300)
    # GraphQL limits: every document is checked before anything executes.
    graphql_max_depth: int = Field(default=10, ge=2, le=100)
    graphql_max_aliases: int = Field(default=15, ge=0, le=1000)
    graphql_max_tokens: int = Field(default=2000, ge=50, le=100_000)
    graphql_max_cost: int = Field(default=5000, ge=10)
    graphql_default_page_size: int = Field(default=10, ge=1)
    graphql_max_page_size: int = Field(default=100, ge=1)
    graphql_max_body_bytes: int = Field(default=256 * 1024, ge=1024)
    # Webhooks: de-duplication window, and which refs a push indexes.
    webhook_dedup_ttl_s: int = Field(default=3 * 24 * 3600, ge=60)
    webhook_all_branches: bool = False
    webhook_index_tags: bool = False
    # When set, /metrics asks for `Authorization: Bearer <token>`.
    metrics_token: SecretStr | None = None

    # Knowledge extraction (graphiti-core)
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr | None = None
    embedder: Literal["local", "openai"] = "local"
    embedder_base_url: str | None = None
    embedder_model: str | None = None
    # "local": the GGUF model shipped in a package (or llm_model_path), run in
    # process by llama-cpp; "openai": the OpenAI-compatible endpoint above.
    llm_provider: Literal["local", "openai"] = "local"
    llm_model_path: Path | None = None
    llm_threads: int = Field(default=1, ge=1, le=64)
    llm_context_tokens: int = Field(default=8192, ge=512, le=131_072)
    llm_max_tokens: int = Field(default=1024, ge=16, le=32_768)
    # One model call; a slower one fails the document (retried by the task).
    llm_timeout_s: float = Field(default=120.0, gt=0)
    # How an OpenAI-compatible endpoint is asked for JSON: a schema (constrained
    # decoding) or plain JSON mode, for servers without json_schema support.
    llm_structured_output: Literal["json_schema", "json_object"] = "json_schema"
    embedder_api_key: SecretStr | None = None
    embedder_dimensions: int = Field(default=512, ge=8, le=8192)
    # Which files of an indexed repository are unstructured documents.
    knowledge_document_globs: list[str] = Field(
        default_factory=lambda: ["docs/notes/**/*.md", "docs/design/**/*.md", "notes/**/*.md"]
    )
    knowledge_max_document_bytes: int = Field(default=100_000, ge=100)
    # All model calls of one document together.
    knowledge_document_timeout_s: float = Field(default=1800.0, gt=0)

    # Knowledge cards (strata.cards): optional model prose under the exact gate.
    cards_prose: bool = False  # draft a prose overview per card with the model above
    # Free-text sentences the model judges supported / all sentences, for the prose to pass.
    cards_min_supported: float = Field(default=0.75, ge=0.0, le=1.0)
    cards_judge: bool = True  # False: only the exact structural gate checks the prose
    cards_redrafts: int = Field(default=2, ge=0, le=5)  # then the card goes to needs_review
    cards_lint_interval_s: float = Field(default=3600.0, gt=0)  # the scheduled lint (celery beat)
    llm_cost_per_1k_tokens: float = Field(default=0.0, ge=0.0)  # for the cost on spans and jobs
    # OTLP/HTTP traces endpoint (e.g. http://collector:4318/v1/traces); unset: spans stay off.
    otlp_endpoint: str | None = None

    # Code layer
    mirrors_dir: Path = PROJECT_ROOT / "var" / "mirrors"
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    # `strata index` hands its run to an index daemon that keeps the parsed tree and
    # the flow's indexes between runs (strata.indexd); it exits after this many idle
    # seconds. 0: every `strata index` indexes in its own process (as --no-daemon).
    index_daemon_idle_s: float = Field(default=900.0, ge=0)

    # Files of the project itself
    ontology_dir: Path = PROJECT_ROOT / "ontology"
    migrations_dir: Path = PROJECT_ROOT / "migrations"

    # Local development stack (strata dev ..., strata up)
    var_dir: Path = PROJECT_ROOT / "var"
    dev_neo4j_port: int = Field(default=7687, ge=1, le=65535)
    dev_neo4j_heap_mb: int = Field(default=1024, ge=256)
    dev_neo4j_pagecache_mb: int = Field(default=512, ge=64)
    dev_redis_port: int = Field(default=6379, ge=1, le=65535)
    api_host: str = "127.0.0.1"
    api_port: int = Field(default=8000, ge=1, le=65535)

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_json: bool = True

    @field_validator("neo4j_uri")
    @classmethod
    def _neo4j_scheme(cls, value: str) -> str:
        allowed = ("bolt://", "bolt+s://", "bolt+ssc://", "neo4j://", "neo4j+s://", "neo4j+ssc://")
        if not value.startswith(allowed):
            raise ValueError(f"must start with one of {', '.join(allowed)}")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_scheme(cls, value: str) -> str:
        if not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must start with redis://, rediss:// or unix://")
        return value

    @property
    def is_development(self) -> bool:
        return self.environment is Environment.DEVELOPMENT

    @property
    def queues(self) -> dict[str, str]:
        """Layer name to queue name."""
        return {
            "code": self.queue_code,
            "knowledge": self.queue_knowledge,
            "trace": self.queue_trace,
        }

    def check_safe(self) -> Settings:
        """Refuse development defaults outside development; return self."""
        if self.is_development:
            return self
        problems: list[str] = []
        if self.neo4j_password.get_secret_value() == DEV_NEO4J_PASSWORD:
            problems.append("STRATA_NEO4J_PASSWORD is the development default")
        if self.secret_key.get_secret_value() == DEV_SECRET_KEY:
            problems.append("STRATA_SECRET_KEY is the development default")
        if len(self.secret_key.get_secret_value()) < 32:
            problems.append("STRATA_SECRET_KEY must be at least 32 characters")
        if problems:
            raise ConfigError(
                f"unsafe settings for environment {self.environment.value!r}: "
                + "; ".join(problems),
                hint="set real secrets, or STRATA_ENVIRONMENT=development on a workstation",
                problems=problems,
            )
        return self


def load_settings() -> Settings:
    """Read the environment once, check it, and return the settings."""
    try:
        settings = Settings()
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise ConfigError(
            f"invalid settings: {exc}", hint="check the STRATA_* environment variables"
        ) from exc
    return settings.check_safe()
