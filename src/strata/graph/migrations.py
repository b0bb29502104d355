"""Numbered Cypher migrations, applied once and recorded in the graph.

A migration is ``migrations/NNNN_name.cypher``: statements separated by ``;``
at the end of a line, ``//`` comments allowed. Each applied file is recorded as
a ``(:Migration {uid, namespace, id, name, checksum, applied_at})`` node; the
namespace (default ``strata``) lets tests run their own migration sets. Re-running applies
nothing; an applied file whose checksum changed is refused, because the graph
was shaped by the old text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from strata.errors import MigrationError
from strata.graph.gateway import Gateway

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.cypher$")

DEFAULT_NAMESPACE = "strata"
RECORD_CONSTRAINT = (
    "CREATE CONSTRAINT strata_migration_uid IF NOT EXISTS FOR (m:Migration) REQUIRE m.uid IS UNIQUE"
)
APPLIED = (
    "MATCH (m:Migration {namespace: $namespace}) "
    "RETURN m.id AS id, m.name AS name, m.checksum AS checksum"
)
RECORD = (
    "CREATE (m:Migration {uid: $namespace + ':' + toString($id), namespace: $namespace, "
    "id: $id, name: $name, checksum: $checksum, applied_at: $applied_at})"
)


@dataclass(frozen=True, slots=True)
class Migration:
    id: int
    name: str
    checksum: str
    statements: tuple[str, ...]
    path: Path


@dataclass(frozen=True, slots=True)
class MigrationStatus:
    applied: tuple[int, ...]
    pending: tuple[int, ...]

    @property
    def at_head(self) -> bool:
        return not self.pending


def split_statements(text: str) -> list[str]:
    """Split a Cypher file into statements (``;`` at a line end; ``//`` comments)."""
    lines = [line for line in text.splitlines() if not line.strip().startswith("//")]
    statements: list[str] = []
    current: list[str] = []
    for line in lines:
        current.append(line)
        if line.rstrip().endswith(";"):
            statement = "\n".join(current).strip().rstrip(";").strip()
            if statement:
                statements.append(statement)
            current = []
    tail = "\n".join(current).strip()
    if tail:
        statements.append(tail)
    return statements


def load_migrations(directory: Path) -> list[Migration]:
    """Read and order the migration files; refuse gaps and malformed names."""
    if not directory.is_dir():
        raise MigrationError(f"migrations directory not found: {directory}", path=str(directory))
    found: list[Migration] = []
    for path in sorted(directory.glob("*.cypher")):
        match = _NAME.match(path.name)
        if not match:
            raise MigrationError(
                f"migration file name must look like 0001_name.cypher: {path.name}",
                path=str(path),
            )
        raw = path.read_bytes()
        found.append(
            Migration(
                id=int(match.group(1)),
                name=match.group(2),
                checksum=hashlib.sha256(raw).hexdigest(),
                statements=tuple(split_statements(raw.decode("utf-8"))),
                path=path,
            )
        )
    for expected, migration in enumerate(found, start=1):
        if migration.id != expected:
            raise MigrationError(
                f"migration numbers must run 1, 2, 3, ... without gaps; found {migration.id:04d} "
                f"where {expected:04d} was expected",
                path=str(migration.path),
            )
    return found


def _applied(gateway: Gateway, namespace: str) -> dict[int, dict[str, str]]:
    return {int(row["id"]): row for row in gateway.read(APPLIED, namespace=namespace)}


def _check_recorded(migrations: list[Migration], applied: dict[int, dict[str, str]]) -> None:
    by_id = {m.id: m for m in migrations}
    for mid, row in sorted(applied.items()):
        migration = by_id.get(mid)
        if migration is None:
            raise MigrationError(
                f"the graph records migration {mid:04d} ({row['name']}) but no such file exists",
                hint="the code is older than the database; deploy the newer release",
                migration=mid,
            )
        if migration.checksum != row["checksum"]:
            raise MigrationError(
                f"migration {mid:04d}_{migration.name}.cypher was edited after it was applied "
                f"(recorded checksum {row['checksum'][:12]}, file {migration.checksum[:12]})",
                hint="never edit an applied migration: restore it and add a new numbered file",
                migration=mid,
            )


def status(
    gateway: Gateway, directory: Path, *, namespace: str = DEFAULT_NAMESPACE
) -> MigrationStatus:
    """Which migrations are applied and which are pending (checksums verified)."""
    migrations = load_migrations(directory)
    applied = _applied(gateway, namespace)
    _check_recorded(migrations, applied)
    return MigrationStatus(
        applied=tuple(sorted(applied)),
        pending=tuple(m.id for m in migrations if m.id not in applied),
    )


def require_head(gateway: Gateway, directory: Path, *, namespace: str = DEFAULT_NAMESPACE) -> None:
    """Refuse to go on unless every migration is applied (one read).

    A writer checks this before it writes: in a graph without the key
    constraints every key lookup scans a whole label (an index of a large
    repository never ends) and nothing stops two nodes with one key.
    """
    state = status(gateway, directory, namespace=namespace)
    if state.pending:
        pending = ", ".join(f"{mid:04d}" for mid in state.pending)
        raise MigrationError(
            f"the graph is missing migration(s) {pending}: its constraints and indexes "
            "are not in place, so nothing was written",
            hint="run `strata migrate` (`strata up` runs it for the local stack)",
            pending=list(state.pending),
        )


def migrate(
    gateway: Gateway, directory: Path, *, namespace: str = DEFAULT_NAMESPACE
) -> list[Migration]:
    """Apply pending migrations in order; return the ones applied now."""
    migrations = load_migrations(directory)
    gateway.run_autocommit(RECORD_CONSTRAINT)
    applied = _applied(gateway, namespace)
    _check_recorded(migrations, applied)
    done: list[Migration] = []
    for migration in migrations:
        if migration.id in applied:
            continue
        for statement in migration.statements:
            try:
                gateway.run_autocommit(statement)
            except Exception as exc:
                raise MigrationError(
                    f"migration {migration.id:04d}_{migration.name} failed: {exc}",
                    migration=migration.id,
                    statement=statement[:200],
                ) from exc
        # Statements are idempotent (IF NOT EXISTS), so a crash between the
        # last statement and this record is repaired by re-running.
        gateway.write(
            RECORD,
            namespace=namespace,
            id=migration.id,
            name=migration.name,
            checksum=migration.checksum,
            applied_at=datetime.now(UTC),
        )
        done.append(migration)
    return done
