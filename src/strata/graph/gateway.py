"""The one Neo4j gateway: the only module that imports the driver.

Managed transactions (the driver retries transient errors such as deadlocks),
a per-statement server-side timeout, results as plain dicts, and driver errors
mapped to Strata's own types. Labels and relationship types must already be
whitelisted by the ontology before a statement reaches :meth:`Tx.run`; values
always travel as parameters.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as neo4j_errors

from strata.errors import (
    DatabaseAuthError,
    DatabaseError,
    DatabaseUnavailable,
    StrataError,
    TransientDatabaseError,
    ValidationError,
)
from strata.ontology.model import LABEL_RE, PROPERTY_RE, REL_TYPE_RE
from strata.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")


def checked_label(name: str) -> str:
    """Second line of defence: a label must look like a label (PascalCase)."""
    if not LABEL_RE.fullmatch(name):
        raise ValidationError(f"not a valid label: {name!r}", label=name)
    return name


def checked_rel_type(name: str) -> str:
    """Second line of defence: a relationship type must be UPPER_SNAKE."""
    if not REL_TYPE_RE.fullmatch(name):
        raise ValidationError(f"not a valid relationship type: {name!r}", rel_type=name)
    return name


def checked_property(name: str) -> str:
    """Second line of defence: a property name must be snake_case."""
    if not PROPERTY_RE.fullmatch(name):
        raise ValidationError(f"not a valid property name: {name!r}", property=name)
    return name


def _statement(text: str, timeout: float | None) -> neo4j.Query:
    # Statements are built only from constants and checked identifiers (the
    # LiteralString the driver asks for is a guarantee made by the callers).
    return neo4j.Query(text, timeout=timeout)


def translate(exc: Exception) -> StrataError:
    """Map a driver exception to Strata's error types."""
    if isinstance(exc, StrataError):
        return exc
    if isinstance(exc, neo4j_errors.AuthError):
        return DatabaseAuthError(
            "Neo4j refused the credentials",
            hint="check STRATA_NEO4J_USER / STRATA_NEO4J_PASSWORD",
        )
    if isinstance(exc, neo4j_errors.TransientError):
        return TransientDatabaseError(f"Neo4j transient error: {exc}")
    if isinstance(exc, neo4j_errors.ServiceUnavailable | neo4j_errors.SessionExpired | OSError):
        return DatabaseUnavailable(
            f"Neo4j is not reachable: {exc}",
            hint="start it with `strata dev neo4j start` or check STRATA_NEO4J_URI",
        )
    if isinstance(exc, neo4j_errors.ConstraintError):
        return DatabaseError(f"Neo4j constraint violated: {exc}", gql_status=_gql(exc))
    if isinstance(exc, neo4j_errors.Neo4jError):
        return DatabaseError(f"Neo4j error: {exc}", gql_status=_gql(exc))
    if isinstance(exc, neo4j_errors.DriverError):
        return DatabaseUnavailable(f"Neo4j driver error: {exc}")
    raise exc


def _rows(result: neo4j.Result) -> list[dict[str, Any]]:
    """Records as dicts. Strata returns maps and scalars, never graph objects, so the
    driver's recursive ``Record.data()`` transformation is not needed."""
    keys = result.keys()
    return [dict(zip(keys, values, strict=True)) for values in result.values()]


def _gql(exc: neo4j_errors.Neo4jError) -> str | None:
    return getattr(exc, "code", None)


@dataclass(slots=True)
class Tx:
    """A transaction handed to transaction functions; returns records as dicts."""

    _tx: neo4j.ManagedTransaction | neo4j.Transaction
    _timeout: float | None

    def run(self, text: str, **params: Any) -> list[dict[str, Any]]:
        return _rows(self._tx.run(text, params))

    def run_one(self, text: str, **params: Any) -> dict[str, Any] | None:
        rows = self.run(text, **params)
        return rows[0] if rows else None


