"""GitHub's own test values for validating webhook deliveries (its docs give a secret, a
payload and the X-Hub-Signature-256 they must produce) verify here, and nothing close."""

from __future__ import annotations

from starlette.datastructures import Headers

from strata.security import WebhookCredentials
from strata_api.webhooks import _verified

SECRET = "It's a Secret to Everybody"  # GitHub's published example
PAYLOAD = b"Hello, World!"
SIGNATURE = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

CREDS = WebhookCredentials(repo="example", provider="github", _secret=SECRET)


def test_the_documented_signature_verifies() -> None:
    assert CREDS.signature_matches(PAYLOAD, SIGNATURE)
    assert _verified(
        "github", CREDS, Headers({"X-Hub-Signature-256": f"sha256={SIGNATURE}"}), PAYLOAD
    )


def test_a_changed_payload_digit_or_header_does_not() -> None:
    assert not CREDS.signature_matches(PAYLOAD + b" ", SIGNATURE)
    assert not CREDS.signature_matches(PAYLOAD, SIGNATURE[:-1] + "6")
    assert not CREDS.signature_matches(PAYLOAD, SIGNATURE.upper())
    for headers in (
        {"X-Hub-Signature-256": SIGNATURE},  # no sha256= prefix
        {"X-Hub-Signature": f"sha256={SIGNATURE}"},  # the other header
        {},
    ):
        assert not _verified("github", CREDS, Headers(headers), PAYLOAD)
    other = WebhookCredentials(repo="example", provider="github", _secret=SECRET + "!")
    assert not other.signature_matches(PAYLOAD, SIGNATURE)
