"""``python -m strata.indexd KEY``: an index daemon (`strata index` starts it).

It reads the same STRATA_* environment as the `strata index` that started it and
refuses to run if that environment or the code names another daemon than ``KEY``
(both changed while it started): the caller waits at ``KEY``'s socket.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from strata.errors import StrataError
from strata.indexd.protocol import address, address_of
from strata.indexd.server import IndexDaemon
from strata.logs import configure
from strata.settings import Settings, load_settings


def absolute_paths(settings: Settings) -> Settings:
    """``settings`` with every folder resolved against the working folder."""
    paths = {
        name: value.resolve()
        for name in type(settings).model_fields
        if isinstance(value := getattr(settings, name), Path)
    }
    return settings.model_copy(update=paths)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m strata.indexd KEY", file=sys.stderr)
        return 2
    try:
        settings = load_settings()
        configure(level=settings.log_level, json=settings.log_json)
        where = address_of(argv[0])
        if settings.index_daemon_idle_s <= 0:
            print("STRATA_INDEX_DAEMON_IDLE_S is 0: no daemon", file=sys.stderr)
            return 2
        if address(settings) != where:
            print("settings or code changed while the daemon started", file=sys.stderr)
            return 3
        # The daemon outlives the folder it was started from (a test's, a deleted
        # clone's): its paths are made absolute and the code stack imported first.
        settings = absolute_paths(settings)
        import strata.code.service  # noqa: F401 - imported now, not at the first request

        os.chdir("/")
        IndexDaemon(settings, where, idle_s=settings.index_daemon_idle_s).serve()
    except StrataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
