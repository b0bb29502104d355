"""The words of code bodies, for the search documents: read from git, never stored as facts.

A commit message usually names what a body *uses* (a called function, an
attribute, a string, a comment) rather than the function's own name, so a
search document also carries the identifier words of its source text: the
whole file for a File, the symbol's lines for a Symbol. The text comes from
the repository's git objects by blob id (the File state's ``content_hash``),
read in one ``cat-file --batch`` per sync; where the objects are not on this
machine the documents are written without body words and a search still
answers from names, docstrings and vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from strata.code.layout import Layout, decode_layout
from strata.errors import StrataError
from strata.git import Git
from strata.graph.gateway import Gateway
from strata.locations import repository_git
from strata.search.text import WORD, word_parts

BlobSource = Callable[[str, list[str]], dict[str, bytes]]
"""``(repository, blob shas) -> {sha: bytes}``; what is not on this machine is left out."""

# Bounds on a document's body words (distinct, in order of first use): enough for
# the vocabulary of a long function or a module, small enough for one property.
SYMBOL_BODY_WORDS = 400
FILE_BODY_WORDS = 5000


def body_words(text: str, limit: int) -> str:
    """The distinct identifier words of source text (whole and split), at most ``limit``."""
    seen: dict[str, None] = {}
    # A repeated identifier adds nothing its first use did not: split each one once.
    for word in dict.fromkeys(WORD.findall(text)):
        for part in word_parts(word):
            if len(part) > 1 and not part.isdigit():
                seen.setdefault(part, None)
                if len(seen) >= limit:
                    return " ".join(seen)
    return " ".join(seen)


def git_blob_source(locate: Callable[[str], Path | None]) -> BlobSource:
    """Blobs from the git directory ``locate(repository)`` names, in one batch per call."""

    def read(repository: str, shas: list[str]) -> dict[str, bytes]:
        if not shas:
            return {}
        where = locate(repository)
        if where is None or not where.exists():
            return {}
        git = Git(where)
        try:
            return git.blobs(shas)
        except StrataError:
            # One missing blob fails the batch (a pruned mirror): read what is there.
            found: dict[str, bytes] = {}
            for sha in shas:
                try:
                    found.update(git.blobs([sha]))
                except StrataError:
                    continue
            return found

    return read


def registered_blob_source(gateway: Gateway, mirrors: Path | None) -> BlobSource:
    """Blobs of a repository wherever :func:`strata.locations.repository_git` finds it."""
    return git_blob_source(repository_git(gateway, mirrors))


def default_mirrors() -> Path | None:
    """The mirrors folder of this process's settings (None if they do not load)."""
    try:
        from strata.settings import Settings

        return Settings().mirrors_dir
    except ValueError:  # pydantic refused the environment: only the body words are lost
        return None


def bodies(rows: Iterable[dict[str, Any]], texts: dict[str, bytes]) -> dict[int, str]:
    """Body words per row index: a File's whole blob, a Symbol's lines of its file's blob."""
    out: dict[int, str] = {}
    lines_of: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        blob = str(row.get("blob") or "")
        data = texts.get(blob)
        if data is None:
            continue
        if row["label"] == "File":
            out[i] = body_words(data.decode("utf-8", errors="replace"), FILE_BODY_WORDS)
            continue
        start, end = _span(row)
        if start is None or end is None:
            continue
        if blob not in lines_of:
            lines_of[blob] = data.decode("utf-8", errors="replace").splitlines()
        text = "\n".join(lines_of[blob][max(start - 1, 0) : end])
        out[i] = body_words(text, SYMBOL_BODY_WORDS)
    return out


def _span(row: dict[str, Any]) -> tuple[int | None, int | None]:
    """A symbol row's lines: its own (ontology v1-v3) or its File version's layout (v4:
    ``layout``, decoded once per file version, or its entries as ``file_layout``)."""
    start, end = row["state"].get("line_start"), row["state"].get("line_end")
    if isinstance(start, int) and isinstance(end, int):
        return start, end
    layout = row.get("layout")
    if not isinstance(layout, Layout):
        layout = decode_layout(row.get("file_layout"))
    span = layout.span(row.get("node", {}).get("qualname"))
    return span if span is not None else (None, None)