class Gateway:
    """Owns the driver; every Cypher statement of Strata runs through here."""

    def __init__(self, driver: neo4j.Driver, *, database: str, query_timeout_s: float) -> None:
        self._driver = driver
        # Sessions open now (each used by one thread): close() waits for them. A
        # request that ran out of time returns while its thread still reads.
        self._open = 0
        self._none_open = threading.Condition()
        self._database = database
        self._timeout = query_timeout_s

    @classmethod
    def connect(cls, settings: Settings) -> Gateway:
        """Build a driver from settings (no network I/O until first use)."""
        return cls.open(
            settings.neo4j_uri,
            user=settings.neo4j_user,
            password=settings.neo4j_password.get_secret_value(),
            database=settings.neo4j_database,
            query_timeout_s=settings.neo4j_query_timeout_s,
            pool_size=settings.neo4j_max_pool_size,
            connect_timeout_s=settings.neo4j_connect_timeout_s,
        )

    @classmethod
    def open(
        cls,
        uri: str,
        *,
        user: str,
        password: str,
        database: str = "neo4j",
        query_timeout_s: float = 30.0,
        pool_size: int = 50,
        connect_timeout_s: float = 5.0,
    ) -> Gateway:
        """Build a driver for an explicit URI and credentials."""
        driver = neo4j.GraphDatabase.driver(
            uri,
            auth=(user, password),
            max_connection_pool_size=pool_size,
            connection_timeout=connect_timeout_s,
            max_transaction_retry_time=15.0,
            notifications_min_severity="OFF",
        )
        return cls(driver, database=database, query_timeout_s=query_timeout_s)

    def close(self, *, wait_s: float | None = None) -> None:
        """Close the driver's connections once the sessions in flight have ended.

        A GraphQL request that runs out of time answers at once, but the thread it
        started still runs its statement (bounded by the same budget on the server);
        closing the pool under it made two threads use one connection (neo4j 6.4:
        ``BufferError`` at the API's shutdown after the fuzzing run). So close waits
        for open sessions, at most ``wait_s`` (default: the query timeout), and says
        how many it gave up on. A driver that still fails to close is logged, not
        raised: a close that raises breaks its caller's own shutdown."""
        limit = self._timeout if wait_s is None else wait_s
        with self._none_open:
            self._none_open.wait_for(lambda: self._open == 0, timeout=limit)
            still = self._open
        if still:
            log.warning("closing the neo4j driver with %d session(s) still open", still)
        try:
            self._driver.close()
        except Exception as exc:
            log.warning("neo4j driver close failed: %s: %s", type(exc).__name__, exc)

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _session(self) -> Iterator[neo4j.Session]:
        with self._none_open:
            self._open += 1
        try:
            with self._driver.session(database=self._database) as session:
                yield session
        except StrataError:
            raise
        except Exception as exc:
            raise translate(exc) from exc
        finally:
            with self._none_open:
                self._open -= 1
                if not self._open:
                    self._none_open.notify_all()

    def _wrap(
        self, fn: Callable[[Tx], T], timeout: float | None
    ) -> Callable[[neo4j.ManagedTransaction], T]:
        effective = self._timeout if timeout is None else timeout

        @neo4j.unit_of_work(timeout=effective)
        def work(tx: neo4j.ManagedTransaction) -> T:
            return fn(Tx(tx, effective))

        return work

    def read_tx(self, fn: Callable[[Tx], T], *, timeout: float | None = None) -> T:
        """Run ``fn`` in a managed read transaction (retried on transient errors)."""
        with self._session() as session:
            return session.execute_read(self._wrap(fn, timeout))

    def write_tx(self, fn: Callable[[Tx], T], *, timeout: float | None = None) -> T:
        """Run ``fn`` in a managed write transaction (retried as a whole)."""
        with self._session() as session:
            return session.execute_write(self._wrap(fn, timeout))

    def rehearse(self, fn: Callable[[Tx], T], *, timeout: float | None = None) -> T:
        """Run ``fn`` in a write transaction that is then rolled back: nothing it
        wrote lands, and Neo4j has planned (and cached) every statement it ran."""
        effective = self._timeout if timeout is None else timeout
        with self._session() as session:
            tx = session.begin_transaction(timeout=effective)
            try:
                return fn(Tx(tx, effective))
            finally:
                tx.rollback()

    def read(
        self, text: str, *, timeout: float | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """One read statement as an auto-commit transaction: one round trip.

        Retried once on a transient error (a managed transaction would cost a
        second round trip, for the commit, on every point lookup).
        """
        try:
            return self._autocommit(text, timeout, params)
        except TransientDatabaseError:
            return self._autocommit(text, timeout, params)

    def _autocommit(
        self, text: str, timeout: float | None, params: dict[str, Any]
    ) -> list[dict[str, Any]]:
        effective = self._timeout if timeout is None else timeout
        with self._session() as session:
            return _rows(session.run(_statement(text, effective), params))

    def write(
        self, text: str, *, timeout: float | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """One write statement in its own transaction."""
        return self.write_tx(lambda tx: tx.run(text, **params), timeout=timeout)

    def run_autocommit(
        self, text: str, *, timeout: float | None = None, **params: Any
    ) -> list[dict[str, Any]]:
        """Statements that manage their own transactions: schema changes, and
        ``CALL {...} IN TRANSACTIONS`` batches."""
        return self._autocommit(text, timeout, params)

    def plan(self, text: str, **params: Any) -> list[str]:
        """The operators Neo4j plans for ``text`` with these parameters, outermost first
        (``EXPLAIN``: nothing runs), e.g. ``NodeUniqueIndexSeek``."""
        found: list[str] = []
        with self._session() as session:
            summary = session.run("EXPLAIN " + text, params).consume()
        todo = [summary.plan] if summary.plan else []
        while todo:
            step = todo.pop(0)
            found.append(str(step["operatorType"]).split("@", 1)[0])
            todo.extend(step.get("children", ()))
        return found

    def ping(self, *, timeout: float = 2.0) -> str:
        """One attempt, no retries (for health checks); return the server version."""
        rows = self._autocommit(
            "CALL dbms.components() YIELD versions RETURN versions[0] AS version", timeout, {}
        )
        return str(rows[0]["version"]) if rows else "unknown"
