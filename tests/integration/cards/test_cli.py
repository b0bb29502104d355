"""`strata cards build / export / check` in their own process, as a user runs them."""

from __future__ import annotations

from pathlib import Path

from strata.cards import CardService
from strata.code.indexer import CodeIndexer
from strata.git import Git
from strata.settings import Settings
from tests.integration.cards.conftest import ALPHA_CORE, C2, Indexed
from tests.integration.cards.model import model_settings, scripted_model
from tests.integration.code.cli import cli


def test_build_export_check(
    indexed: Indexed,
    indexer: CodeIndexer,
    service: CardService,
    settings: Settings,
    tmp_path: Path,
) -> None:
    built = cli(settings, "cards", "build", "--repo", indexed.repo, "--git", str(indexed.git.path))
    assert built.returncode == 0, built.stderr
    assert f"2 cards of {indexed.repo}/main at {indexed.shas[0][:12]}" in built.stdout
    out = tmp_path / "bundle"
    exported = cli(settings, "cards", "export", str(out), "--repo", indexed.repo)
    assert exported.returncode == 0, exported.stderr
    assert sorted(p.name for p in out.iterdir()) == ["alpha.md", "beta.md", "index.md"]
    assert "- @math-team" in (out / "alpha.md").read_text()
    fresh = cli(settings, "cards", "check", "--repo", indexed.repo)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    # one package changes: its card goes stale and the check fails, naming the file
    indexed.git.write("alpha/alpha/core.py", ALPHA_CORE.replace("x * 2", "x + x"))
    sha = indexed.git.commit("alpha body", C2)
    indexer.index(Git(indexed.git.path), indexed.repo, "main", sha)
    stale = cli(settings, "cards", "check", "--repo", indexed.repo)
    assert stale.returncode == 1
    lines = {line.split("│")[1].strip(): line for line in stale.stdout.splitlines() if "│" in line}
    assert "file:alpha/alpha/core.py" in lines["alpha"]
    assert lines["beta"].rstrip(" │").endswith("no")


def test_check_without_cards_is_a_clear_error(indexed: Indexed, settings: Settings) -> None:
    done = cli(settings, "cards", "check", "--repo", indexed.repo)
    assert done.returncode != 0
    assert "has no cards" in done.stderr + done.stdout


def test_refresh_with_prose_and_the_review_queue(indexed: Indexed) -> None:
    """`cards refresh --prose` on a real endpoint; `cards review` lists what it refused."""
    with scripted_model() as (server, script):
        script.drafts("It depends on `gamma`.")
        settings = model_settings(server.base_url)
        done = cli(settings, "cards", "refresh", "--repo", indexed.repo, "--prose")
        assert done.returncode == 0, done.stderr
        assert "2 rebuilt, 0 fresh" in done.stdout
        assert "needs review: alpha, beta" in done.stdout
        queued = cli(settings, "cards", "review", "--repo", indexed.repo, "--drafts")
    assert queued.returncode == 1
    assert "2 card(s)" in queued.stdout
    assert "'gamma'" in queued.stdout
    assert "It depends on `gamma`." in queued.stdout
    again = cli(settings, "cards", "refresh", "--repo", indexed.repo, "--no-prose")
    assert "0 rebuilt, 2 fresh" in again.stdout


def test_verify_a_committed_bundle(indexed: Indexed, settings: Settings, tmp_path: Path) -> None:
    """The CI job: an exported bundle passes; a hand-edited invented dependency fails it."""
    assert cli(settings, "cards", "build", "--repo", indexed.repo).returncode == 0
    out = tmp_path / "cards"
    assert cli(settings, "cards", "export", str(out), "--repo", indexed.repo).returncode == 0
    ok = cli(settings, "cards", "verify", str(out), "--repo", indexed.repo)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 of 2 cards pass the gate" in ok.stdout
    beta = out / "beta.md"
    beta.write_text(beta.read_text().replace("## Used by", "It depends on `gamma`.\n\n## Used by"))
    bad = cli(settings, "cards", "verify", str(out), "--repo", indexed.repo)
    assert bad.returncode == 1
    assert "1 of 2 cards pass the gate" in bad.stdout
    assert "beta.md: depends_on 'gamma': no such package" in bad.stderr
