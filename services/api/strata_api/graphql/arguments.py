"""Resolver arguments parsed back: symbol keys, page cursors, bounded integers.

Pure functions, so every query module parses ids and cursors the same way.
"""

from __future__ import annotations

import base64

from strata.errors import ValidationError


def repo_of_key(key: str) -> str:
    """The repository of a stable key ``repo|ref|path|qualname`` (``|`` and ``%`` escaped)."""
    return key.split("|", 1)[0].replace("%7C", "|").replace("%25", "%")


def bounded(name: str, value: int, low: int, high: int) -> int:
    """``value`` when ``low <= value <= high``, else a ValidationError naming the argument."""
    if not low <= value <= high:
        raise ValidationError(f"`{name}` must be between {low} and {high}, got {value}")
    return value


def encode_cursor(key: str) -> str:
    """An opaque page cursor for the row with this key."""
    return base64.urlsafe_b64encode(key.encode()).decode()


def decode_cursor(cursor: str | None) -> str:
    """The key a cursor from :func:`encode_cursor` stands for ("" for none)."""
    if not cursor:
        return ""
    try:
        return base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationError("`after` is not a cursor returned by this API") from exc
