"""KnowledgeSync over a real git repository and Neo4j: which files are read, what is kept."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from strata.git import Git
from strata.graph.gateway import Gateway
from strata.graph.store import FactStore
from strata.knowledge.sync import KnowledgeResult, KnowledgeSync
from strata.ontology import load_ontology
from strata.settings import Settings
from strata.temporal import AsOf
from strata.trace.reads import TraceReads
from tests.gitrepo import GitRepo

WHEN = datetime(2025, 4, 1, tzinfo=UTC)


def sync(
    tmp_path: Path, gateway: Gateway, settings: Settings, name: str, files: dict[str, str]
) -> KnowledgeResult:
    repo = GitRepo(tmp_path / name)
    for path, text in files.items():
        repo.write(path, text)
    sha = repo.commit("requirements", WHEN)
    store = FactStore(gateway, load_ontology(settings.ontology_dir))
    return KnowledgeSync(store, gateway).sync(Git(repo.path), name, sha)


def declared(gateway: Gateway, name: str) -> dict[str, str]:
    """Requirement id -> the file it is read from, as Strata believes now."""
    return {
        r.id: str(r.state["path"])
        for r in TraceReads(gateway).requirements(name, AsOf.at(), first=100)
    }


class TestRequirementFileForms:
    """Every documented form is read; malformed ids are reported; other YAML is skipped."""

    def test_every_form_is_read(
        self, tmp_path: Path, gateway: Gateway, settings: Settings, unique: str
    ) -> None:
        name = f"forms-{unique}"
        result = sync(
            tmp_path,
            gateway,
            settings,
            name,
            {
                # YAML list of {id, text}, block and flow style
                "docs/requirements/listed.yml": (
                    "- id: REQ-001\n  text: The API shall answer.\n"
                    "- id: REQ-002\n  text: The API shall log.\n"
                ),
                "docs/requirements/flow.yaml": (
                    "requirements:\n  - {id: REQ-003, text: The API shall retry.}\n"
                ),
                # a mapping with a quoted key
                "docs/requirements/quoted.yml": '"REQ-005": The API shall be quoted.\n',
                # a bold markdown atom
                "docs/bold.md": "- [ ] **REQ-004**: The API shall be bold.\n",
                # files whose only ids are malformed
                "docs/requirements/short.yml": "REQ-1: The API shall be short.\n",
                "docs/short.md": "REQ-12: The API shall be short.\n",
                # not requirement files: an Ansible requirements.yml, prose
                "requirements.yml": "- src: geerlingguy.java\n  version: 1.9.6\n",
                "docs/readme.md": "Nothing to declare here.\n",
            },
        )
        assert declared(gateway, name) == {
            "REQ-001": "docs/requirements/listed.yml",
            "REQ-002": "docs/requirements/listed.yml",
            "REQ-003": "docs/requirements/flow.yaml",
            "REQ-004": "docs/bold.md",
            "REQ-005": "docs/requirements/quoted.yml",
        }
        assert sorted((f.path, f.rule) for f in result.findings) == [
            ("docs/requirements/short.yml", "bad-id"),
            ("docs/short.md", "bad-id"),
        ]
        assert (result.requirements, result.files) == (5, 6)


class TestDuplicates:
    """A duplicate id keeps its first declaration and drops only the later atom."""

    def test_other_atoms_on_the_duplicate_line_are_kept(
        self, tmp_path: Path, gateway: Gateway, settings: Settings, unique: str
    ) -> None:
        name = f"dups-{unique}"
        result = sync(
            tmp_path,
            gateway,
            settings,
            name,
            {
                "docs/requirements/a.yml": "REQ-002: The API shall answer.\n",
                "docs/requirements/b.yml": (
                    "{REQ-002: The API shall also answer., REQ-003: The API shall retry.}\n"
                ),
            },
        )
        assert declared(gateway, name) == {
            "REQ-002": "docs/requirements/a.yml",
            "REQ-003": "docs/requirements/b.yml",
        }
        assert [(f.path, f.line, f.rule) for f in result.findings] == [
            ("docs/requirements/b.yml", 1, "duplicate-id")
        ]
        assert result.requirements == 2
