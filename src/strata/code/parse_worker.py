"""A parse helper: ``python -m strata.code.parse_worker`` (started by :mod:`.parallel`).

Reads chunks of ``(path, source, key)`` from stdin and answers each with
``("ok", record)`` or ``("error", exception)`` on stdout, until stdin closes
(which is also what happens when its parent dies). A record is the pickled
``{path: (key, FileExtract)}`` of the chunk, in the extract cache's format
(:func:`strata.code.cache.chunk_record`): the parent reads it, and writes
it to the cache file as it is.
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> int:
    """Serve chunks until end of input; 0 on a clean end."""
    # The protocol owns the real stdout; anything else printed goes to stderr.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    source = sys.stdin.buffer

    from strata.code.cache import chunk_record
    from strata.code.languages import parse_file
    from strata.code.parallel import read_frame, write_frame

    # Extraction makes no reference cycles (Django's 2,818 files: 4,058 automatic
    # collections, nothing collected, 7% of the helper's time), so the collector runs
    # once per chunk, over what the chunk left (the modules imported above are frozen).
    gc.freeze()
    gc.disable()
    while True:
        try:
            chunk = read_frame(source)
        except EOFError:
            return 0
        try:
            answer: tuple[str, object] = (
                "ok",
                chunk_record({p: (k, parse_file(p, s)) for p, s, k in chunk}),
            )
        except Exception as exc:
            answer = ("error", exc)
        try:
            write_frame(out, answer)
        except BrokenPipeError:
            return 0
        except Exception as exc:
            write_frame(out, ("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
        del chunk, answer
        gc.collect()  # after answering: the parent does not wait for it


if __name__ == "__main__":
    sys.exit(main())
