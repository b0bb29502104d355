"""Task context packs: a task routed to an intent, its evidence gathered, gated and cut to a
token budget, every line cited (path:line@commit)."""
