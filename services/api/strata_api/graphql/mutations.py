"""Mutations: ``reindex`` (write scope on the repository) and ``registerRepository`` (admin).

``reindex`` indexes ``ref`` (default: the registration's default branch) at
``after``. Without ``after``, the commit is resolved with git in the
registration's local path, or in the worker's mirror
(``STRATA_MIRRORS_DIR/<name>``) when one exists; otherwise ``after`` is
required. The job is a full index of that commit (no ``before``): the worker
decides what actually changed.

``ingestDocuments`` (write scope) queues ``strata.knowledge.ingest``: the
repository's documents through the language model, at a commit resolved as for
``reindex`` (docs/knowledge.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import strawberry

from strata.errors import NotFound, ValidationError
from strata.git import branch_ref, require_sha, resolve_commit
from strata.registry import RepoRegistration
from strata_api.graphql.context import Context, Info
from strata_api.graphql.types.git_provider import GitProvider
from strata_api.graphql.types.job import Job
from strata_api.graphql.types.registration import RepositoryRegistration


def _local_clone(context: Context, reg: RepoRegistration) -> Path | None:
    candidates = [Path(reg.path)] if reg.path else []
    candidates.append(context.settings.mirrors_dir / reg.name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


def _resolve(
    context: Context, reg: RepoRegistration, ref: str | None, after: str | None
) -> tuple[str, str]:
    """(full ref, sha) for a reindex request (blocking: may run git)."""
    full_ref = branch_ref(ref or reg.default_branch)
    if after is not None:
        return full_ref, require_sha(after, what="after")
    clone = _local_clone(context, reg)
    if clone is None:
        raise ValidationError(
            f"cannot resolve {full_ref!r}: repository {reg.name!r} has no local clone here",
            hint="pass `after` with the commit sha to index",
            field="after",
        )
    return full_ref, resolve_commit(clone, full_ref)


async def _target(
    context: Context, repository: str, ref: str | None, after: str | None
) -> tuple[RepoRegistration, str, str]:
    """A repository the caller may write, its full ref and the commit to work on."""
    context.principal.require("write", repository)
    reg = await context.run(context.repos.get, repository)
    if reg is None:
        raise NotFound(f"repository {repository!r} is not registered", repo=repository)
    full_ref, sha = await asyncio.to_thread(_resolve, context, reg, ref, after)
    return reg, full_ref, sha


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Queue a reindex of a repository you may write.")
    async def reindex(
        self,
        info: Info,
        repository: str,
        ref: str | None = None,
        after: str | None = None,
    ) -> Job:
        context = info.context
        reg, full_ref, sha = await _target(context, repository, ref, after)
        record = await asyncio.to_thread(
            context.tasks.reindex,
            context.jobs,
            repo=reg.name,
            ref=full_ref,
            after=sha,
            source=f"graphql:{context.principal.key_id}",
        )
        return Job.from_domain(record)

    @strawberry.mutation(description="Register (or with replace, update) a repository. Admin.")
    async def register_repository(
        self,
        info: Info,
        name: str,
        provider: GitProvider,
        webhook_secret: str,
        default_branch: str = "main",
        url: str | None = None,
        path: str | None = None,
        replace: bool = False,
    ) -> RepositoryRegistration:
        context = info.context
        context.principal.require("admin")
        reg = await context.run(
            context.repos.register,
            name=name,
            provider=provider.value,
            secret=webhook_secret,
            default_branch=default_branch,
            url=url,
            path=path,
            replace=replace,
        )
        return RepositoryRegistration.from_domain(reg)

    # -- knowledge: documents through graphiti (opt-in: every ingest costs model calls) ----

    @strawberry.mutation(
        description="Queue the ingestion of a repository's documents (design and meeting "
        "notes) through the language model. `paths` are globs (default: the server's "
        "document globs); documents whose content is already ingested are skipped."
    )
    async def ingest_documents(
        self,
        info: Info,
        repository: str,
        paths: list[str] | None = None,
        ref: str | None = None,
        after: str | None = None,
    ) -> Job:
        context = info.context
        reg, full_ref, sha = await _target(context, repository, ref, after)
        record = await asyncio.to_thread(
            context.tasks.ingest,
            context.jobs,
            repo=reg.name,
            ref=full_ref,
            commit=sha,
            paths=list(paths or []),
            source=f"graphql:{context.principal.key_id}",
        )
        return Job.from_domain(record)
