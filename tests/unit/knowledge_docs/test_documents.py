"""Reading documents, partitions, globs and the ontology's extraction types (no database)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from graphiti_core.utils.ontology_utils.entity_types_utils import validate_entity_types
from hypothesis import given
from hypothesis import strategies as st

from strata.errors import ValidationError
from strata.jobs import REPO_NAME_PATTERN
from strata.knowledge.document_files import glob_regex, matches, read_document
from strata.knowledge.documents import extraction_types
from strata.knowledge.facts import group_id, lucene_query, repo_of_group
from strata.ontology import load_ontology
from strata.settings import PROJECT_ROOT

FALLBACK = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def read(text: str, path: str = "docs/notes/x.md"):  # type: ignore[no-untyped-def]
    return read_document(path, text.encode(), fallback_time=lambda: FALLBACK)


class TestGroupId:
    """Repository names map to graphiti group ids one-to-one and back."""

    @given(st.from_regex(REPO_NAME_PATTERN, fullmatch=True))
    def test_round_trip_and_alphabet(self, repo: str) -> None:
        group = group_id(repo)
        assert re.fullmatch(r"[A-Za-z0-9_-]+", group)
        assert repo_of_group(group) == repo

    @given(
        st.from_regex(REPO_NAME_PATTERN, fullmatch=True),
        st.from_regex(REPO_NAME_PATTERN, fullmatch=True),
    )
    def test_injective(self, a: str, b: str) -> None:
        assert (group_id(a) == group_id(b)) == (a == b)

    def test_examples(self) -> None:
        assert group_id("strata") == "strata"
        assert group_id("my_lib.py") == "my__lib_dpy"
        assert group_id("a.b") != group_id("a_b")

    def test_invalid_name(self) -> None:
        with pytest.raises(ValidationError):
            group_id("../etc")


class TestGlobs:
    """`**/` spans folders (or none), `*` stays inside one name."""

    @pytest.mark.parametrize(
        ("path", "expected"),
        [
            ("docs/notes/a.md", True),
            ("docs/notes/2025/q1/a.md", True),
            ("docs/notesX/a.md", False),
            ("docs/notes/a.txt", False),
            ("src/docs/notes/a.md", False),
        ],
    )
    def test_notes(self, path: str, expected: bool) -> None:
        assert matches(path, ["docs/notes/**/*.md"]) is expected

    def test_star_does_not_cross_folders(self) -> None:
        assert glob_regex("notes/*.md").match("notes/a.md")
        assert not glob_regex("notes/*.md").match("notes/x/a.md")


class TestReadDocument:
    """A document's date comes from itself (front matter, then a Date: line), else git."""

    def test_front_matter(self) -> None:
        doc = read("---\ntitle: 'Queue choice'\ndate: 2025-01-10\n---\n# Other\ntext\n")
        assert doc.reference_time == datetime(2025, 1, 10, tzinfo=UTC)
        assert doc.dated_by == "front_matter"
        assert doc.title == "Queue choice"

    @pytest.mark.parametrize(
        "line",
        ["Date: 2025-03-01", "**Date:** 2025-03-01", "- date: 2025-03-01", "*Date*: 2025-03-01"],
    )
    def test_date_line(self, line: str) -> None:
        doc = read(f"# Meeting notes\n\n{line}\n\nWe talked.\n")
        assert doc.reference_time == datetime(2025, 3, 1, tzinfo=UTC)
        assert doc.dated_by == "date_line"
        assert doc.title == "Meeting notes"

    def test_time_and_offset_become_utc(self) -> None:
        doc = read("Date: 2025-03-01T10:00:00+02:00\n")
        assert doc.reference_time == datetime(2025, 3, 1, 8, 0, tzinfo=UTC)

    def test_fallback_to_git(self) -> None:
        doc = read("# Untitled thoughts\n\nNo date here.\n", path="notes/thoughts.md")
        assert doc.reference_time == FALLBACK
        assert doc.dated_by == "commit"

    def test_date_outside_the_header_does_not_count(self) -> None:
        body = "# Log\n" + "line\n" * 40 + "Date: 2020-01-01\n"
        assert read(body).dated_by == "commit"

    def test_malformed_date_is_an_error(self) -> None:
        with pytest.raises(ValidationError, match=r"docs/notes/x.md: date 'next tuesday'"):
            read("---\ndate: next tuesday\n---\ntext\n")

    def test_title_falls_back_to_the_file_name(self) -> None:
        assert read("plain text\n", path="notes/standup-2025-01-02.md").title == (
            "standup-2025-01-02"
        )

    def test_not_utf8(self) -> None:
        with pytest.raises(ValidationError, match="not UTF-8"):
            read_document("notes/x.md", b"\xff\xfe\x00bad", fallback_time=lambda: FALLBACK)

    def test_content_hash_follows_the_bytes(self) -> None:
        assert read("a\n").content_hash == read("a\n").content_hash
        assert read("a\n").content_hash != read("b\n").content_hash


