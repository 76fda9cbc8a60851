"""Where the time goes on Spark: micro-batch progress reports (as `StreamingQueryProgress.json`
gives them) read into counters per part of the batch and per state operator, summarised over a
phase like Flink's vertices, the job's read, the record (no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nexmark.engines.spark.job import SparkJob
from nexmark.engines.spark.operators import batch_loads, task_slots
from nexmark.engines.spec import JobSetup
from nexmark.engines.status import VertexLoad
from nexmark.metrics.sampler import Sample
from nexmark.protocol.scoring import figures
from nexmark.results.document import dump_document, load_document
from nexmark.results.operators import OperatorLoad, bottleneck_of, summarise
from nexmark.results.query_result import QueryResult

PARTS = ("latestOffset", "walCommit", "getBatch", "queryPlanning", "addBatch", "commitOffsets")


def _at(ms: int) -> str:
    """A report's trigger start, as Spark writes it: ms after 2026-12-07T00:00:00Z."""
    return f"2026-12-07T00:00:{ms // 1000:02d}.{ms % 1000:03d}Z"


def _state(updates: int, removals: int, commit: int, updated: int, name="stateStoreSave"):
    """One `stateOperators[]` entry, every field Spark writes (2 partitions)."""
    return {
        "operatorName": name,
        "numRowsTotal": 4_000,
        "numRowsUpdated": updated,
        "allUpdatesTimeMs": updates,
        "numRowsRemoved": 10,
        "allRemovalsTimeMs": removals,
        "commitTimeMs": commit,
        "memoryUsedBytes": 1_048_576,
        "numRowsDroppedByWatermark": 0,
        "numShufflePartitions": 2,
        "numStateStoreInstances": 2,
        "customMetrics": {"rocksdbSstFileSize": 65_536},
    }


def _report(
    batch: int, start_ms: int, parts: tuple[int, ...], rows: int, sink_rows: int, state: list[dict]
) -> dict:
    """One micro-batch's progress report; `parts` the times of PARTS, ms (their sum the
    batch's)."""
    durations = dict(zip(PARTS, parts, strict=True))
    durations["triggerExecution"] = sum(parts)
    return {
        "id": "3f1c0e4a-0000-4000-8000-000000000001",
        "runId": "3f1c0e4a-0000-4000-8000-000000000002",
        "name": "q5",
        "timestamp": _at(start_ms),
        "batchId": batch,
        "batchDuration": sum(parts),
        "numInputRows": rows,
        "inputRowsPerSecond": 10_000.0,
        "processedRowsPerSecond": 10_000.0,
        "durationMs": durations,
        "eventTime": {"watermark": "2026-01-01T00:00:00.000Z"},
        "stateOperators": state,
        "sources": [{"description": "FileStreamSource[file:/data]", "numInputRows": rows}],
        "sink": {"description": "NoopTable$@5d2c", "numOutputRows": sink_rows},
    }


# A restored q5's first three batches at 2 task slots: 10 and 11 back to back, 1 s each; 12
# after a 500 ms wait for its trigger, 500 ms long. Each state operator's time is its tasks'
# (2 partitions). Then an idle trigger's report: it carries the last executed batch's id and
# no `addBatch` (no batch ran).
BATCH_10 = _report(10, 0, (10, 20, 0, 30, 900, 40), 10_000, 100, [_state(1_000, 100, 100, 500)])
BATCH_11 = _report(11, 1_000, (10, 20, 0, 30, 900, 40), 10_000, 100, [_state(1_000, 100, 100, 500)])
BATCH_12 = _report(12, 2_500, (10, 20, 0, 20, 420, 30), 5_000, 50, [_state(400, 0, 100, 250)])
IDLE = {
    **BATCH_12,
    "timestamp": _at(13_000),
    "durationMs": {"latestOffset": 2, "triggerExecution": 2},
    "numInputRows": 0,
}
# What the phase's four reads saw: the third saw no batch end since the second.
SEEN = [[BATCH_10], [BATCH_10, BATCH_11], [BATCH_10, BATCH_11], [BATCH_10, BATCH_11, BATCH_12]]


def _reads(slots: int | None = 2) -> list[list[VertexLoad]]:
    return [batch_loads(seen, slots) or [] for seen in SEEN]


def test_the_batch_parts_and_state_operators_are_counters_over_the_executed_batches():
    read = batch_loads([BATCH_10, BATCH_11, BATCH_12, IDLE], slots=2)
    assert read is not None
    assert [v.name for v in read] == [*PARTS, "stateStoreSave"]
    by_name = {v.name: v for v in read}
    # The clock: 1 s, 1 s, then 12's wait and its own time; the idle report adds nothing.
    assert {v.ran_ms for v in read} == {3_000.0}
    add = by_name["addBatch"]
    assert (add.busy_ms, add.idle_ms, add.backpressured_ms) == (2_220.0, 500.0, None)
    assert (add.records_in, add.records_out, add.parallelism) == (25_000.0, 250.0, None)
    assert by_name["walCommit"].records_in is None  # Spark counts no rows per part
    state = by_name["stateStoreSave"]
    # 2,900 ms of its tasks' time over the 2 that run at once; its rows updated come in.
    assert state == VertexLoad("state:0", "stateStoreSave", 2, 3_000.0, 1_450.0, records_in=1250)
    assert batch_loads([IDLE], slots=2) is None  # no batch ran yet
    assert batch_loads([], slots=2) is None


