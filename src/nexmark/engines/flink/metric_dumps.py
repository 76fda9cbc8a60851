"""A Flink job's task metrics, dated by the metric dump they come from.

The REST API answers from a metric store that a request only asks to refresh
(`metrics.fetcher.update-interval`): the answer is the previous fetch's, often a second old at
one poll a second, and two polls may see the same dump. The dump's time is read off the same
answer: every task's busy + idle + back-pressured time is the time since it started running
(`TaskIOMetricGroup`), and each subtask's RUNNING timestamp is when that was. Dated, the
source's count and the operators' watermark can be compared at one time
(`protocol.scoring.figures`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from nexmark.engines.flink.ddl import KAFKA_METRIC_PREFIX, SOURCE_METRIC_PREFIX
from nexmark.engines.flink.rest import FlinkRest

NO_WATERMARK = -(2**63)  # Long.MIN_VALUE: the operator has received no watermark yet
_INPUT_WATERMARK = "currentInputWatermark"  # a task's: the least over its inputs
# Input watermarks within this distance of the wall clock are processing-time mini-batch
# markers, not event time (datasets' event time is a fixed base time, 2024 by default).
_PROCESSING_TIME_WINDOW_MS = 24 * 3600 * 1000
# A task's time since it started running, in three parts (ms), from the same metric dump as
# its counts: their sum dates the dump.
_TASK_TIME_METRICS = (
    "accumulateBusyTimeMs",
    "accumulateIdleTimeMs",
    "accumulateBackPressuredTimeMs",
)


class MetricDumps:
    """The dated metrics of one job's vertices.

    Args:
        rest: The cluster's REST client (its metric aggregates).
        job_id: Flink's job id.
        get: The job's REST GET (`FlinkJob._get`: an API that stops answering is explained).
    """

    def __init__(self, rest: FlinkRest, job_id: str, get: Callable[..., Any]) -> None:
        self.rest = rest
        self.job_id = job_id
        self._get = get
        self._running_ms: dict[str, float] = {}  # source vertex -> mean RUNNING time, ms
        self._source_metrics: dict[str, str | None] = {}  # vertex id -> metric name

    def _metrics_path(self, vertex_id: str) -> str:
        return f"/jobs/{self.job_id}/vertices/{vertex_id}/subtasks/metrics"

    def source_counts(self, vertex_ids: list[str]) -> tuple[int, bool, list[float | None]]:
        """(records the source vertices have read, whether any vertex said, each saying
        vertex's dump time): one request per vertex, the count summed over its subtasks."""
        total, seen, times = 0, False, []
        for vertex_id in vertex_ids:
            metric = self.source_metric(vertex_id)
            if metric is None:
                continue
            path = self._metrics_path(vertex_id)
            values = self.rest.metric_aggregates(path, [metric, *_TASK_TIME_METRICS], "sum", "avg")
            if metric in values:
                total, seen = total + int(values[metric]["sum"]), True
                times.append(self.dump_time(vertex_id, values, time.time()))
        return total, seen, times

    def dump_time(
        self, vertex_id: str, values: dict[str, dict[str, float]], received: float
    ) -> float | None:
        """Unix time of the metric dump `values` come from: the vertex's subtasks' mean RUNNING
        time plus their mean time since (busy + idle + back-pressured, ms).

        The JobManager records RUNNING when the TaskManager's report reaches it, a few ms
        after the task started counting its time: a dump dated after the answer that
        `received` it shows by how much, and the start is moved back by that, for good (the
        same dump read again then dates no later than the first time)."""
        spent = [values[m]["avg"] for m in _TASK_TIME_METRICS if "avg" in values.get(m, {})]
        started = self._started_ms(vertex_id)
        if started is None or len(spent) < len(_TASK_TIME_METRICS):
            return None
        dumped = (started + sum(spent)) / 1000
        if dumped > received:
            self._running_ms[vertex_id] = started - (dumped - received) * 1000
            dumped = received
        return dumped

    def _started_ms(self, vertex_id: str) -> float | None:
        """The mean RUNNING timestamp (ms) of the vertex's subtasks, once all of them run."""
        if vertex_id not in self._running_ms:
            path = f"/jobs/{self.job_id}/vertices/{vertex_id}/subtasktimes"
            times = self._get(path) or {}
            running = [
                int((s.get("timestamps") or {}).get("RUNNING") or 0)
                for s in times.get("subtasks", [])
            ]
            if not running or 0 in running:
                return None
            self._running_ms[vertex_id] = sum(running) / len(running)
        return self._running_ms[vertex_id]

    def input_watermarks(self, vertex_ids: list[str]) -> list[tuple[int, float | None]]:
        """Each of the (non-source) vertices' least input watermark over its subtasks, where it
        is event time (NO_WATERMARK: a subtask has received none yet), with its dump's time."""
        out = []
        for vertex_id in vertex_ids:
            wanted = [_INPUT_WATERMARK, *_TASK_TIME_METRICS]
            values = self.rest.metric_aggregates(
                self._metrics_path(vertex_id), wanted, "min", "max", "avg"
            )
            received = time.time()
            found = values.get(_INPUT_WATERMARK, {})
            if "min" not in found or "max" not in found:
                continue
            least, most = int(found["min"]), int(found["max"])
            if most > NO_WATERMARK and abs(most - received * 1000) <= _PROCESSING_TIME_WINDOW_MS:
                continue  # processing-time mini-batch markers
            out.append((least, self.dump_time(vertex_id, values, received)))
        return out

    def late_records(self, vertex_ids: list[str]) -> int | None:
        """Records dropped behind the watermark by the vertices' operators (Flink's
        `numLateRecordsDropped`, a window join's `left`/`rightNumLateRecordsDropped`), summed
        over subtasks; None when no operator counts them."""
        total, seen = 0, False
        for vertex_id in vertex_ids:
            names = [
                n
                for n in self._metric_names(vertex_id)
                if n.endswith(("numLateRecordsDropped", "NumLateRecordsDropped"))
            ]
            if not names:
                continue
            values = self.rest.metric_aggregates(self._metrics_path(vertex_id), names, "sum")
            total += sum(int(v["sum"]) for v in values.values())
            seen = True
        return total if seen else None

    def source_metric(self, vertex_id: str) -> str | None:
        """The name of a source vertex's count of records read (a file's or a topic's)."""
        if self._source_metrics.get(vertex_id) is None:
            self._source_metrics[vertex_id] = next(
                (
                    n
                    for n in self._metric_names(vertex_id)
                    if n.startswith((SOURCE_METRIC_PREFIX, KAFKA_METRIC_PREFIX))
                    and n.endswith(".numRecordsIn")
                ),
                None,
            )
        return self._source_metrics[vertex_id]

    def _metric_names(self, vertex_id: str) -> list[str]:
        """The names of the metrics the vertex's subtasks report now (an operator's appear
        once it has opened)."""
        return [m["id"] for m in self._get(self._metrics_path(vertex_id)) or []]
