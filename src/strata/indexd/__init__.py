"""The index daemon: `strata index` served by a process that keeps the run state.

A one-file change indexed by a fresh CLI process spent ~5 s rebuilding what the
previous run had built (the extract cache's 2,800 parses, the flow's statement
index and demand solver, the module index) before doing 0.2 s of work; the code
worker keeps that state between pushes. The daemon keeps it between CLI runs:
``strata index`` hands its request to a daemon over a Unix socket (starting one
when none answers), follows its progress and prints its answer; the daemon
exits after an idle time (``STRATA_INDEX_DAEMON_IDLE_S``; 0 indexes in the CLI
process itself, as ``--no-daemon`` does).

- :mod:`strata.indexd.protocol`: where a daemon listens and what goes over the socket;
- :mod:`strata.indexd.server`: the daemon (one request at a time, one CodeService);
- :mod:`strata.indexd.client`: find or start the daemon, send a request, follow it.
"""
