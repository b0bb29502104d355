"""How right is the call graph? Precision and recall of Strata's resolved calls.

Two instruments, both on the pure pipeline (parse, module index, resolver; no
Neo4j), taking the edges from the public API only:

``micro``  small programs with hand-written ground truth under
           ``tests/fixtures/calls/<language>/<category>/<case>/`` (one or a few
           source files and an ``expected.yaml``; ``--language``, default python);
           prints precision/recall/F1 per category and overall, and precision by
           resolution kind.
``real``   well-known projects (sdists pinned by sha256) against Jedi as the oracle
           (see ``bench/calls_real.py``).

    .venv/bin/python bench/calls.py micro [--language go] [--verbose] [--write-baseline]
    .venv/bin/python bench/calls.py real [--sites 500] [--seed 12]

An edge is (caller, callee, line): caller and callee are ``path:qualname``
(``path:<module>`` for a call at file level), line is the call's first line.
``expected.yaml`` lists ``edges`` (required: they count for recall) and, where
the truth is a matter of convention, ``acceptable`` edges (not required, not
counted as wrong). ``--write-baseline`` records the edges the resolver gets
right today per case, the floor ``tests/unit/calls`` holds it to.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

# The public pure API of the code layer. If these names move, change this import only.
from strata.code.languages import adapter_for_path, parse_file
from strata.code.modules import ModuleIndex, detect_packages, is_manifest
from strata.code.resolver import Resolver

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = ROOT / "tests" / "fixtures" / "calls"
CASES = LANGUAGES / "python"
BASELINE = CASES / "baseline.json"
MODULE = "<module>"

Edge = tuple[str, str, int]  # (caller path:qualname, callee path:qualname, line)


def strata_edges(files: dict[str, bytes]) -> dict[Edge, str]:
    """Every resolved call of the files as (caller, callee, line) -> resolution kind.

    The files are one repository snapshot (repository-relative path -> source).
    """
    extracts = {
        path: parse_file(path, source)
        for path, source in files.items()
        if adapter_for_path(path) is not None
    }
    manifests = {path: source for path, source in files.items() if is_manifest(path)}
    resolver = Resolver(ModuleIndex(extracts, detect_packages(sorted(files), manifests)))
    found: dict[Edge, str] = {}
    for path in sorted(extracts):
        for call in resolver.resolve_file(path).calls:
            caller = f"{path}:{call.src_qualname or MODULE}"
            callee = f"{call.dst_path}:{call.dst_qualname}"
            for line in call.lines:
                found[(caller, callee, line)] = call.resolution
    return found


@dataclass(frozen=True, slots=True)
class Case:
    """One program and its ground truth."""

    name: str  # category/case
    files: dict[str, bytes]
    expected: frozenset[Edge]
    acceptable: frozenset[Edge]
    description: str

    @property
    def category(self) -> str:
        return self.name.split("/", 1)[0]


def _edges(rows: Iterable[dict[str, object]] | None) -> frozenset[Edge]:
    return frozenset((str(r["caller"]), str(r["callee"]), int(str(r["line"]))) for r in rows or ())


def load_cases(root: Path = CASES) -> list[Case]:
    """Every case under ``root`` (a directory holding an ``expected.yaml``)."""
    cases = []
    for spec in sorted(root.glob("*/*/expected.yaml")):
        folder = spec.parent
        data = yaml.safe_load(spec.read_text(encoding="utf-8"))
        files = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and (adapter_for_path(p.name) is not None or is_manifest(p.name))
        }
        cases.append(
            Case(
                name=folder.relative_to(root).as_posix(),
                files=files,
                expected=_edges(data.get("edges")),
                acceptable=_edges(data.get("acceptable")),
                description=str(data.get("description", "")),
            )
        )
    return cases


@dataclass(slots=True)
class Score:
    """Counts behind precision and recall."""

    predicted: int = 0
    correct: int = 0  # predicted edges that are expected or acceptable
    expected: int = 0
    found: int = 0  # expected edges predicted

    def add(self, other: Score) -> None:
        self.predicted += other.predicted
        self.correct += other.correct
        self.expected += other.expected
        self.found += other.found

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass(slots=True)
class CaseResult:
    case: Case
    predicted: dict[Edge, str]
    score: Score = field(default_factory=Score)

    @property
    def right(self) -> set[Edge]:
        return {e for e in self.predicted if e in self.case.expected or e in self.case.acceptable}

    @property
    def wrong(self) -> set[Edge]:
        return set(self.predicted) - self.right

    @property
    def missed(self) -> set[Edge]:
        return set(self.case.expected) - set(self.predicted)


def run_case(case: Case) -> CaseResult:
    """Index one case through the pipeline and score it."""
    predicted = strata_edges(case.files)
    result = CaseResult(case, predicted)
    result.score = Score(
        predicted=len(predicted),
        correct=len(result.right),
        expected=len(case.expected),
        found=len(case.expected & set(predicted)),
    )
    return result


def micro(
    verbose: bool = False, write_baseline: bool = False, language: str = "python"
) -> list[CaseResult]:
    """Run every case of one language and print the tables."""
    results = [run_case(c) for c in load_cases(LANGUAGES / language)]
    by_category: dict[str, Score] = defaultdict(Score)
    overall = Score()
    kinds: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # kind -> [correct, predicted]
    for result in results:
        by_category[result.case.category].add(result.score)
        overall.add(result.score)
        right = result.right
        for edge, kind in result.predicted.items():
            kinds[kind][1] += 1
            kinds[kind][0] += edge in right
    cases_per = defaultdict(int)
    for result in results:
        cases_per[result.case.category] += 1
    print(f"micro-benchmark ({language}): {len(results)} cases, {overall.expected} expected edges")
    print(f"{'category':<14} {'cases':>5} {'exp':>4} {'pred':>4} {'P':>6} {'R':>6} {'F1':>6}")
    for category in sorted(by_category):
        s = by_category[category]
        print(
            f"{category:<14} {cases_per[category]:>5} {s.expected:>4} {s.predicted:>4} "
            f"{s.precision:>6.3f} {s.recall:>6.3f} {s.f1:>6.3f}"
        )
    print(
        f"{'overall':<14} {len(results):>5} {overall.expected:>4} {overall.predicted:>4} "
        f"{overall.precision:>6.3f} {overall.recall:>6.3f} {overall.f1:>6.3f}"
    )
    print("precision by resolution kind:")
    for kind in sorted(kinds):
        ok, total = kinds[kind]
        print(f"  {kind:<10} {ok:>4}/{total:<4} {ok / total:.3f}")
    if verbose:
        for result in results:
            for edge in sorted(result.wrong):
                print(f"  FP {result.case.name}: {_show(edge)} [{result.predicted[edge]}]")
            for edge in sorted(result.missed):
                print(f"  FN {result.case.name}: {_show(edge)}")
    if write_baseline and language == "python":
        BASELINE.write_text(json.dumps(baseline_of(results), indent=1, sort_keys=True) + "\n")
        print(f"wrote {BASELINE.relative_to(ROOT)}")
    return results


def baseline_of(results: list[CaseResult]) -> dict[str, dict[str, object]]:
    """Per case: the edges it gets right and its precision (the regression floor)."""
    return {
        r.case.name: {
            "right": sorted([list(e) for e in r.right]),
            "precision": r.score.precision,
        }
        for r in results
    }


def _show(edge: Edge) -> str:
    return f"{edge[0]} -> {edge[1]} @{edge[2]}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="what", required=True)
    m = sub.add_parser("micro", help="hand-written micro-benchmark")
    m.add_argument("--verbose", action="store_true", help="list every wrong and missed edge")
    m.add_argument("--write-baseline", action="store_true", help="record today's right edges")
    m.add_argument("--language", default="python", help="a folder of tests/fixtures/calls")
    r = sub.add_parser("real", help="real projects against Jedi")
    r.add_argument("--sites", type=int, default=500, help="call sites sampled per project")
    r.add_argument("--seed", type=int, default=12)
    r.add_argument("--projects", nargs="*", help="a subset of the pinned projects")
    args = parser.parse_args(argv)
    if args.what == "micro":
        micro(verbose=args.verbose, write_baseline=args.write_baseline, language=args.language)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from calls_real import run_real

        run_real(sites=args.sites, seed=args.seed, only=args.projects)


if __name__ == "__main__":
    main()