def test_the_phase_summary_gives_shares_of_each_second_and_the_busiest():
    operators = summarise(_reads())
    assert operators is not None
    by_name = {o.vertex: o for o in operators}
    # 2 s counted (the third read saw no batch end): addBatch took 1,320 ms of them, and no
    # batch ran for 500 ms.
    assert by_name["addBatch"] == OperatorLoad(
        "addBatch", None, 660.0, None, 250.0, 7_500.0, 75.0, 2.0
    )
    parts = [by_name[p] for p in PARTS]
    assert [p.busy for p in parts] == [10.0, 20.0, 0.0, 25.0, 660.0, 35.0]
    # A part's share of the batch time: busy / (1000 - idle); the parts fill the batches.
    assert sum(p.busy for p in parts) == 1000.0 - by_name["addBatch"].idle
    assert all(p.backpressured is None and p.idle == 250.0 for p in parts)
    assert by_name["stateStoreSave"] == OperatorLoad(
        "stateStoreSave", 2, 425.0, None, None, 375.0, None, 2.0
    )
    assert bottleneck_of(operators) == ("addBatch", 0.66)


def test_the_tasks_that_run_at_once_are_the_slots_at_most_the_partitions():
    one_slot = {o.vertex: o for o in summarise(_reads(slots=1)) or []}
    assert one_slot["stateStoreSave"].busy == 850.0  # one task at a time: twice as busy
    unknown = {o.vertex: o for o in summarise(_reads(slots=None)) or []}
    assert unknown["stateStoreSave"].busy == 425.0  # a cluster's slots unknown: the partitions
    assert task_slots(JobSetup(2, 0.1, None, {"spark.master": "local[3]"})) == 3
    assert task_slots(JobSetup(2, 0.1, None, {"spark.master": "spark://m:7077"})) is None
    assert task_slots(None) is None


def test_two_state_operators_of_a_kind_are_told_apart_and_a_lost_report_skipped():
    two = [_state(200, 0, 20, 5), _state(100, 0, 20, 5)]
    first = _report(3, 0, (5, 5, 0, 10, 300, 5), 100, -1, two)
    # Batch 4's report left Spark's last reports before a read: batch 5 counts its own time.
    later = _report(5, 2_000, (5, 5, 0, 10, 100, 5), 100, -1, two)
    read = batch_loads([first, later], slots=2)
    assert read is not None
    assert [v.name for v in read][-2:] == ["stateStoreSave", "stateStoreSave (2)"]
    assert {v.ran_ms for v in read} == {325.0 + 125.0}
    assert read[PARTS.index("addBatch")].records_out is None  # Spark does not know the sink's


class _Progress:
    """What PySpark's `recentProgress` lists: each report's batch id and its JSON."""

    def __init__(self, report: dict) -> None:
        self.batchId = report["batchId"]
        self.json = json.dumps(report)


class _Query:
    id = "3f1c0e4a-0000-4000-8000-000000000001"
    runId = "3f1c0e4a-0000-4000-8000-000000000002"

    def __init__(self) -> None:
        self.recentProgress: list[_Progress] = []


def test_the_job_reads_the_reports_it_polled(tmp_path: Path):
    query = _Query()
    job = SparkJob(query, "q5", tmp_path, {}, 9, lambda: None)
    job.setup = JobSetup(2, 0.1, None, {"spark.master": "local[2]"})
    assert job.operator_load() is None  # nothing polled yet
    query.recentProgress = [_Progress(BATCH_10), _Progress(BATCH_11)]
    job.progress()  # the sampler's watermark poll
    query.recentProgress.append(_Progress(BATCH_12))
    assert job.operator_load() == batch_loads([BATCH_10, BATCH_11], 2)  # no second poll
    query.recentProgress += [_Progress(IDLE)]  # the last batch's id again: kept as it ran
    job.progress()
    assert job.operator_load() == batch_loads([BATCH_10, BATCH_11, BATCH_12], 2)


def _sample(i: int, read: list[VertexLoad]) -> Sample:
    return Sample(100.0 + i, "benchmark", 1_000 * (i + 1), float(i), operators=tuple(read))


def test_the_result_records_them_with_none_for_what_spark_does_not_give():
    samples = [_sample(i, read) for i, read in enumerate(_reads())]
    r = QueryResult(run_id="r", engine="spark", query="q5", status="ok")
    figures.operator_loads(r, samples)
    assert (r.bottleneck, r.bottleneck_busy) == ("addBatch", 0.66)
    assert r.problems() == []
    back = load_document(json.loads(json.dumps(dump_document([r]))))[0]
    assert back == r
    assert all(o.backpressured is None for o in back.operators or [])
    assert back.operators is not None and back.operators[-1].idle is None


@pytest.mark.parametrize("master", ["local", "local[*]", "local[2, 3]", "local-cluster[2,1,1024]"])
def test_any_master_gives_slots_or_none(master):
    slots = task_slots(JobSetup(2, 0.1, None, {"spark.master": master}))
    assert slots is None or slots >= 1
