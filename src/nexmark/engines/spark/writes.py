"""How Spark writes each query's result: its output mode, the update mode's key columns, what
bounds its state, and q10's own file sink. Data beside the query, in `sql/queries.toml` (the
format is described at its top), checked against the query registry as it is read; the SQL
files carry none of it.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

from nexmark.errors import EngineError, UnsupportedQueryError
from nexmark.workload import queries

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

WRITES_FILE = resources.files(__package__) / "sql" / "queries.toml"
MODES = ("append", "update")
# What bounds a query's state on Spark, by its `state`: Spark SQL has no state TTL, so state is
# bounded by the watermark (event-time windows) or not at all.
STATE_BOUNDS = {
    "none": "no state",
    "lookup": "no state: a stream-static join with the side table",
    "watermark": "the watermark: windows close and are dropped",
    "grows": "nothing: grows (Spark SQL has no state TTL)",
}
_FIELDS = ("mode", "key", "state", "sink", "partition")


@dataclass(frozen=True)
class QueryWrite:
    """How Spark writes one query's result.

    Args:
        mode: Spark's output mode, "append" or "update".
        keys: Update mode: the result's key columns.
        state: What bounds its state (a key of `STATE_BOUNDS`).
        files: The query writes Spark's file sink itself (q10), not the engine's sink.
        partition: That file sink's partition columns.
    """

    mode: str
    keys: tuple[str, ...]
    state: str
    files: bool = False
    partition: tuple[str, ...] = ()

    @property
    def state_bound(self) -> str:
        """What bounds the state, in words (a result's `state_bound`)."""
        return STATE_BOUNDS[self.state]


def parse(text: str, origin: str) -> dict[str, QueryWrite]:
    """The entries of a `queries.toml` text by query name.

    Raises:
        EngineError: One line naming `origin` and the entry: not TOML, an unknown query or
            field, a mode or state out of its set, keys without update mode (or none with it),
            a key or partition column the query does not output, a file sink on a query
            without `own_sink`.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise EngineError(f"{origin} is not valid TOML: {exc}") from None
    registered = {q.name: q for q in queries.REGISTERED}
    writes: dict[str, QueryWrite] = {}
    for name, entry in doc.items():
        query = registered.get(name)
        if query is None:
            raise EngineError(f"{origin}: {name!r} is no registered query")
        if not isinstance(entry, Mapping):
            raise EngineError(f"{origin}: {name} must be a table ({{ mode = ..., ... }})")
        writes[name] = _entry(query, entry, f"{origin}: {name}")
    return writes


def _entry(query: queries.Query, entry: Mapping[str, Any], where: str) -> QueryWrite:
    unknown = sorted(set(entry) - set(_FIELDS))
    if unknown:
        raise EngineError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {_FIELDS}")
    mode, state = entry.get("mode"), entry.get("state")
    if mode not in MODES:
        raise EngineError(f"{where}: mode must be one of {MODES}, not {mode!r}")
    if state not in STATE_BOUNDS:
        raise EngineError(f"{where}: state must be one of {tuple(STATE_BOUNDS)}, not {state!r}")
    keys = _columns(query, entry.get("key", []), f"{where}: key")
    if (mode == "update") != bool(keys):
        raise EngineError(f"{where}: update mode needs key columns, and only update mode has them")
    sink = entry.get("sink")
    if sink not in (None, "files") or (sink == "files") != query.own_sink:
        raise EngineError(
            f'{where}: sink = "files" is for a query with its own sink ({query.name}: '
            f"own_sink={query.own_sink}), not {sink!r}"
        )
    partition = _columns(query, entry.get("partition", []), f"{where}: partition")
    if partition and sink != "files":
        raise EngineError(f'{where}: partition columns need sink = "files"')
    return QueryWrite(mode, keys, state, sink == "files", partition)


def _columns(query: queries.Query, value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise EngineError(f"{where} must be a list of column names, not {value!r}")
    outside = [c for c in value if c not in query.columns]
    if outside:
        raise EngineError(
            f"{where}: {', '.join(outside)} not among {query.name}'s columns "
            f"({', '.join(query.columns)})"
        )
    return tuple(value)


@functools.cache
def table() -> dict[str, QueryWrite]:
    """Every entry of the packaged `sql/queries.toml`, read and checked once."""
    return parse(WRITES_FILE.read_text(encoding="utf-8"), "engines/spark/sql/queries.toml")


def of(name: str) -> QueryWrite:
    """How Spark writes the query called `name`.

    Raises:
        UnsupportedQueryError: `queries.toml` has no entry for it.
    """
    query = queries.get(name)
    write = table().get(query.name)
    if write is None:
        raise UnsupportedQueryError(f"no Spark write mode for {query.name} (sql/queries.toml)")
    return write
