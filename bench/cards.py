"""Benchmark of knowledge cards: cards per second without a model, and the gate's catch rate.

Two repositories (a fresh repository name in the STRATA_* Neo4j each run):

- ``synthetic`` (default): ``--packages`` Python packages (each with its own
  pyproject.toml; every package imports and calls the next one, and has a
  test file);
- ``django``: the ``django/`` tree of the pinned Django 5.2.8 sdist (880 files,
  ~158k lines: one pyproject.toml, so one detected package) with a
  ``.strata/packages.yml`` path map that makes each ``django/<x>`` and
  ``django/contrib/<x>`` folder a package.

It measures building every card (one snapshot read + compile + one store
write), checking every card with the exact gate, and the gate's catch rate on
corrupted cards: each card gets every corruption kind below that applies to
it (an invented dependency, a dependency on a real package it does not use, a
wrong count, a wrong caller, a real package named as a caller that never calls
it, a vanished test, another package's real test, an invented file or API
symbol, a prose "depends on" and a backticked name), and a corruption counts
as caught only when the gate names the corrupted claim. ``django`` then
changes one file and times the incremental run (only the touched package's
detail is read).

With the local model installed (llama-cpp-python and the bundled GGUF), it then
drafts model prose for ``--model-cards`` cards through the pipeline (draft, gate,
judge, at most two redrafts) and prints seconds and tokens per card and where
each card ended (published, needs_review, prose_failed); ``--model-cards 0``
skips that.

    .venv/bin/python bench/cards.py [--packages 12] [--files 8] [--repeat 5] [--model-cards 2]
    .venv/bin/python bench/cards.py --repo django [--repeat 3] [--model-cards 2]

Targets (2 cores): >= 20 cards/s built and stored; gate catch rate 100% with
0 false failures on the true cards.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories

from strata.cards import CardService, Snapshot, check_card, load_snapshot
from strata.cards.boundaries import read_path_map
from strata.cards.model import Card
from strata.cards.pipeline import CardPipeline
from strata.cards.prose import ProseWriter
from strata.code.cache import ExtractCache
from strata.code.indexer import CodeIndexer
from strata.devstack.neo4j import Neo4jServer
from strata.git import Git
from strata.graph import migrations
from strata.graph.gateway import Gateway
from strata.graph.reads import Reads
from strata.graph.store import FactStore
from strata.ontology import load_ontology
from strata.settings import Settings, load_settings
from tests.gitrepo import GitRepo

DJANGO_SHA256 = "23254866a5bb9a2cfa6004e8b809ec6246eba4b58a7589bc2772f1bcc8456c7f"
T0 = datetime(2025, 11, 5, tzinfo=UTC)
CHANGED = "django/utils/text.py"


def write_repo(root: Path, packages: int, files: int) -> GitRepo:
    repo = GitRepo(root)
    for p in range(packages):
        name = f"pkg{p:02d}"
        repo.write(f"{name}/pyproject.toml", f'[project]\nname = "{name}"\n')
        repo.write(f"{name}/{name}/__init__.py", "")
        nxt = f"pkg{(p + 1) % packages:02d}"
        for f in range(files):
            body = [f"from {nxt}.mod0 import f0_0\n"] if f == 0 and p + 1 < packages else []
            for s in range(6):
                call = "f0_0()" if body and s == 0 else "0"
                body.append(
                    f'\n\ndef f{f}_{s}(x=1):\n    """Function {s} of {name}."""\n'
                    f"    return x + {call}\n"
                )
            repo.write(f"{name}/{name}/mod{f}.py", "".join(body))
        repo.write(
            f"{name}/tests/test_{name}.py",
            f"from {name}.mod0 import f0_1\n\n\ndef test_{name}():\n    assert f0_1(1)\n",
        )
    repo.commit("synthetic", datetime(2025, 5, 1, tzinfo=UTC))
    return repo


def django_repo(root: Path) -> Path:
    """The django/ tree of the pinned sdist, its pyproject.toml and a path map, committed."""
    archive = sdists.fetch("django", "5.2.8", DJANGO_SHA256)
    unpack = root / "unpack"
    with tarfile.open(archive) as tar:
        tar.extractall(unpack, filter="data")
    source = unpack / "django-5.2.8"
    repo = root / "django"
    repo.mkdir()
    shutil.copytree(source / "django", repo / "django")
    shutil.copy(source / "pyproject.toml", repo / "pyproject.toml")
    shutil.rmtree(unpack)
    folders = [
        p.relative_to(repo).as_posix()
        for parent in (repo / "django", repo / "django" / "contrib")
        for p in sorted(parent.iterdir())
        if p.is_dir() and p.name != "contrib" and any(p.rglob("*.py"))
    ]
    lines = ["packages:"]
    lines += [f"  - path: {f}\n    name: {f.replace('/', '.')}" for f in folders]
    (repo / ".strata").mkdir()
    (repo / ".strata" / "packages.yml").write_text("\n".join(lines) + "\n")
    sdists.commit_all(repo, "django 5.2.8", T0)
    return repo


def corruptions(card: Card, snap: Snapshot) -> list[tuple[str, str, tuple[str, str]]]:
    """(before, after, the claim the gate must name) for every kind that applies."""
    text = card.markdown
    found: list[tuple[str, str, tuple[str, str]]] = [
        ("## Files\n\n", "## Files\n\n- `nowhere/ghost.py`\n", ("file", "nowhere/ghost.py")),
        (
            "## Public API\n\n",
            "## Public API\n\n- `ghost.py:phantom` (function)\n",
            ("api", "ghost.py:phantom"),
        ),
        (
            "## Depends on\n\n",
            "## Depends on\n\n- `pkg99`: imports 1, calls 1\n",
            ("depends_on", "pkg99"),
        ),
        (
            f"# {card.name}\n",
            f"# {card.name}\n\nIt depends on leftpad.\n",
            ("depends_on", "leftpad"),
        ),
        (
            f"# {card.name}\n",
            f"# {card.name}\n\nSee `Orchestrator`.\n",
            ("mentions", "Orchestrator"),
        ),
    ]
    # real packages of the repository that this one neither uses nor is used by
    edges = {*snap.imports, *snap.calls}
    unused = [p for p in sorted(snap.packages) if (card.package, p) not in edges]
    idle = [p for p in sorted(snap.packages) if (p, card.package) not in edges]
    for other in [p for p in unused if p != card.package][:1]:
        name = snap.packages[other].name
        line = f"## Depends on\n\n- `{name}`: imports 1, calls 0\n"
        found.append(("## Depends on\n\n", line, ("depends_on", name)))
    for other in [p for p in idle if p != card.package][:1]:
        name = snap.packages[other].name
        line = f"## Used by\n\n- `{name}`: imports 0, calls 2\n"
        found.append(("## Used by\n\n", line, ("called_by", name)))
    elsewhere = next(
        (
            s.ref
            for p in sorted(snap.packages)
            if p != card.package
            for s in snap.symbols_of(p)
            if s.test
        ),
        None,
    )
    if elsewhere is not None:
        found.append(("## Tests\n\n", f"## Tests\n\n- `{elsewhere}`\n", ("test", elsewhere)))
    mine = snap.symbols_of(card.package)
    plain = next((s.ref for s in mine if not s.test), None)
    if plain is not None:  # a real symbol of the package that is no test
        found.append(("## Tests\n\n", f"## Tests\n\n- `{plain}`\n", ("test", plain)))
    if mine:  # a test that is not (or no longer) there, next to the package's own files
        gone = f"{mine[0].path}:test_vanished"
        found.append(("## Tests\n\n", f"## Tests\n\n- `{gone}`\n", ("test", gone)))
    for claim in card.claims:
        if claim.kind == "depends_on":
            wrong = claim.detail.replace("imports ", "imports 9")
            found.append(
                (
                    f"- `{claim.object}`: {claim.detail}",
                    f"- `{claim.object}`: {wrong}",
                    ("depends_on", claim.object),
                )
            )
        if claim.kind == "called_by":
            # within "Used by": the same line may stand under "Depends on" too
            used_by = text[text.index("## Used by") :]
            line = f"- `{claim.object}`: {claim.detail}"
            found.append(
                (
                    f"## Used by{used_by[len('## Used by') : used_by.index(line)]}{line}",
                    f"## Used by{used_by[len('## Used by') : used_by.index(line)]}"
                    f"- `{card.name}`: {claim.detail}",
                    ("called_by", card.name),
                )
            )
        if claim.kind == "test":
            gone = claim.object + "_gone"
            found.append((f"- `{claim.object}`", f"- `{gone}`", ("test", gone)))
    return [c for c in found if c[0] in text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", choices=["synthetic", "django"], default="synthetic")
    parser.add_argument("--packages", type=int, default=12)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--model-cards", type=int, default=2)
    args = parser.parse_args()
    settings = load_settings()
    Neo4jServer.from_settings(settings).start(timeout=180)
    name = f"bench-cards-{uuid.uuid4().hex[:6]}"
    with tempfile.TemporaryDirectory() as tmp, Gateway.connect(settings) as gateway:
        migrations.migrate(gateway, settings.migrations_dir)
        ontology = load_ontology(settings.ontology_dir)
        if args.repo == "django":
            path = django_repo(Path(tmp))
        else:
            path = write_repo(Path(tmp) / "repo", args.packages, args.files).path
        files = [f for f in sdists.git(path, "ls-files").splitlines() if f.endswith(".py")]
        lines = sum((path / f).read_bytes().count(b"\n") for f in files)
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(Path(tmp) / "cache"),
        )
        git = Git(path)
        sha = git.resolve("HEAD")
        started = time.perf_counter()
        indexer.index(git, name, "main", sha)
        print(
            f"index ({args.repo}): {len(files)} Python files, {lines:,} lines (and the rest of "
            f"the tree) in "
            f"{time.perf_counter() - started:.1f}s"
        )
        service = CardService(gateway, ontology)
        cards = measure(service, gateway, name, git, repeat=args.repeat)
        if args.repo == "django":
            incremental(service, indexer, git, name, path)
        if args.model_cards:
            smallest = sorted(cards, key=lambda c: (len(c.claims), c.package))
            with_model(
                service, settings, name, [c.package for c in smallest[: args.model_cards]], git
            )


def measure(
    service: CardService, gateway: Gateway, name: str, git: Git, *, repeat: int
) -> list[Card]:
    """Build, gate and corrupt every card; print what it measured."""
    boundaries = read_path_map(git, git.resolve("HEAD"))
    build_s, gate_s, load_s = [], [], []
    cards: list[Card] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        cards = service.build(name, git=git)
        build_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        snap = load_snapshot(gateway, name, boundaries=boundaries)
        load_s.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        verdicts = [check_card(c, snap) for c in cards]
        gate_s.append(time.perf_counter() - t0)
    false_failures = [v for v in verdicts if not v.ok]
    build = statistics.median(build_s)
    print(
        f"build (read + compile + store) of {len(cards)} cards: median {build * 1000:.0f} ms"
        f" = {len(cards) / build:.1f} cards/s ({repeat} runs)"
    )
    print(
        f"snapshot read: median {statistics.median(load_s) * 1000:.0f} ms; gate of every"
        f" card: median {statistics.median(gate_s) * 1000:.1f} ms"
        f" ({sum(len(c.claims) for c in cards)} claims)"
    )
    passed = len(cards) - len(false_failures)
    print(
        f"true cards passed by the gate: {passed} of {len(cards)} = "
        f"{passed / max(len(cards), 1):.1%}"
    )
    for verdict in false_failures[:5]:
        print(f"  false failure {verdict.package}: {verdict.unsupported[:3]}")
    tried = caught = 0
    by_kind: dict[str, list[int]] = {}
    for card in cards:
        for before, after, (kind, obj) in corruptions(card, snap):
            tried += 1
            result = check_card(card.markdown.replace(before, after, 1), snap)
            hit = (kind, obj) in [(c.kind, c.object) for c, _ in result.unsupported]
            caught += hit
            by_kind.setdefault(kind, [0, 0])[0] += hit
            by_kind[kind][1] += 1
    kinds = ", ".join(f"{k} {c}/{n}" for k, (c, n) in sorted(by_kind.items()))
    print(f"gate catch rate: {caught}/{tried} corrupted cards = {caught / max(tried, 1):.1%}")
    print(f"  by kind: {kinds}")
    return cards


def incremental(
    service: CardService, indexer: CodeIndexer, git: Git, name: str, path: Path
) -> None:
    """One file of one package changes: what the next card run rebuilds, reads and spends."""
    with (path / CHANGED).open("a") as handle:
        handle.write("\n\ndef bench_slug(value):\n    return slugify(capfirst(value))\n")
    sdists.git(path, "commit", "-qam", "one change", when=T0 + timedelta(hours=1))
    sha = git.resolve("HEAD")
    indexer.index(git, name, "main", sha)
    started = time.perf_counter()
    result = CardPipeline(service).run(name, git=git)
    seconds = time.perf_counter() - started
    steps = result.summary()["steps"]
    detail = steps.get("detail", {}).get("seconds", "?")
    print(
        f"one-file change ({CHANGED}): run in {seconds:.2f}s, rebuilt {result.summary()['rebuilt']}"
        f", {result.fresh} fresh; detail read {detail}s, snapshot "
        f"{steps.get('snapshot', {}).get('seconds', '?')}s"
    )


def with_model(
    service: CardService, settings: Settings, repo: str, packages: list[str], git: Git
) -> None:
    """Prose by the local model for a few cards: seconds and tokens per card."""
    try:
        import llama_cpp  # noqa: F401 - only to know whether the local model can run

        from strata.knowledge.llm import bundled_model_path

        bundled_model_path()
    except Exception as exc:  # not installed: say so instead of measuring nothing
        print(f"model: skipped, the local model is not available ({type(exc).__name__}: {exc})")
        return
    local = settings.model_copy(update={"llm_provider": "local", "cards_prose": True})
    pipeline = CardPipeline(service, prose=ProseWriter.from_settings(local))
    started = time.perf_counter()
    result = pipeline.run(repo, packages=set(packages), git=git)
    seconds = time.perf_counter() - started
    summary = result.summary()
    n = max(len(result.rebuilt), 1)
    statuses = ", ".join(f"{c.name}: {c.status}" for c in result.rebuilt)
    drafts = summary["steps"].get("draft", {}).get("count", 0)
    print(
        f"model (local, {local.llm_threads} thread(s)): {len(result.rebuilt)} cards in "
        f"{seconds:.1f}s = {seconds / n:.1f} s/card, {summary['tokens'] / n:.0f} tokens/card, "
        f"{drafts} drafts; {statuses}"
    )


if __name__ == "__main__":
    main()
