"""Absolute lines as of a read's moment, from the File versions visible then.

Reads of the code layer (symbols, call hits, unresolved sites, search hits,
trace targets, changes, history) hold v4 facts whose positions are offsets
(:mod:`strata.code.layout`). :class:`Positions` reads, in one round trip, the
layout of every File they touch as of each moment asked for, and places
them. Facts written under v1-v3 already carry absolute lines and are left as
they are, so a graph indexed before v4 reads the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from strata.code.layout import (
    EMPTY,
    Layout,
    absolute_lines,
    absolute_site,
    decode_layout,
    file_key_of,
    place_symbol,
)
from strata.code.views import CallHit, SymbolView
from strata.graph.gateway import Gateway
from strata.graph.reads import FactVersion
from strata.ontology.model import KEY_SEPARATOR
from strata.temporal import AsOf, as_of_predicate, now

# One as-of position per probe (history and changes ask for several moments at once).
_PROBE_AS_OF = (
    as_of_predicate("st").replace("$valid_at", "p.valid_at").replace("$known_at", "p.known_at")
)

LAYOUTS = f"""
UNWIND $probes AS p
MATCH (f:File {{key: p.file}})-[st:STATE]->(f)
WHERE {_PROBE_AS_OF}
RETURN p.file AS file, p.valid_at AS valid_at, p.known_at AS known_at,
       st.layout AS layout, st.layout_origin AS origin
"""

Probe = tuple[str, AsOf]  # a File key, and the moment its layout is wanted


def needs_layout(state: dict[str, Any] | None) -> bool:
    """True for a v4 Symbol state (no span of its own); False for v1-v3 and absent ones."""
    return state is not None and bool(state) and state.get("line_start") is None


class Positions:
    """Layouts of File versions as of given moments, and placement of symbol states."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def layouts(
        self, probes: Iterable[Probe], *, timeout: float | None = None
    ) -> dict[Probe, Layout]:
        """The layout each (File key, moment) had (an empty layout where none was visible)."""
        wanted = sorted(set(probes), key=lambda p: (p[0], p[1].valid_at, p[1].known_at))
        if not wanted:
            return {}
        rows = self._gateway.read(
            LAYOUTS,
            probes=[{"file": key, **at.params()} for key, at in wanted],
            timeout=timeout,
        )
        by_wire = {
            (key, at.params()["valid_at"], at.params()["known_at"]): (key, at) for key, at in wanted
        }
        found: dict[Probe, Layout] = dict.fromkeys(wanted, EMPTY)
        for row in rows:
            probe = by_wire.get((row["file"], row["valid_at"], row["known_at"]))
            if probe is not None:
                found[probe] = decode_layout(row["layout"], row["origin"])
        return found

    def symbols(
        self, views: list[SymbolView], as_of: AsOf, *, timeout: float | None = None
    ) -> list[SymbolView]:
        """The views with absolute spans and unresolved sites as of ``as_of``."""
        need = {file_key_of(v.key) for v in views if needs_layout(v.state)}
        layouts = self.layouts(((k, as_of) for k in need), timeout=timeout)
        return [
            replace(
                v,
                state=place_symbol(
                    v.state, layouts.get((file_key_of(v.key), as_of), EMPTY).span(v.qualname)
                ),
            )
            for v in views
        ]

    def hits(
        self,
        hits: list[CallHit],
        rows: list[dict[str, Any]],
        as_of: AsOf,
        *,
        timeout: float | None = None,
    ) -> list[CallHit]:
        """The hits with absolute call lines (from the calling side's start) and spans, as
        of ``as_of``: one layout read for every File the hits and their callers sit in."""
        probes: set[Probe] = set()
        for row in rows:
            if row["edge"].get("offset") is not None:
                probes.add((file_key_of(row["src"], row["src_label"]), as_of))
            if row["label"] == "Symbol" and needs_layout(row["state"]):
                probes.add((file_key_of(row["key"], row["label"]), as_of))
        layouts = self.layouts(probes, timeout=timeout)
        placed = []
        for hit, row in zip(hits, rows, strict=True):
            src = layouts.get((file_key_of(row["src"], row["src_label"]), as_of), EMPTY)
            own = layouts.get((file_key_of(row["key"], row["label"]), as_of), EMPTY)
            line, lines = absolute_lines(row["edge"], src.base(row["src_qualname"]))
            state = hit.state
            if row["label"] == "Symbol" and state:
                state = place_symbol(state, own.span(row["qualname"]))
            placed.append(replace(hit, line=line, lines=lines, state=state))
        return placed

    def sites(
        self, sample: list[dict[str, Any]], as_of: AsOf, *, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Unresolved sites ``callee@+offset`` as ``callee@line`` as of ``as_of``."""
        label = {True: "Symbol", False: "File"}
        files = {h["key"]: file_key_of(h["key"], label[h["caller"] is not None]) for h in sample}
        layouts = self.layouts(((f, as_of) for f in files.values()), timeout=timeout)
        return [
            {
                **h,
                "site": absolute_site(
                    str(h["site"]), layouts.get((files[h["key"]], as_of), EMPTY).base(h["caller"])
                ),
            }
            for h in sample
        ]

    def versions(
        self, key: str, versions: list[FactVersion], *, timeout: float | None = None
    ) -> list[FactVersion]:
        """A symbol's state versions with their spans, each as of its last moment: just
        before it stopped being valid (or believed), else now."""
        current = now()
        moments = {
            i: _last_moment(v, current) for i, v in enumerate(versions) if needs_layout(v.props)
        }
        if not moments:
            return versions
        file_key = file_key_of(key)
        layouts = self.layouts(((file_key, at) for at in moments.values()), timeout=timeout)
        qualname = _qualname_of(key)
        return [
            replace(
                v,
                props=place_symbol(
                    v.props, layouts.get((file_key, moments[i]), EMPTY).span(qualname)
                ),
            )
            if i in moments
            else v
            for i, v in enumerate(versions)
        ]


def _last_moment(version: FactVersion, current: datetime) -> AsOf:
    """The latest (valid, known) position at which ``version`` is visible, capped at now."""
    tick = timedelta(microseconds=1)
    valid = version.invalid_at - tick if version.invalid_at is not None else current
    known = version.expired_at - tick if version.expired_at is not None else current
    return AsOf(max(version.valid_at, min(valid, current)), max(version.created_at, known))


def _qualname_of(key: str) -> str:
    """The (unescaped) qualname part of a Symbol key."""
    part = key.rsplit(KEY_SEPARATOR, 1)[-1]
    return part.replace("%7C", KEY_SEPARATOR).replace("%25", "%")
