"""Push webhooks: ``POST /webhooks/{github,gitlab,gitea,bitbucket}/{repository}``.

Order of work, so nothing is trusted before it is verified:

1. the body is read with a cap (``BodyLimit`` middleware: 413) and kept as raw bytes;
2. a delivery that carries another provider's headers is refused (401): Gitea
   and Forgejo also send GitHub-style headers, so the GitHub route refuses any
   ``X-Gitea-*`` / ``X-Forgejo-*`` / ``X-Gogs-*`` delivery, and the Gitea route
   only ever reads ``X-Gitea-Signature`` / ``X-Forgejo-Signature``;
3. the secret comes from the registration named in the URL, never from the
   payload; an unknown repository (or one registered for another provider)
   is verified against decoy credentials and answered exactly like a bad
   signature (401), so callers cannot probe which repositories exist;
4. the signature (HMAC-SHA256 of the raw body) or GitLab token is checked in
   constant time; only then is the JSON parsed (malformed: 400);
5. ``ping`` answers 200; a push has its shas and ref validated (400), is
   de-duplicated in Redis (``SET NX`` with a TTL; a duplicate answers 200 and
   enqueues nothing) and enqueued as ``strata.code.reindex`` (202 + job ids).

Branch deletions, tag pushes (unless ``STRATA_WEBHOOK_INDEX_TAGS``) and
branches other than the registered default (unless
``STRATA_WEBHOOK_ALL_BRANCHES``) answer 200 and enqueue nothing. A created
branch is indexed in full (no ``before``); a force push is flagged ``forced``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Final

import redis
import structlog
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers

from strata.errors import StrataError, ValidationError
from strata.git import check_ref, is_zero_sha, valid_sha
from strata.jobs import ZERO_SHAS
from strata.jobstore import JobStore
from strata.registry import PROVIDERS, RepoRegistry
from strata.security import Provider, WebhookCredentials
from strata.settings import Settings
from strata_api.metrics import Metrics
from strata_api.tasks import TaskSender

log = structlog.get_logger(component="webhooks")
router = APIRouter()

# "No commit" on one side of a ref change (creation, deletion): git's SHA-1 zero id.
NO_COMMIT: Final = min(ZERO_SHAS, key=len)
_FOREIGN: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "github": (
        ("x-gitea-event", "gitea"),
        ("x-forgejo-event", "gitea"),
        ("x-gogs-event", "gitea"),
        ("x-gitea-signature", "gitea"),
        ("x-gitlab-event", "gitlab"),
        ("x-event-key", "bitbucket"),
    ),
    "gitea": (("x-gitlab-event", "gitlab"), ("x-event-key", "bitbucket")),
    "gitlab": (
        ("x-github-event", "github"),
        ("x-gitea-event", "gitea"),
        ("x-event-key", "bitbucket"),
    ),
    "bitbucket": (
        ("x-github-event", "github"),
        ("x-gitea-event", "gitea"),
        ("x-gitlab-event", "gitlab"),
    ),
}
_EVENT: Final = {
    "github": ("x-github-event",),
    "gitea": ("x-forgejo-event", "x-gitea-event"),
    "gitlab": ("x-gitlab-event",),
    "bitbucket": ("x-event-key",),
}
_DELIVERY: Final = {
    "github": ("x-github-delivery",),
    "gitea": ("x-forgejo-delivery", "x-gitea-delivery"),
    "gitlab": ("idempotency-key", "x-gitlab-event-uuid"),
    "bitbucket": ("x-request-uuid", "x-request-id"),
}
PING_EVENTS: Final = {"ping", "diagnostics:ping"}
PUSH_EVENTS: Final = {
    "push",
    "Push Hook",
    "Tag Push Hook",
    "repo:push",
    "repo:refs_changed",
}


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    result: str  # metrics label
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Push:
    ref: str
    before: str
    after: str
    forced: bool = False


class _Refused(Exception):
    def __init__(self, reply: Reply) -> None:
        self.reply = reply


def _first(headers: Headers, names: tuple[str, ...]) -> str | None:
    for name in names:
        value = headers.get(name)
        if value:
            return value
    return None


def _unverified() -> Reply:
    return Reply(401, "bad_signature", {"error": "signature verification failed"})


def _verified(provider: str, creds: WebhookCredentials, headers: Headers, body: bytes) -> bool:
    if provider == "gitlab":
        token = headers.get("x-gitlab-token")
        return token is not None and creds.token_matches(token)
    if provider == "gitea":
        present = [headers[h] for h in ("x-forgejo-signature", "x-gitea-signature") if h in headers]
        # Every signature header present must verify; at least one must be.
        results = [creds.signature_matches(body, value) for value in present]
        return bool(results) and all(results)
    header = "x-hub-signature-256" if provider == "github" else "x-hub-signature"
    value = headers.get(header, "")
    if not value.startswith("sha256="):
        creds.signature_matches(body, "")  # same work as a real check
        return False
    return creds.signature_matches(body, value.removeprefix("sha256="))


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ValidationError(f"push payload: '{key}' must be a string")
    return value


def _pushes(provider: str, event: str, payload: dict[str, Any]) -> list[Push]:
    """The ref updates a push delivery announces, in the provider-neutral form."""
    if provider in ("github", "gitea", "gitlab"):
        return [
            Push(
                ref=_str(payload, "ref"),
                before=_str(payload, "before"),
                after=_str(payload, "after"),
                forced=payload.get("forced") is True,
            )
        ]
    if event == "repo:refs_changed":  # Bitbucket Data Center
        changes = payload.get("changes")
        if not isinstance(changes, list):
            raise ValidationError("push payload: 'changes' must be a list")
        out = []
        for change in changes:
            ref = change.get("ref") if isinstance(change, dict) else None
            if not isinstance(ref, dict):
                raise ValidationError("push payload: each change needs a 'ref' object")
            out.append(Push(_str(ref, "id"), _str(change, "fromHash"), _str(change, "toHash")))
        return out
    push = payload.get("push")  # Bitbucket Cloud
    changes = push.get("changes") if isinstance(push, dict) else None
    if not isinstance(changes, list):
        raise ValidationError("push payload: 'push.changes' must be a list")
    return [_bitbucket_change(change) for change in changes]


def _bitbucket_change(change: Any) -> Push:
    if not isinstance(change, dict):
        raise ValidationError("push payload: each change must be an object")
    new, old = change.get("new"), change.get("old")
    side = new if isinstance(new, dict) else old
    if not isinstance(side, dict):
        raise ValidationError("push payload: a change needs 'new' or 'old'")
    kind, name = side.get("type"), _str(side, "name")
    prefix = {"branch": "refs/heads/", "named_branch": "refs/heads/", "tag": "refs/tags/"}.get(
        kind if isinstance(kind, str) else ""
    )
    if prefix is None:
        raise ValidationError(f"push payload: unsupported ref type {kind!r}")

    def target(side: Any) -> str:
        if side is None:  # the ref did not exist before (creation) or after (deletion)
            return NO_COMMIT
        commit = side.get("target") if isinstance(side, dict) else None
        if not isinstance(commit, dict):
            # Not a deletion: a present side without a commit is a malformed delivery.
            raise ValidationError("push payload: a change's 'target' must be an object")
        return _str(commit, "hash")

    return Push(prefix + name, target(old), target(new), forced=change.get("forced") is True)


class WebhookReceiver:
    """Verifies, filters, de-duplicates and enqueues deliveries; one per app."""

    def __init__(
        self,
        *,
        settings: Settings,
        registry: RepoRegistry,
        jobs: JobStore,
        tasks: TaskSender,
        client: redis.Redis,
        metrics: Metrics,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.jobs = jobs
        self.tasks = tasks
        self.redis = client
        self.metrics = metrics

    async def receive(self, provider: Provider, repo: str, headers: Headers, body: bytes) -> Reply:
        try:
            reply = await self._receive(provider, repo, headers, body)
        except _Refused as refused:
            reply = refused.reply
        except (StrataError, redis.RedisError) as exc:
            log.warning("webhook.unavailable", provider=provider, error=str(exc))
            reply = Reply(503, "unavailable", {"error": "temporarily unavailable; retry"})
        self.metrics.webhook(provider, reply.result)
        log.info("webhook", provider=provider, result=reply.result, status=reply.status)
        return reply

    async def _receive(self, provider: Provider, repo: str, headers: Headers, body: bytes) -> Reply:
        for header, other in _FOREIGN[provider]:
            if header in headers:
                return Reply(
                    401,
                    "wrong_provider",
                    {"error": f"this is a {other} delivery; point it at /webhooks/{other}/<name>"},
                )
        creds = await asyncio.to_thread(
            self.registry.credentials, repo, provider, timeout=self.settings.request_timeout_s
        )
        if not _verified(provider, creds, headers, body):
            reply = _unverified()
            return reply if creds.repo else Reply(reply.status, "unknown_repo", reply.body)
        event = _first(headers, _EVENT[provider]) or ""
        payload = _parse(body)
        if event in PING_EVENTS:
            return Reply(200, "ping", {"status": "pong"})
        if event not in PUSH_EVENTS:
            return Reply(200, "ignored", {"status": "ignored", "reason": f"event {event[:60]!r}"})
        try:
            pushes = _pushes(provider, event, payload)
            for push in pushes:
                await self._validate(push)
        except ValidationError as exc:
            raise _Refused(Reply(400, "invalid", {"error": exc.message})) from None
        wanted, skipped = self._select(pushes, creds)
        if not wanted:
            deleted = skipped and all(reason == "deleted" for reason in skipped.values())
            return Reply(
                200,
                "deleted" if deleted else "ignored",
                {
                    "status": "deleted, nothing to index" if deleted else "ignored",
                    "refs": skipped,
                },
            )
        delivery = _first(headers, _DELIVERY[provider])
        dedup = self._dedup_key(provider, repo, delivery, body)
        fresh = await asyncio.to_thread(
            self.redis.set, dedup, "1", nx=True, ex=self.settings.webhook_dedup_ttl_s
        )
        if not fresh:
            return Reply(200, "duplicate", {"status": "duplicate delivery, nothing enqueued"})
        try:
            ids = [await self._enqueue(repo, push, delivery) for push in wanted]
        except StrataError:
            with contextlib.suppress(redis.RedisError):  # let the host's retry through
                await asyncio.to_thread(self.redis.delete, dedup)
            raise
        return Reply(202, "accepted", {"status": "accepted", "jobs": ids, "refs": skipped})

    async def _validate(self, push: Push) -> None:
        for name, sha in (("before", push.before), ("after", push.after)):
            if not valid_sha(sha):
                raise ValidationError(f"'{name}' is not a 40- or 64-character hex sha")
        await asyncio.to_thread(check_ref, push.ref)

    def _select(
        self, pushes: list[Push], creds: WebhookCredentials
    ) -> tuple[list[Push], dict[str, str]]:
        tracked = f"refs/heads/{creds.default_branch}"
        wanted: list[Push] = []
        skipped: dict[str, str] = {}
        for push in pushes:
            if is_zero_sha(push.after) and not push.ref.startswith("refs/heads/"):
                skipped[push.ref] = "deleted"
            elif push.ref.startswith("refs/tags/"):
                if self.settings.webhook_index_tags:
                    wanted.append(push)
                else:
                    skipped[push.ref] = "tag (not indexed)"
            elif not push.ref.startswith("refs/heads/"):
                skipped[push.ref] = "not a branch or tag"
            elif self.settings.webhook_all_branches or push.ref == tracked:
                wanted.append(push)
            else:
                skipped[push.ref] = "branch not tracked"
        return wanted, skipped

    def _dedup_key(self, provider: str, repo: str, delivery: str | None, body: bytes) -> str:
        # No delivery id: the same body is the same delivery (a host's retry).
        ident = delivery or f"body:{hashlib.sha256(body).hexdigest()}"
        digest = hashlib.sha256(ident.encode("utf-8", "replace")).hexdigest()
        return f"strata:webhook:delivery:{provider}:{repo}:{digest}"

    async def _enqueue(self, repo: str, push: Push, delivery: str | None) -> str:
        record = await asyncio.to_thread(
            self.tasks.reindex,
            self.jobs,
            repo=repo,
            ref=push.ref,
            after=push.after,
            before=None if is_zero_sha(push.before) else push.before,
            forced=push.forced,
            delivery=delivery[:200] if delivery else None,
            source="webhook",
        )
        return record.id


def _parse(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        raise _Refused(Reply(400, "malformed", {"error": "body is not valid JSON"})) from None
    if not isinstance(payload, dict):
        raise _Refused(Reply(400, "malformed", {"error": "body must be a JSON object"}))
    return payload


@router.post("/webhooks/{provider}/{repo}", include_in_schema=False)
async def webhook(provider: str, repo: str, request: Request) -> JSONResponse:
    if provider not in PROVIDERS:
        return JSONResponse({"error": "unknown provider"}, status_code=404)
    receiver: WebhookReceiver = request.app.state.webhooks
    body = await request.body()  # capped by BodyLimit before we get here
    reply = await receiver.receive(provider, repo, request.headers, body)
    return JSONResponse(reply.body, status_code=reply.status)
