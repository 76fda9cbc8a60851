"""Where the time goes: a phase's reads of each vertex's counters summarised per operator, the
bottleneck, Flink's REST answer read into counters, the sampler's reads, the record (no JVM)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from nexmark.engines.flink.operators import RECORDS, TIMES, VertexLoads
from nexmark.engines.status import EventCount, VertexLoad, WatermarkRead
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.scoring import figures
from nexmark.results.document import dump_document, load_document
from nexmark.results.operators import OperatorLoad, bottleneck_of, bottleneck_text, summarise
from nexmark.results.query_result import QueryResult
from operator_reads import READS, SINK, SOURCE, WINDOW, vertex_read


def test_each_vertex_is_summarised_over_the_phase_and_the_busiest_named():
    source, window, sink = summarise(READS)
    # 2 s of run time counted (the repeated dump adds none): each counter's advance per second.
    assert source == OperatorLoad(SOURCE, 2, 800.0, 100.0, 100.0, 100_000.0, 100_000.0, 2.0)
    # The busy time read high at one read is taken back at the next: 1350 ms busy in 2 s.
    assert window == OperatorLoad(WINDOW, 2, 675.0, 0.0, 325.0, 100_000.0, 10.0, 2.0)
    assert window.busy + window.backpressured + window.idle == 1000.0
    # No run time: no figure at all, never zeros.
    assert sink == OperatorLoad(SINK, 1)
    assert bottleneck_of([source, window, sink]) == (SOURCE, 0.8)


def test_an_interval_across_a_restart_is_left_out():
    old = vertex_read("v1", SOURCE, 10_000, 9_000, 0, 1_000, 500_000, 500_000)
    # A new attempt seen first after it had run longer than the old one: its count fell.
    longer = vertex_read("v1", SOURCE, 12_000, 10_000, 0, 2_000, 30_000, 30_000)
    on = vertex_read("v1", SOURCE, 13_000, 10_600, 0, 2_400, 80_000, 80_000)
    # Another one seen early: its run time went back.
    early = vertex_read("v1", SOURCE, 500, 400, 0, 100, 1_000, 1_000)
    later = vertex_read("v1", SOURCE, 1_500, 1_000, 0, 500, 51_000, 51_000)
    (op,) = summarise([[old], [longer], [on], [early], [later]])
    # Only each attempt's own intervals count: 2 s, 1.2 s of it busy, 100,000 records.
    assert (op.busy, op.idle, op.records_in_per_s, op.measured_s) == (600.0, 400.0, 50_000.0, 2.0)


def test_no_reads_is_no_operators_and_a_tie_goes_upstream():
    assert summarise([]) is None  # an engine that reports none: absent, not zeros
    assert bottleneck_of(None) == (None, None)
    assert bottleneck_of([OperatorLoad("a"), OperatorLoad("b")]) == (None, None)
    tie = [OperatorLoad("up", busy=500.0), OperatorLoad("down", busy=500.0)]
    assert bottleneck_of(tie) == ("up", 0.5)
    assert bottleneck_text("Window[4]", 0.915) == "Window[4] 92% busy"
    assert bottleneck_text("x" * 60, None, width=10) == "x" * 9 + "…"
    assert bottleneck_text(None, None) == "-"


class _Rest:
    """Flink's REST answers for a job of two vertices, as the aggregated subtask metrics
    endpoint gives them (a NaN where busy time measurement is off, a number as text)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict]] = []

    def __call__(self, path: str, **params: str):
        self.requests.append((path, params))
        if path == "/jobs/j1":
            vertices = [
                {"id": "v1", "name": SOURCE, "parallelism": 2},
                {"id": "v2", "name": SINK, "parallelism": 1},
            ]
            return {"vertices": vertices}
        if path.endswith("/v1/subtasks/metrics"):
            return [
                {"id": "accumulateBusyTimeMs", "avg": 1200.5, "sum": 2401.0, "max": 1300.0},
                {"id": "accumulateBackPressuredTimeMs", "avg": 100.0, "sum": 200.0},
                {"id": "accumulateIdleTimeMs", "avg": 700.0, "sum": 1400.0},
                {"id": "numRecordsIn", "avg": 2500.0, "sum": 5000.0},
                {"id": "numRecordsOut", "avg": 2000.0, "sum": 4000.0},
            ]
        return [
            {"id": "accumulateBusyTimeMs", "avg": float("nan"), "sum": float("nan")},
            {"id": "accumulateIdleTimeMs", "avg": 900.0, "sum": 900.0},
            {"id": "numRecordsIn", "sum": "12"},
        ]


