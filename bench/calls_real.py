"""Strata's call edges on real projects against Jedi as the oracle (``bench/calls.py real``).

For each pinned project the sdist is fetched with ``pip download --no-deps
--no-binary :all:`` into ``bench/.cache`` (sha256 checked), unpacked, and run
through the pure pipeline. Call sites (Strata's own extraction) are sampled
with a fixed seed; at each one Jedi answers ``goto`` on the called name (and
``infer`` when goto lands on a variable). Scoring is per site, edges being
(caller, callee, line):

- recall: of the edges Jedi finds inside the project, the share Strata has;
- precision: of Strata's edges at sites Jedi resolves at all (inside the project
  or outside it, e.g. a builtin), the share Jedi agrees with: a link from
  ``open(f)`` to a project method named ``open`` is wrong when Jedi says builtin;
- sites Jedi cannot resolve are left out and counted.

A seeded sample of Jedi's answers is written to ``bench/.cache/calls-oracle-sample.md``
for a person to check against the code.
"""

from __future__ import annotations

import ast
import random
import re
import sysconfig
import tarfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import jedi
import sdists  # bench/sdists.py: pinned sdists and throwaway git repositories
from calls import MODULE, ROOT

from strata.code.languages import parse_file
from strata.code.model import CallSite, FileExtract
from strata.code.modules import ModuleIndex
from strata.code.resolver import Resolver

CACHE = ROOT / "bench" / ".cache"
SAMPLE_FILE = CACHE / "calls-oracle-sample.md"
DISAGREEMENTS_FILE = CACHE / "calls-disagreements.md"
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
SAMPLE_SIZE = 30
SKIP_DIRS = frozenset({"docs", "examples", "artwork"})


@dataclass(frozen=True, slots=True)
class Project:
    name: str
    version: str
    sha256: str
    source: str  # the import root inside the sdist (Jedi's first sys.path entry)


PROJECTS = (
    Project(
        "click", "8.5.1", "9bbfada76703fd1d784b83eea012e3e8c6a001a876543ef104fa56aaaeb072b4", "src"
    ),
    Project(
        "jinja2", "3.1.6", "0137fb05990d35f1275a587e9aee6d56da821fc83491a0fb838183be43f66d6d", "src"
    ),
    Project(
        "werkzeug",
        "3.1.9",
        "55ca7c70a75689be937aa27f8ff4b018f06ff4838fc73045560bf0f5a1291060",
        "src",
    ),
)

Target = tuple[str, str]  # (path, qualname)


