"""Where a Flink job's time goes, per job vertex (the operators chained into one task): its
tasks' time busy, back-pressured and idle, and the records they received and emitted.

Flink shows these as rates (`busyTimeMsPerSecond`, `backPressuredTimeMsPerSecond`,
`idleTimeMsPerSecond`, `numRecordsInPerSecond`, `numRecordsOutPerSecond`), but each rate is a
view over up to the last 60 s, updated every 5 s: a short phase's rates mix in what came before
it, and the records' rates divide by 60 s from the task's start, so a restored job's first
minute reads a fraction of its true rate (20 s in, a third). The runner reads the counters
those rates are views of (`accumulateBusyTimeMs`, `accumulateBackPressuredTimeMs`,
`accumulateIdleTimeMs`, `numRecordsIn`, `numRecordsOut`), whose differences hold over any span
(`results.operators` says how closely). The three times add up to the time the tasks have run,
so that span comes from the same answer as the counts (a dump the REST API serves twice is a
span of zero, not a stop).

One request per vertex and read: the five counters aggregated over its subtasks (`agg=avg,sum`);
the vertices' names and parallelism are asked once per job.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from nexmark.engines.status import VertexLoad

TIMES = ("accumulateBusyTimeMs", "accumulateBackPressuredTimeMs", "accumulateIdleTimeMs")
RECORDS = ("numRecordsIn", "numRecordsOut")


class VertexLoads:
    """Reads one job's vertices' counters (`FlinkJob.operator_load`).

    Args:
        get: The job's REST GET (`FlinkJob._get`).
        job_id: Flink's job id.
    """

    def __init__(self, get: Callable[..., Any], job_id: str) -> None:
        self._get = get
        self.job_id = job_id
        self._vertices: list[tuple[str, str, int | None]] | None = None

    def read(self) -> list[VertexLoad]:
        out = []
        for vertex_id, name, parallelism in self._job_vertices():
            path = f"/jobs/{self.job_id}/vertices/{vertex_id}/subtasks/metrics"
            answer = self._get(path, get=",".join(TIMES + RECORDS), agg="avg,sum")
            out.append(vertex_load(vertex_id, name, parallelism, answer or []))
        return out

    def _job_vertices(self) -> list[tuple[str, str, int | None]]:
        """(id, name, parallelism) of each vertex, in the job graph's order: asked once."""
        if self._vertices is None:
            listed = self._get(f"/jobs/{self.job_id}").get("vertices", [])
            self._vertices = [
                (v["id"], v.get("name", v["id"]), _integer(v.get("parallelism"))) for v in listed
            ]
        return self._vertices


def vertex_load(
    vertex_id: str, name: str, parallelism: int | None, answer: list[dict[str, Any]]
) -> VertexLoad:
    """One vertex's read from the REST API's aggregated answer: the times as the mean over its
    subtasks, the records summed. A counter Flink does not report (or reports as NaN: busy
    time measurement off, a task not started) is None."""
    found = {entry.get("id"): entry for entry in answer}

    def figure(metric: str, agg: str) -> float | None:
        raw = (found.get(metric) or {}).get(agg)
        try:
            value = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            return None
        return value if value is not None and math.isfinite(value) else None

    busy, backpressured, idle = (figure(m, "avg") for m in TIMES)
    parts = (busy, backpressured, idle)
    ran = None if None in parts else sum(p for p in parts if p is not None)
    records_in, records_out = (figure(m, "sum") for m in RECORDS)
    return VertexLoad(
        vertex_id, name, parallelism, ran, busy, backpressured, idle, records_in, records_out
    )


def _integer(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