def test_flink_counters_are_read_per_vertex_in_one_request_each():
    rest = _Rest()
    reader = VertexLoads(rest, "j1")
    first = reader.read()
    assert first == [
        VertexLoad("v1", SOURCE, 2, 2000.5, 1200.5, 100.0, 700.0, 5000.0, 4000.0),
        # Busy time off: no run time and no busy figure; what Flink gives is kept.
        VertexLoad("v2", SINK, 1, None, None, None, 900.0, 12.0, None),
    ]
    reader.read()
    paths = [p for p, _ in rest.requests]
    assert paths.count("/jobs/j1") == 1  # the vertices are asked once per job
    metrics = [params for p, params in rest.requests if p.endswith("/subtasks/metrics")]
    assert len(metrics) == 4  # one request per vertex and read
    assert all(m == {"get": ",".join(TIMES + RECORDS), "agg": "avg,sum"} for m in metrics)


class _Job:
    """What the sampler asks of a job; records the order of the calls."""

    id = "j1"

    def __init__(self, clock: list[float]) -> None:
        self.calls: list[str] = []
        self.clock = clock

    def operator_load(self):
        self.calls.append("operators")
        self.clock[0] += 0.15
        return READS[0]

    def events_emitted_at(self):
        self.calls.append("count")
        return EventCount(10)

    def watermark_at(self):
        return WatermarkRead(None)

    def live_state(self):
        return None


class _Engine:
    def cpu_seconds(self) -> float:
        return 1.0


def test_the_sampler_reads_operators_about_once_a_second_within_the_wait():
    now = [0.0]
    job = _Job(now)  # a read takes 0.15 s
    sampler = Sampler(_Engine(), interval_s=1.0, clock=lambda: now[0])
    sampler.sample(job, "benchmark", force=True)
    assert "operators" not in job.calls  # a sample alone reads none
    assert sampler.read_operators(job) == 0.0  # the phase's first poll: read now
    assert sampler.samples[-1].operators == tuple(READS[0])
    now[0] = 0.3
    sampler.sample(job, "benchmark", force=True)
    assert sampler.read_operators(job, 1.0) == 1.0  # read 0.3 s ago: not again
    now[0] = 1.4
    sampler.sample(job, "benchmark", force=True)
    assert sampler.read_operators(job, 0.2) == 0.2  # the next poll too near for a read
    assert [s.operators is not None for s in sampler.samples] == [True, False, False]
    now[0] = 1.5
    sampler.sample(job, "benchmark", force=True)
    # Read, and the wait shortened by its time: the next poll comes when it would have.
    assert sampler.read_operators(job, 1.0) == pytest.approx(0.85)
    assert sampler.samples[-1].operators == tuple(READS[0])
    assert job.calls.count("operators") == 2


def test_the_result_records_them_and_keeps_them_through_its_file():
    raw = [dataclasses.replace(_sample(i), operators=tuple(read)) for i, read in enumerate(READS)]
    r = QueryResult(run_id="r", engine="flink", query="q5", status="ok")
    figures.operator_loads(r, [_sample(-1, "warmup"), *raw])
    assert r.operators == summarise(READS)
    assert (r.bottleneck, r.bottleneck_busy) == (SOURCE, 0.8)
    assert r.problems() == []
    back = load_document(json.loads(json.dumps(dump_document([r]))))[0]
    assert back == r and back.operators[1].busy == 675.0
    r.bottleneck = WINDOW  # not what its operators say
    assert any("bottleneck" in p for p in r.problems())
    # A result of an engine without operators (or of an older schema) keeps them null.
    none = QueryResult(run_id="r", engine="spark", query="q5", status="ok")
    figures.operator_loads(none, [_sample(0)])
    assert none.operators is None and none.bottleneck is None and none.problems() == []
    doc = dump_document([none])
    doc["schema_version"] = 17
    for rec in doc["results"]:
        for name in ("operators", "bottleneck", "bottleneck_busy"):
            del rec[name]
    assert load_document(doc)[0] == none


def _sample(i: int, phase: str = "benchmark"):
    from nexmark.metrics.sampler import Sample

    return Sample(wall=100.0 + i, phase=phase, events=1000 * (i + 1), cpu_s=float(i))


@pytest.mark.parametrize("name", ["operators", "bottleneck", "bottleneck_busy"])
def test_the_new_fields_are_in_the_json_only_where_they_belong(name):
    from nexmark.results.store import csv_columns

    columns = [c for c, _ in csv_columns()]
    assert (name in columns) == (name != "operators")  # a list: JSON only
