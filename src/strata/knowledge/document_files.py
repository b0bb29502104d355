"""Which files of a repository are documents, and what one document says about itself.

Pure reading (and one ``git log`` for the fallback date): no graphiti, no
database. A document's reference time is its own date (front matter
``date:``, or a ``Date:`` line among its first lines), else the time of the
last commit that changed the file; a malformed date is an error, not a guess.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from strata.errors import GitError, ValidationError
from strata.git import Git, valid_sha

HEADER_LINES = 30  # a `Date:` line counts only in a document's header


# -- which files are documents ---------------------------------------------------------


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex: ``**/`` any folders, ``*`` and ``?`` within one name."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, globs: Sequence[str]) -> bool:
    return any(glob_regex(g).match(path) for g in globs)


# -- reading one document --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Document:
    """One document's text and what Strata records about it."""

    path: str
    text: str
    title: str
    content_hash: str
    reference_time: datetime
    dated_by: Literal["front_matter", "date_line", "commit"]


_FRONT = re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
_FRONT_FIELD = re.compile(r"^(?P<name>date|title)[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$", re.M | re.I)
_DATE_LINE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?[*_]{0,2}date[*_]{0,2}[ \t]*:[*_]{0,2}[ \t]*(?P<value>\S.*?)[ \t]*$",
    re.I,
)
_HEADING = re.compile(r"^#[ \t]+(?P<title>.+?)[ \t#]*$", re.M)


def parse_date(value: str) -> datetime:
    """An ISO date or date-time; a date is midnight UTC, a naive time is taken as UTC."""
    text = value.strip().strip("\"'").strip("*_ ")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValidationError(
            f"{value.strip()!r} is not an ISO date (YYYY-MM-DD, or a date-time)"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def read_document(path: str, raw: bytes, *, fallback_time: Callable[[], datetime]) -> Document:
    """Decode, date and title one document (a malformed date is an error, not a guess)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{path} is not UTF-8 text", path=path) from None
    fields: dict[str, str] = {}
    front = _FRONT.match(text)
    if front:
        for found in _FRONT_FIELD.finditer(front.group("body")):
            fields.setdefault(found.group("name").lower(), found.group("value"))
    dated_by: Literal["front_matter", "date_line", "commit"]
    try:
        if fields.get("date"):
            reference, dated_by = parse_date(fields["date"]), "front_matter"
        else:
            header = text[front.end() :] if front else text
            line = next(
                (m for m in map(_DATE_LINE.match, header.splitlines()[:HEADER_LINES]) if m),
                None,
            )
            if line:
                reference, dated_by = parse_date(line.group("value")), "date_line"
            else:
                reference, dated_by = fallback_time(), "commit"
    except ValidationError as exc:
        raise ValidationError(f"{path}: date {exc.message}", path=path) from None
    heading = _HEADING.search(text)
    title = (
        fields.get("title", "").strip("\"' ")
        or (heading.group("title") if heading else "")
        or posixpath.splitext(posixpath.basename(path))[0]
    )
    return Document(
        path=path,
        text=text,
        title=title[:300],
        content_hash=hashlib.blake2b(raw, digest_size=16).hexdigest(),
        reference_time=reference,
        dated_by=dated_by,
    )


def last_change_time(git: Git, commit: str, path: str) -> datetime:
    """When the last commit up to ``commit`` that touched ``path`` was made."""
    if not valid_sha(commit):
        raise GitError(f"not a commit sha: {commit!r}")
    return git.last_change_time(commit, path) or git.commit(commit).committed_at
