"""The call-graph micro-benchmark as a regression floor: what the resolver gets right today
stays right, and no case loses precision (the misses are the benchmark's business)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("strata_bench_calls", ROOT / "bench" / "calls.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
CASES = {case.name: case for case in BENCH.load_cases()}
BASELINE: dict[str, dict[str, object]] = json.loads(BENCH.BASELINE.read_text(encoding="utf-8"))


class TestFixtures:
    """The ground truth is well formed: enough cases per category, edges that point at files."""

    def test_every_category_has_three_cases(self) -> None:
        per: dict[str, int] = {}
        for case in CASES.values():
            per[case.category] = per.get(case.category, 0) + 1
        assert len(per) >= 14
        assert min(per.values()) >= 3

    @pytest.mark.parametrize("name", sorted(CASES))
    def test_edges_name_files_of_the_case(self, name: str) -> None:
        case = CASES[name]
        for caller, callee, line in case.expected | case.acceptable:
            assert caller.split(":", 1)[0] in case.files, caller
            assert callee.split(":", 1)[0] in case.files, callee
            source = case.files[caller.split(":", 1)[0]].decode()
            assert 1 <= line <= len(source.splitlines()), (caller, line)

    def test_baseline_covers_every_case(self) -> None:
        assert set(BASELINE) == set(CASES)


class TestFloor:
    """Each case keeps every edge it got right at baseline, and its precision."""

    @pytest.mark.parametrize("name", sorted(CASES))
    def test_case_holds_its_floor(self, name: str) -> None:
        result = BENCH.run_case(CASES[name])
        floor = BASELINE[name]
        kept = {tuple(e) for e in floor["right"]}  # type: ignore[attr-defined]
        assert kept <= result.right, f"lost: {sorted(kept - result.right)}"
        assert result.score.precision >= float(floor["precision"]) - 1e-9, sorted(result.wrong)