@pytest.fixture(scope="module")
def types():  # type: ignore[no-untyped-def]
    return extraction_types(load_ontology(PROJECT_ROOT / "ontology"))


class TestExtractionTypes:
    """graphiti's entity and edge types are derived from the ontology's knowledge layer."""

    def test_entity_types(self, types) -> None:  # type: ignore[no-untyped-def]
        assert set(types.entity_types) == {"RequirementRef", "DecisionRef", "DocumentRef"}
        assert set(types.entity_types["RequirementRef"].model_fields) == {"req_id"}
        assert set(types.entity_types["DecisionRef"].model_fields) == {"decision_id"}
        assert "REQ-" in (types.entity_types["RequirementRef"].__doc__ or "")
        assert validate_entity_types(types.entity_types)

    def test_names_never_collide_with_strata_labels(self, types) -> None:  # type: ignore[no-untyped-def]
        labels = set(load_ontology(PROJECT_ROOT / "ontology").nodes)
        assert not set(types.entity_types) & labels

    def test_edge_types(self, types) -> None:  # type: ignore[no-untyped-def]
        assert "SUPERSEDES" in types.edge_types
        assert types.edge_type_map[("DecisionRef", "DecisionRef")] == ["SUPERSEDES"]


class TestLucene:
    """Search text becomes an escaped OR query, narrowed to the caller's partitions."""

    def test_escaping_and_groups(self) -> None:
        query = lucene_query("who uses (Redis)? a:b", ["strata", "my__lib"])
        assert query == '(who OR uses OR Redis OR a OR b) AND group_id:("strata" OR "my__lib")'

    def test_every_group(self) -> None:
        assert lucene_query("broker", None) == "(broker)"

    def test_no_words(self) -> None:
        with pytest.raises(ValidationError):
            lucene_query("?!", None)


class TestMigrationFile:
    """migrations/0005 creates every index graphiti builds itself, except the constraint ones."""

    def test_covers_graphiti(self) -> None:
        from graphiti_core.driver.driver import GraphProvider
        from graphiti_core.graph_queries import get_fulltext_indices, get_range_indices

        text = (Path(PROJECT_ROOT) / "migrations" / "0005_graphiti.cypher").read_text()
        ours = set(re.findall(r"INDEX (\w+) IF NOT EXISTS", text))
        theirs = {
            re.search(r"INDEX (\w+) IF NOT EXISTS", s).group(1)  # type: ignore[union-attr]
            for s in get_range_indices(GraphProvider.NEO4J)
            + get_fulltext_indices(GraphProvider.NEO4J)
        }
        assert theirs - ours == {"entity_uuid", "episode_uuid", "community_uuid", "saga_uuid"}
        assert ours <= theirs
        assert "FOR (n:Saga) REQUIRE n.uuid IS UNIQUE" in text
