"""Search documents: the next page is read while the current one is built and written;
a repository documented from the start is found by its key prefix."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from strata.search.docs import read_ahead


def test_items_come_prepared_and_in_order() -> None:
    assert list(read_ahead(range(5), lambda i: i * 10)) == [0, 10, 20, 30, 40]
    assert list(read_ahead([], lambda i: i)) == []


def test_the_next_item_is_taken_while_the_caller_works_on_this_one() -> None:
    second_taken = threading.Event()

    def pages() -> Iterator[int]:
        yield 1
        second_taken.set()
        yield 2

    seen = []
    for page in read_ahead(pages(), lambda p: p):
        if page == 1:
            # The caller is still on page 1: page 2 is read meanwhile, not after.
            assert second_taken.wait(timeout=5)
        seen.append(page)
    assert seen == [1, 2]


def test_an_error_reaches_the_caller_at_that_item() -> None:
    def prepare(page: int) -> int:
        if page == 2:
            raise ValueError("page 2 could not be read")
        return page

    pages = read_ahead([1, 2, 3], prepare)
    assert next(pages) == 1
    with pytest.raises(ValueError, match="page 2"):
        next(pages)


def test_a_caller_that_stops_early_takes_at_most_one_item_more() -> None:
    taken = []

    def pages() -> Iterator[int]:
        for i in range(10):
            taken.append(i)
            yield i

    for page in read_ahead(pages(), lambda p: p):
        if page == 1:
            break
    assert taken in ([0, 1], [0, 1, 2])


def test_every_documented_label_is_keyed_by_its_repository_first() -> None:
    """A repository's first sync finds its nodes by the key prefix (REPO_STATES): that
    holds only while every indexed label's key starts with the repository, in every
    ontology version a graph may have been written under."""
    from strata.ontology.loader import load_ontology, ontology_files
    from strata.ontology.model import key_prefix
    from strata.search.docs import INDEXED_LABELS
    from strata.settings import load_settings

    directory = load_settings().ontology_dir
    for version in ontology_files(directory):
        ontology = load_ontology(directory, version)
        for label in INDEXED_LABELS:
            node = ontology.node(label)
            assert node.key[0] == "repo", (version, label)
            identity = {name: f"x|{name}%" for name in node.key}
            assert node.make_key(identity).startswith(key_prefix(identity["repo"]))
    # A repository is never a prefix of another's keys: "a" does not find "ab|...".
    assert not "ab|main|f.py".startswith(key_prefix("a"))
    assert key_prefix("a|b") == "a%7Cb|"
