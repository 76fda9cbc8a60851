"""Where the time goes on a real Spark: q5's scored phase records each part of its micro-batches
(addBatch and the rest) and its state operators, each one's share of time busy, and names the
busiest; back-pressure, which a micro-batch does not have, stays None."""

from __future__ import annotations

import pytest

from nexmark.engines.spark.operators import PARTS
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.results.formats import fmt_rate
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_q5_records_its_batch_parts_state_operators_and_bottleneck(
    spark_engine, data_root, tmp_path
):
    """200K events over 40 s of event time, 8 slices a part: the benchmark part's 50K events
    in 8 micro-batches (one slice each), their reports read at ready and about once a second."""
    params = DatasetParams(events=200_000, rate=5_000, files=2, slices=8)
    ds = ensure_dataset(params, out=data_root / params.dataset_id, show_progress=False)
    parts = PhaseParts.of(ds)
    display = RunDisplay(1, enabled=False)
    options = ProtocolOptions(timeout_s=240)
    run = QueryRun(spark_engine, "q5", parts, tmp_path / "work", options, display)
    measured = run.execute()
    ctx = RunContext("test-run", ds, spark_engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, parts)
    assert r.status.value == "ok" and r.problems() == []

    ops = r.operators
    assert ops is not None, "no operators recorded"
    print(f"\nq5 on Spark, {parts.benchmark_events:,} events at {fmt_rate(r.throughput_eps)}:")
    for op in ops:
        print(
            f"  {op.vertex} | p{op.parallelism} | busy {op.busy} | idle {op.idle} | in "
            f"{op.records_in_per_s} /s | out {op.records_out_per_s} /s | over {op.measured_s} s"
        )
    print(f"  bottleneck: {r.bottleneck} ({r.bottleneck_busy})")
    by_name = {op.vertex: op for op in ops}
    assert "addBatch" in by_name, list(by_name)
    states = [op for op in ops if op.vertex not in PARTS]
    assert states, "no state operator"  # q5 aggregates in windows
    for op in ops:
        assert op.backpressured is None, op  # no such figure on Spark: None, never 0
        assert op.busy is not None and 0.0 <= op.busy <= 1000.0, op
        assert op.measured_s is not None and 0.0 < op.measured_s <= r.time_s + 1.0, op
    # The parts run one after another: with the time no batch ran, at most the whole second.
    batch_parts = [op for op in ops if op.vertex in PARTS]
    idle = by_name["addBatch"].idle
    assert idle is not None and 0.0 <= idle <= 1000.0
    assert sum(op.busy or 0.0 for op in batch_parts) + idle <= 1000.0 + 5.0
    assert by_name["addBatch"].busy > 0 and by_name["addBatch"].records_in_per_s > 0
    for op in states:  # over its 2 partitions; Spark gives no idle time per operator
        assert op.parallelism == 2 and op.idle is None and op.records_in_per_s is not None, op
    # Its windows counted bids as they came: the first aggregation updated rows every batch.
    assert max(op.records_in_per_s or 0.0 for op in states) > 0
    assert r.bottleneck in by_name
    assert r.bottleneck_busy is not None and 0.0 < r.bottleneck_busy <= 1.0
    assert r.bottleneck_busy * 1000 == pytest.approx(max(op.busy or 0.0 for op in ops), abs=0.1)
    # Each one's busy share through the phase: points between batches that ran after the job
    # was ready, up to the end seen (the reads stop there), each share within 0-1.
    series = {s.vertex: s.points for s in r.operator_busy or []}
    assert list(series) == list(by_name)
    ts = r.timestamps
    start, end = ts.t_running - ts.query_start, ts.t_end - ts.query_start
    for name, points in series.items():
        assert points, name
        assert all(start < t <= end + 5.0 and 0.0 <= b <= 1.0 for t, b in points), points
