"""Where the time goes on a real Flink: q5's scored phase records each job vertex's share of
time busy, back-pressured and idle and its records per second, and names the busiest."""

from __future__ import annotations

import pytest

from nexmark.engines.flink.ddl import SOURCE_TABLE
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.results.formats import fmt_rate
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]


def _reads_events(vertex: str) -> bool:
    """The source vertex: Flink names its operator after the table it reads."""
    return vertex.startswith("Source") or f"{SOURCE_TABLE}[" in vertex


def test_q5_records_its_operators_and_their_bottleneck(flink_engine, data_root, tmp_path):
    """4M events: a benchmark part of 1M, seconds of q5 at full speed: the vertices' counters
    are read at ready and at the polls a second apart until the last two seconds."""
    params = DatasetParams(events=4_000_000, files=2)
    ds = ensure_dataset(params, out=data_root / params.dataset_id, show_progress=False)
    parts = PhaseParts.of(ds)
    options = ProtocolOptions(timeout_s=240)  # checkpoints every 30 s: the phase checkpoint stays
    display = RunDisplay(1, enabled=False)
    run = QueryRun(flink_engine, "q5", parts, tmp_path / "work", options, display)
    measured = run.execute()
    ctx = RunContext("test-run", ds, flink_engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, parts)
    assert r.status.value == "ok" and r.problems() == []

    ops = r.operators
    assert ops is not None and len(ops) >= 2, ops  # q5 is more than one chained task
    print(f"\nq5, {parts.benchmark_events:,} events at {fmt_rate(r.throughput_eps)}:")
    for op in ops:
        print(
            f"  {op.vertex} | p{op.parallelism} | busy {op.busy} | backpressured "
            f"{op.backpressured} | idle {op.idle} | in {op.records_in_per_s} /s | out "
            f"{op.records_out_per_s} /s | over {op.measured_s} s"
        )
    print(f"  bottleneck: {r.bottleneck} ({r.bottleneck_busy})")
    assert any(_reads_events(op.vertex) for op in ops), [op.vertex for op in ops]
    timed = [op for op in ops if op.busy is not None]
    assert len(timed) >= 2
    for op in ops:
        assert op.parallelism in (1, 2), op  # the shared engine's 2, or a global operator's
        for share in (op.busy, op.backpressured, op.idle):
            assert share is None or 0.0 <= share <= 1000.0, op
    for op in timed:  # busy, back-pressured and idle are the tasks' whole run time
        assert op.backpressured is not None and op.idle is not None, op
        assert op.busy + op.backpressured + op.idle == pytest.approx(1000.0, abs=5.0), op
        assert 0.0 < op.measured_s <= r.time_s + 1.0, op
    # The source read the phase's events: records went in and out of it every second.
    source = next(op for op in ops if _reads_events(op.vertex))
    assert source.records_out_per_s is not None and source.records_out_per_s > 0, source
    assert r.bottleneck in [op.vertex for op in timed]
    assert 0.0 < r.bottleneck_busy <= 1.0
    assert r.bottleneck_busy * 1000 == pytest.approx(max(op.busy for op in timed), abs=0.1)
    # Each timed vertex's busy share through the phase: points after every task ran, up to the
    # end seen (the reads stop there), each share within 0-1.
    series = {s.vertex: s.points for s in r.operator_busy or []}
    assert list(series) == [op.vertex for op in ops]
    ts = r.timestamps
    start, end = ts.t_running - ts.query_start, ts.t_end - ts.query_start
    for op in timed:
        points = series[op.vertex]
        assert points, op.vertex
        assert all(start < t <= end + 5.0 and 0.0 <= b <= 1.0 for t, b in points), points
