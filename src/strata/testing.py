"""What tests and benchmarks of Strata share to drive it from outside: signed push deliveries.

A GitHub push webhook as a git host sends it (the body and the signed headers),
so the test suite, the benchmarks and a load run all push the same way and a
change to the delivery format is made once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid

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
