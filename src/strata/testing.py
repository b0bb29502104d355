"""What tests and benchmarks of Strata share to drive it from outside: signed push
deliveries and generated repositories.

A GitHub push webhook as a git host sends it (the body and the signed headers),
so the test suite, the benchmarks and a load run all push the same way and a
change to the delivery format is made once. :func:`fast_commit` writes a commit
of any number of files straight into git's object store.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import Iterable
from pathlib import Path

ZERO_SHA = "0" * 40


def push_payload(
    repo: str, before: str, after: str, *, ref: str = "refs/heads/main", forced: bool = False
) -> bytes:
    """The body of a GitHub push of ``ref`` from ``before`` to ``after`` (zeros: created)."""
    return json.dumps(
        {
            "ref": ref,
            "before": before,
            "after": after,
            "forced": forced,
            "created": before == ZERO_SHA,
            "deleted": False,
            "repository": {"full_name": repo},
        }
    ).encode()


def push_headers(
    body: bytes, secret: str | bytes, *, delivery: str | None = None
) -> dict[str, str]:
    """GitHub's headers for ``body``: a push event, a delivery id, the HMAC-SHA256 signature."""
    key = secret.encode() if isinstance(secret, str) else secret
    signature = hmac.new(key, body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": f"sha256={signature}",
    }


def fast_commit(
    path: Path,
    files: Iterable[tuple[str, bytes]],
    when: int,
    *,
    parent: str | None = None,
) -> str:
    """A commit on ``main`` of the repository at ``path`` (made if missing) written by
    ``git fast-import``, without a work tree: tens of thousands of files in a second
    or two. ``files`` (path, content) are the whole tree, or with ``parent`` the
    files changed on top of it; equal contents are stored once. ``when``: epoch
    seconds. Its sha."""
    from strata.git import run_git

    if parent is None:
        path.mkdir(parents=True, exist_ok=True)
        run_git("init", "-q", "-b", "main", repo=path)
    marks: dict[bytes, int] = {}
    blobs: list[bytes] = []
    tree: list[bytes] = []
    for name, content in files:
        mark = marks.get(content)
        if mark is None:
            mark = marks[content] = len(marks) + 1
            blobs.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(content), content))
        tree.append(b"M 100644 :%d %s\n" % (mark, name.encode()))
    message = b"generated"
    stream = b"".join(
        [
            *blobs,
            b"commit refs/heads/main\n",
            b"committer Dev <dev@example.com> %d +0000\n" % when,
            b"data %d\n%s\n" % (len(message), message),
            *([b"from %s\n" % parent.encode()] if parent else []),
            *tree,
            b"\n",
        ]
    )
    run_git("fast-import", "--quiet", repo=path, input_bytes=stream)
    return run_git("rev-parse", "refs/heads/main", repo=path).decode().strip()
