"""A Flink job's live state, from its state backend's native metrics (RocksDB or ForSt).

The runner turns on four of the backend's native metrics for every job (`metric_options`, so
they are recorded with the job's options). Each is a gauge per operator and per state (a
column family) named `<operator>.<state>.rocksdb_<property>` (ForSt, a RocksDB fork, keeps the
property names); `LiveStateReader` finds them once they appear and sums each over every
operator and subtask, one REST request per stateful vertex. The heap backend has no such
metrics: then there is no live state, and the checkpoint size is the only measure.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from typing import Any

from nexmark.engines.status import LiveState
from nexmark.errors import UsageError

# Backends with native metrics, and their option prefix.
METRIC_PREFIX = {
    "rocksdb": "state.backend.rocksdb.metrics",
    "forst": "state.backend.forst.metrics",
}
LIVE_DATA = "estimate-live-data-size"  # live data in the files (SST), by RocksDB's estimate
KEYS = "estimate-num-keys"  # entries, memtables included (overwrites/deletes estimated)
SST_FILES = "total-sst-files-size"  # every file, dead entries included
MEMTABLES = "cur-size-all-mem-tables"  # active and unflushed memtables
PROPERTIES = (LIVE_DATA, KEYS, SST_FILES, MEMTABLES)

_NAME = re.compile(r"\.(?:rocksdb|forst)_(" + "|".join(map(re.escape, PROPERTIES)) + r")$")
# How often a vertex's metric names are listed again: a state registers its gauges when an
# operator first creates it, not always at start. In a job's first seconds, at every read: a
# gauge found late loses a refresh (every 5 s), and a short phase has only two or three.
_RELIST_S = 5.0
_EAGER_S = 15.0


# The state backends Flink 2.3 ships (`state.backend.type`); anything else must be the class
# name of a StateBackendFactory on the job's class path.
KNOWN_BACKENDS = ("hashmap", "rocksdb", "forst")


def backend_name(flink: dict[str, str]) -> str:
    """The configured state backend, lower case (Flink's default: hashmap).

    Raises:
        UsageError: A name Flink does not know and no factory class name.
    """
    name = flink.get("state.backend.type", "hashmap").strip()
    if name.lower() in KNOWN_BACKENDS:
        return name.lower()
    if "." in name:  # a custom StateBackendFactory: Flink loads it (and says if it cannot)
        return name
    raise UsageError(
        f"flink.state.backend.type {name!r} is no state backend Flink knows: use one of "
        f"{', '.join(KNOWN_BACKENDS)}, or the class name of a StateBackendFactory"
    )


def metric_options(flink: dict[str, str]) -> dict[str, str]:
    """The native metrics a job needs for its live state, for its backend; an option the
    settings already give (e.g. `...metrics.estimate-num-keys=false`) wins. Nothing for a
    backend without native metrics."""
    prefix = METRIC_PREFIX.get(backend_name(flink))
    if prefix is None:
        return {}
    wanted = {f"{prefix}.{prop}": "true" for prop in PROPERTIES}
    return {k: v for k, v in wanted.items() if k not in flink}


def live_state(sums: dict[str, float]) -> LiveState | None:
    """The job's live state from each property's sum (None when nothing is reported)."""
    if not sums:
        return None

    def value(prop: str) -> int | None:
        return int(sums[prop]) if prop in sums else None

    live, memtables = value(LIVE_DATA), value(MEMTABLES)
    size = None if live is None else live + (memtables or 0)
    return LiveState(
        bytes=size, keys=value(KEYS), files_bytes=value(SST_FILES), memory_bytes=memtables
    )


class LiveStateReader:
    """Reads one job's state metrics: names listed per vertex now and then, values summed.

    Args:
        get: The REST GET of the job (`FlinkJob._get`).
        job_id: The job.
        vertices: Every vertex of the job, when asked.
        clock: Monotonic seconds (tests drive it).
    """

    def __init__(
        self,
        get: Callable[..., Any],
        job_id: str,
        vertices: Callable[[], list[str]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._get = get
        self._job = job_id
        self._vertices = vertices
        self._clock = clock
        self._names: dict[str, list[str]] = {}  # vertex -> its state metric names
        self._listed_at = -_RELIST_S
        self._created = clock()

    def read(self) -> LiveState | None:
        now = self._clock()
        if now - self._created < _EAGER_S or now - self._listed_at >= _RELIST_S:
            self._listed_at = now
            for vertex in self._vertices():
                listed = self._get(self._path(vertex)) or []
                self._names[vertex] = [m["id"] for m in listed if _NAME.search(m.get("id", ""))]
        sums: dict[str, float] = {}
        for vertex, names in self._names.items():
            if not names:
                continue
            for entry in self._get(self._path(vertex), get=",".join(names), agg="sum") or []:
                found = _NAME.search(entry.get("id", ""))
                value = float(entry.get("sum", "nan"))
                if found and math.isfinite(value):
                    sums[found.group(1)] = sums.get(found.group(1), 0.0) + value
        return live_state(sums)

    def _path(self, vertex: str) -> str:
        return f"/jobs/{self._job}/vertices/{vertex}/subtasks/metrics"
