"""A parse helper whose parse of any file named ``*loops*`` never ends, as a grammar
that loops on an input does (tests/unit/code/test_parallel.py starts it)."""

from __future__ import annotations

import sys
import time

from strata.code import languages, parse_worker
from strata.code.model import FileExtract

_real = languages.parse_file


def _parse_file(path: str, source: bytes) -> FileExtract:
    while "loops" in path:
        time.sleep(1)
    return _real(path, source)


if __name__ == "__main__":
    languages.parse_file = _parse_file
    sys.exit(parse_worker.main())
