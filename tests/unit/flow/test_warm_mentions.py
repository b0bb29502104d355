"""Mentions computed ahead (after a job) are the ones a run's plan reads."""

from __future__ import annotations

from strata.code.flow import exports
from strata.code.languages import parse_file


def test_warming_memoises_each_blob_once() -> None:
    files = [
        (f"blob-warm-{n}", parse_file(f"pkg/m{n}.py", f"def f{n}(x):\n    return g(x)\n".encode()))
        for n in range(3)
    ]
    assert exports.warm_mentions(files) == 3
    assert exports.warm_mentions(files) == 0  # memoised: nothing left to compute
    blob, extract = files[0]
    found = exports.mentions(blob, extract)
    assert found is exports._memo[blob]
    assert "f0" in found.defines
    assert "g" in found.mentions