@dataclass(slots=True)
class Tally:
    sites: int = 0
    unresolved_by_jedi: int = 0
    outside_only: int = 0  # Jedi resolved outside the project only
    unmapped: int = 0  # Jedi's target is in the project but not a Strata symbol
    no_column: int = 0  # the site was not found in Python's own AST
    predicted: int = 0
    correct: int = 0
    oracle: int = 0
    found: int = 0
    unjudged_edges: int = 0  # Strata edges at sites Jedi could not resolve
    kinds: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def add(self, other: Tally) -> None:
        for name in (
            "sites",
            "unresolved_by_jedi",
            "outside_only",
            "unmapped",
            "no_column",
            "predicted",
            "correct",
            "oracle",
            "found",
            "unjudged_edges",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for kind, (ok, total) in other.kinds.items():
            self.kinds[kind][0] += ok
            self.kinds[kind][1] += total


def fetch(project: Project) -> Path:
    """The unpacked sdist (downloaded and checked once)."""
    archive = sdists.fetch(project.name, project.version, project.sha256, CACHE / "sdist")
    root = CACHE / "src" / f"{project.name}-{project.version}"
    if not root.exists():
        with tarfile.open(archive) as tar:
            tar.extractall(CACHE / "src", filter="data")
    return root


def _python_files(root: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/", 1)[0] in SKIP_DIRS:
            continue
        files[rel] = path.read_bytes()
    return files


def _name_columns(source: bytes) -> dict[tuple[int, str], tuple[int, int]]:
    """(call line, called name) -> (line, column) of the name, from Python's AST."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    found: dict[tuple[int, str], tuple[int, int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            found.setdefault((node.lineno, func.id), (func.lineno, func.col_offset))
        elif isinstance(func, ast.Attribute) and func.end_lineno and func.end_col_offset:
            column = func.end_col_offset - len(func.attr)
            found.setdefault((node.lineno, func.attr), (func.end_lineno, column))
    return found


class _Symbols:
    """Jedi's definitions mapped onto Strata's symbols (innermost span with that name)."""

    def __init__(self, root: Path, extracts: dict[str, FileExtract]) -> None:
        self.root = root.resolve()
        self.by_file = {p: e.symbols for p, e in extracts.items()}

    def target(self, module_path: Path | None, name: str, line: int | None) -> Target | str | None:
        """A Strata target, None when outside the project, "unmapped" when not a symbol."""
        if module_path is None or line is None:
            return None
        try:
            rel = Path(module_path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None
        best = None
        for symbol in self.by_file.get(rel, ()):
            if symbol.name == name and symbol.line_start <= line <= symbol.line_end:
                span = symbol.line_end - symbol.line_start
                if best is None or span < best[0]:
                    best = (span, symbol.qualname)
        return (rel, best[1]) if best else "unmapped"


def _oracle(
    script: jedi.Script, line: int, column: int, symbols: _Symbols
) -> tuple[set[Target], bool, bool, list[str]]:
    """Jedi's in-project targets, whether it resolved anything, anything unmapped, and
    a description of its answer."""
    names = [n for n in script.goto(line, column, follow_imports=True) if n.type != "module"]
    if any(n.type not in ("function", "class", "property") for n in names) or not names:
        inferred = [n for n in script.infer(line, column) if n.type in ("function", "class")]
        names = [n for n in names if n.type in ("function", "class")] + inferred
    targets: set[Target] = set()
    unmapped = False
    described = []
    for n in names:
        if n.type not in ("function", "class"):
            continue
        hit = symbols.target(n.module_path, n.name, n.line)
        described.append(f"{n.type} {n.full_name or n.name} ({n.module_name}:{n.line})")
        if hit == "unmapped":
            unmapped = True
        elif isinstance(hit, tuple):
            targets.add(hit)
    return targets, bool(described), unmapped, described


Site = tuple[str, str, int, str]  # (path, caller qualname, line, called name)


def _edges_by_site(
    extracts: dict[str, FileExtract], resolver: Resolver
) -> dict[Site, dict[Target, str]]:
    """Strata's targets (and resolution kinds) at each call site, asked per call so an
    edge counts at the site that made it (``self.storage_class()`` reaching ``Headers``).

    Edges a site implies without naming them (a class called reaches its ``__init__``:
    ``constructor``) are left out: Jedi answers the class.
    """
    edges: dict[Site, dict[Target, str]] = defaultdict(dict)
    for path, extract in extracts.items():
        for call in extract.calls:
            targets, _ = resolver.call_targets(path, call)
            site = (path, call.caller or MODULE, call.line, call.name)
            for target, resolution in targets:
                if resolution != "constructor":
                    edges[site][(target.path, target.qualname)] = resolution
    return edges


def _judge(tally: Tally, truth: set[Target], strata: dict[Target, str]) -> None:
    """Count one site Jedi resolved: Strata's edges there against Jedi's targets."""
    if not truth:
        tally.outside_only += 1
    tally.oracle += len(truth)
    tally.found += len(truth & set(strata))
    tally.predicted += len(strata)
    tally.correct += len(truth & set(strata))
    for target, kind in strata.items():
        tally.kinds[kind][1] += 1
        tally.kinds[kind][0] += target in truth


@dataclass(slots=True)
class Notes:
    """What a person reads after a run: oracle answers, and where Strata and Jedi differ."""

    samples: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    missed_by_shape: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    wrong_by_shape: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def record(self, entry: str, written: str, truth: set[Target], strata: set[Target]) -> None:
        self.samples.append(entry)
        missed, wrong = truth - strata, strata - truth
        self.missed_by_shape[written] += len(missed)
        self.wrong_by_shape[written] += len(wrong)
        if missed or wrong:
            self.disagreements.append(entry)


def shape(call: CallSite) -> str:
    """How the call is written: bare name, self/super, a dotted name, or an expression."""
    if not call.receiver:
        return "name()"
    if call.receiver in ("self", "cls", "super"):
        return f"{call.receiver}.m()"
    return "a.b.m()" if _DOTTED.match(call.receiver) else "expr.m()"


def run_project(project: Project, sites: int, seed: int, notes: Notes) -> tuple[Tally, int, int]:
    """Score one project; returns its tally, its line count and its call-site count."""
    root = fetch(project)
    files = _python_files(root)
    extracts = {p: parse_file(p, s) for p, s in files.items()}
    resolver = Resolver(ModuleIndex(extracts, []))
    edges = _edges_by_site(extracts, resolver)
    unique: dict[Site, CallSite] = {}
    for path, extract in extracts.items():
        for call in extract.calls:
            unique.setdefault((path, call.caller or MODULE, call.line, call.name), call)
    everything = sorted(unique)
    rng = random.Random(seed)
    chosen = sorted(rng.sample(everything, min(sites, len(everything))))
    symbols = _Symbols(root, extracts)
    env_paths = [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib")]
    jedi_project = jedi.Project(
        root, sys_path=[str(root / project.source), str(root), *env_paths], smart_sys_path=False
    )
    tally = Tally()
    by_file: dict[str, list[Site]] = defaultdict(list)
    for site in chosen:
        by_file[site[0]].append(site)
    for path, file_sites in by_file.items():
        source = files[path]
        columns = _name_columns(source)
        text = source.decode("utf-8", "replace")
        script = jedi.Script(text, path=root / path, project=jedi_project)
        lines = text.splitlines()
        for site in file_sites:
            tally.sites += 1
            _, caller, line, name = site
            position = columns.get((line, name))
            if position is None:
                tally.no_column += 1
                continue
            try:
                truth, resolved, unmapped, described = _oracle(script, *position, symbols)
            except Exception:  # a Jedi crash is an unresolved site, not a stop
                truth, resolved, unmapped, described = set(), False, False, []
            strata = edges.get(site, {})
            if not resolved:
                tally.unresolved_by_jedi += 1
                tally.unjudged_edges += len(strata)
                continue
            if unmapped:
                tally.unmapped += 1
                continue
            _judge(tally, truth, strata)
            text = lines[line - 1].strip() if line <= len(lines) else ""
            entry = (
                f"- `{project.name}-{project.version}/{path}:{line}` in `{caller}`: "
                f"`{text[:120]}`\n  - call `{name}`; Jedi: {'; '.join(described)}\n"
                f"  - Strata: {', '.join(f'{p}:{q} [{k}]' for (p, q), k in strata.items()) or '-'}"
            )
            notes.record(entry, shape(unique[site]), truth, set(strata))
    line_count = sum(e.lines for e in extracts.values())
    return tally, line_count, len(everything)


def run_real(sites: int, seed: int, only: list[str] | None) -> None:
    """Score every pinned project and print the tables."""
    total = Tally()
    notes = Notes()
    print(f"real code against Jedi {jedi.__version__}: {sites} call sites sampled per project")
    print(f"(seed {seed}; sites are Strata's extracted calls, deduplicated per line and name)")
    header = f"{'project':<16} {'lines':>6} {'sites':>6} {'judged':>6} {'P':>6} {'R':>6} {'s':>5}"
    print(header)
    for project in PROJECTS:
        if only and project.name not in only:
            continue
        started = time.perf_counter()
        tally, lines, population = run_project(project, sites, seed, notes)
        total.add(tally)
        judged = tally.sites - tally.unresolved_by_jedi - tally.unmapped - tally.no_column
        print(
            f"{project.name + '-' + project.version:<16} {lines:>6} {population:>6} "
            f"{judged:>6} {_ratio(tally.correct, tally.predicted):>6} "
            f"{_ratio(tally.found, tally.oracle):>6} {time.perf_counter() - started:>5.0f}"
        )
    print(
        f"overall: precision {_ratio(total.correct, total.predicted)} "
        f"({total.correct}/{total.predicted}), recall {_ratio(total.found, total.oracle)} "
        f"({total.found}/{total.oracle})"
    )
    print(
        f"sites sampled {total.sites}: Jedi unresolved {total.unresolved_by_jedi} "
        f"(Strata had {total.unjudged_edges} edges there, unjudged), outside the project only "
        f"{total.outside_only}, unmapped {total.unmapped}, not in Python's AST {total.no_column}"
    )
    print("precision by resolution kind:")
    for kind in sorted(total.kinds):
        ok, count = total.kinds[kind]
        print(f"  {kind:<10} {ok:>4}/{count:<4} {_ratio(ok, count)}")
    print("missed / wrong edges by how the call is written:")
    for written in sorted(notes.missed_by_shape, key=lambda w: -notes.missed_by_shape[w]):
        print(
            f"  {written:<9} missed {notes.missed_by_shape[written]:>4}"
            f"  wrong {notes.wrong_by_shape[written]:>3}"
        )
    DISAGREEMENTS_FILE.write_text(
        "# Call sites where Strata and Jedi disagree\n\n" + "\n".join(notes.disagreements) + "\n",
        encoding="utf-8",
    )
    print(f"disagreements: {DISAGREEMENTS_FILE.relative_to(ROOT)}")
    picked = random.Random(seed).sample(notes.samples, min(SAMPLE_SIZE, len(notes.samples)))
    SAMPLE_FILE.write_text(
        "# Jedi's answers at randomly chosen call sites (check them against the code)\n\n"
        + "\n".join(picked)
        + "\n",
        encoding="utf-8",
    )
    print(f"oracle sample: {SAMPLE_FILE.relative_to(ROOT)}")


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"
