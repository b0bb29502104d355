"""Benchmark of knowledge cards: cards per second without a model, and the gate's catch rate.

Writes a synthetic repository of ``--packages`` Python packages (each with its
own pyproject.toml; every package imports and calls the next one, and has a
test file), indexes it into the STRATA_* Neo4j (a fresh repository name each
run), then measures building every card (one snapshot read + compile + one
store write), checking every card with the exact gate, and the gate's catch
rate on corrupted cards: each card gets every corruption kind below that
applies to it (an invented dependency, a wrong count, a wrong caller, a
vanished test, an invented file or API symbol, a prose "depends on" and a
backticked name), and a corruption counts as caught only when the gate names
the corrupted claim.

With the local model installed (llama-cpp-python and the bundled GGUF), it then
drafts model prose for ``--model-cards`` cards through the pipeline (draft, gate,
judge, at most two redrafts) and prints seconds and tokens per card and where
each card ended (published, needs_review, prose_failed); ``--model-cards 0``
skips that.

    .venv/bin/python bench/cards.py [--packages 12] [--files 8] [--repeat 5] [--model-cards 2]

Targets (2 cores): >= 20 cards/s built and stored; gate catch rate 100% with
0 false failures on the true cards.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from strata.cards import CardService, check_card, load_snapshot
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


def corruptions(card: Card) -> list[tuple[str, str, tuple[str, str]]]:
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
            found.append(
                (
                    f"- `{claim.object}`: {claim.detail}",
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
        repo = write_repo(Path(tmp) / "repo", args.packages, args.files)
        indexer = CodeIndexer(
            FactStore(gateway, ontology),
            Reads(gateway, ontology),
            cache=ExtractCache(Path(tmp) / "cache"),
        )
        sha = Git(repo.path).resolve("HEAD")
        started = time.perf_counter()
        indexer.index(Git(repo.path), name, "main", sha)
        print(
            f"index: {args.packages} packages x {args.files + 1} files in "
            f"{time.perf_counter() - started:.2f}s"
        )
        service = CardService(gateway, ontology)
        build_s, gate_s, load_s = [], [], []
        cards: list[Card] = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            cards = service.build(name)
            build_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            snap = load_snapshot(gateway, name)
            load_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            verdicts = [check_card(c, snap) for c in cards]
            gate_s.append(time.perf_counter() - t0)
        false_failures = sum(not v.ok for v in verdicts)
        build = statistics.median(build_s)
        print(
            f"build (read + compile + store) of {len(cards)} cards: median {build * 1000:.0f} ms"
            f" = {len(cards) / build:.1f} cards/s"
        )
        print(
            f"snapshot read: median {statistics.median(load_s) * 1000:.0f} ms; gate of every"
            f" card: median {statistics.median(gate_s) * 1000:.1f} ms"
            f" ({sum(len(c.claims) for c in cards)} claims)"
        )
        print(f"true cards failed by the gate: {false_failures} of {len(cards)}")
        tried = caught = 0
        for card in cards:
            for before, after, (kind, obj) in corruptions(card):
                tried += 1
                result = check_card(card.markdown.replace(before, after, 1), snap)
                caught += (kind, obj) in [(c.kind, c.object) for c, _ in result.unsupported]
        print(f"gate catch rate: {caught}/{tried} corrupted cards = {caught / max(tried, 1):.1%}")
        if args.model_cards:
            with_model(
                service, settings, name, sorted(c.package for c in cards)[: args.model_cards]
            )


def with_model(service: CardService, settings: Settings, repo: str, packages: list[str]) -> None:
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
    result = pipeline.run(repo, packages=set(packages))
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
