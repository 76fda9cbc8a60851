"""The two-phase protocol on the real embedded Flink, on a small generated dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexmark.engines.spec import SinkKind, StateTtl
from nexmark.errors import UnsupportedQueryError
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.protocol.suite.calibrate import calibrate
from nexmark.verify.changelog import fold
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.feed import rate_slices
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow, pytest.mark.serial]


def _run(engine, ds, query: str, work: Path, **options):
    opts = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240, **options)
    run = QueryRun(engine, query, PhaseParts.of(ds), work, opts, RunDisplay(1, enabled=False))
    return run, run.execute()


@pytest.fixture(scope="module")
def plain_run(flink_engine, small_dataset, tmp_path_factory):
    """A query's protocol run on the small dataset with the default options, made once for the
    module: the field test and the source ceiling's test both read q0's (a run costs seconds
    of JVM). Gives (run, measured, its work directory)."""
    done: dict[str, tuple] = {}

    def run_once(query: str) -> tuple:
        if query not in done:
            work = tmp_path_factory.mktemp(f"protocol-{query}") / "work"
            done[query] = (*_run(flink_engine, small_dataset, query, work), work)
        return done[query]

    return run_once


# Stateless, windowed, join, top-N: the four shapes of state the issue names.
@pytest.mark.parametrize("query", ["q0", "q5", "q20", "q19"])
def test_every_result_field_is_present_and_coherent(flink_engine, small_dataset, plain_run, query):
    run, measured, work = plain_run(query)
    ctx = RunContext("test-run", small_dataset, flink_engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, PhaseParts.of(small_dataset))

    assert r.status.value == "ok" and r.problems() == []
    assert r.events_warmup + r.events_benchmark == small_dataset.events == r.events_total
    # every benchmark event was read by the restored job, none more
    assert measured.benchmark_events_seen == r.events_benchmark
    assert r.time_s > 0 and r.throughput_eps == pytest.approx(r.events_benchmark / r.time_s)
    assert r.cores > 0 and r.throughput_per_core == pytest.approx(r.throughput_eps / r.cores)
    # sources may read before every downstream task runs, so t_first can precede t_running
    assert 0 < r.recovery_time_s < 120 and 0 < r.time_to_first_event_s < 120
    ts = r.timestamps
    assert ts.query_start < ts.warmup_start < ts.warmup_end < ts.t_submit < ts.t_running
    assert ts.t_running < ts.t_end
    # the restore is confirmed, from the phase checkpoint
    assert r.restored_from and r.phase_checkpoint.id is not None
    assert r.phase_checkpoint.duration_s is not None and r.phase_checkpoint.duration_s >= 0
    assert r.phase_checkpoint.checkpointed_bytes is not None
    assert r.phase_checkpoint.state_bytes is not None and r.state_bytes_end is not None
    if query != "q0":  # stateful queries carry state across the restore
        assert r.phase_checkpoint.state_bytes > 0
        # and their logical size is measured at the cut and at the end (canonical savepoints)
        assert r.state_logical_bytes_start > 0 and r.state_logical_bytes_end > 0
    # A savepoint is listed as no checkpoint: each phase's last is its phase or end one.
    for phase, kind in (("warmup", "phase"), ("benchmark", "end")):
        listed = [e for e in r.checkpoint_events if e.phase == phase]
        assert max(listed, key=lambda e: e.id).kind == kind, listed
    # the time series covers both phases, and the checkpoints are marked
    phases = {s.phase for s in r.timeseries}
    assert {"warmup", "benchmark"} <= phases
    kinds = {(e.phase, e.kind) for e in r.checkpoint_events}
    assert ("warmup", "phase") in kinds and ("benchmark", "end") in kinds
    # the work dir (checkpoints) is cleaned up
    assert not work.exists()
    # each phase's job is recorded as it was submitted: the protocol's interval, 2 readers
    for phase in ("warmup", "benchmark"):
        submitted = r.job_options[phase]
        assert submitted["execution.checkpointing.interval"] == "2000 ms"
        assert submitted["parallelism.default"] == "2"
    assert "execution.state-recovery.path" in r.job_options["benchmark"]
    # the restored job reads at once (no 1 s directory scan in the scored time)
    assert r.first_read_gap_s is not None and r.first_read_gap_s < 1.0
    if query in ("q0", "q20"):  # no event-time operator (q20: a regular join), no watermark
        assert r.watermark_lag_max_s is None
    else:  # the watermark follows the data: the 4 s delay, mini-batch and polling lag only
        assert r.watermark_lag_max_s is not None and 0 < r.watermark_lag_max_s < 12


def test_state_carries_over_the_restore(flink_engine, small_dataset, tmp_path):
    """q15 counts bids per day: after the restore its count includes the warm-up's bids."""
    opts = {"sink": SinkKind.COLLECT, "collect_dir": tmp_path / "rows"}
    run, _ = _run(flink_engine, small_dataset, "q15", tmp_path / "work", **opts)
    table = fold(run.benchmark_job.collected_rows())
    rows = table.row_list()
    assert not table.orphans
    assert len(rows) == 1  # one day of event time
    total_bids = rows[0][1]
    all_bids = small_dataset.counts["bid"]
    benchmark_bids = sum(f.counts["bid"] for f in small_dataset.files("benchmark"))
    assert benchmark_bids < all_bids
    assert total_bids == all_bids  # a lost state would count only the benchmark part's bids


def test_phases_cannot_be_skipped():
    from nexmark.protocol.query.phases import Phase, PhaseOrderError, PhaseTracker

    tracker = PhaseTracker()
    tracker.enter(Phase.WARMUP)
    with pytest.raises(PhaseOrderError):
        tracker.enter(Phase.BENCHMARK)  # no checkpoint, no restore: refused
    tracker.enter(Phase.FAILED)  # failing is always allowed
    assert tracker.phase is Phase.FAILED


def test_the_source_ceiling_reads_the_benchmark_part_once(
    flink_engine, small_dataset, plain_run, tmp_path
):
    """The calibration job: the benchmark part through the queries' source, read and dropped."""
    parts = PhaseParts.of(small_dataset)
    opts = ProtocolOptions(checkpoint_interval_s=2.0, timeout_s=240)
    source = calibrate(flink_engine, parts, tmp_path / "source", opts)
    assert source.status == "ok", source.reason
    assert source.events == parts.benchmark_events and source.parallelism == 2
    assert source.time_s > 0 and source.throughput_eps == pytest.approx(
        parts.benchmark_events / source.time_s
    )
    assert source.cores > 0 and source.throughput_per_core == pytest.approx(
        source.throughput_eps / source.cores
    )
    assert not (tmp_path / "source").exists()
    # Every result of the sitting records it, and how close the query came to it.
    run, measured, _ = plain_run("q0")
    ctx = RunContext("test-run", small_dataset, flink_engine.info(), collect_machine(), {}, source)
    r = build_result(ctx, measured, run.sampler, parts)
    assert r.source == source and r.problems() == []
    assert r.source_ratio == pytest.approx(r.throughput_eps / source.throughput_eps)
    # An engine that cannot run it leaves the queries without a ceiling, with the reason.
    unsupported = calibrate(_NoSourceOnly(flink_engine), parts, tmp_path / "x", opts)
    assert unsupported.status == "unsupported" and "source-only" in unsupported.reason


class _NoSourceOnly:
    def __init__(self, engine):
        self.engine = engine

    def job_setup(self, spec):
        return self.engine.job_setup(spec)

    def submit(self, spec):
        raise UnsupportedQueryError("this engine has no source-only jobs")


def test_live_state_is_sampled_through_both_phases(flink_engine, data_root, tmp_path):
    """q20 (a join holding 3 s of bids) on 4M events: RocksDB's own measure of the live state
    is read about once a second in both phases, with real values in each.

    Flink refreshes its state gauges every 5 s, and a new gauge's first value comes 5-10 s
    after the job creates it (its ViewUpdater adds new views after a round of updates): a
    phase under 10 s may see none. The warm-up's 3M events take 15 s and more; the benchmark
    part's 1M is fed at 50K events/s, 20 s whatever the machine's speed."""
    rate = 50_000.0
    params = DatasetParams(events=4_000_000, files=2, benchmark_slices=rate_slices(1_000_000, rate))
    ds = ensure_dataset(params, out=data_root / params.dataset_id, show_progress=False)
    run, measured = _run(
        flink_engine, ds, "q20", tmp_path / "work", state_ttl=StateTtl(3.0), rate=rate
    )
    ctx = RunContext("test-run", ds, flink_engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, PhaseParts.of(ds))

    assert r.status.value == "ok" and r.problems() == []
    for phase in ("warmup", "benchmark"):  # the runner turned the metrics on, and says so
        options = r.job_options[phase]
        for prop in ("estimate-live-data-size", "estimate-num-keys", "total-sst-files-size"):
            assert options[f"state.backend.rocksdb.metrics.{prop}"] == "true"
        live = [p for p in r.live_state if p.phase == phase and p.bytes is not None]
        assert len(live) >= 2, phase
        gaps = [b.t - a.t for a, b in zip(live, live[1:], strict=False)]
        assert max(gaps) < 2.0, (phase, gaps)  # read about once a second
        assert max(p.bytes for p in live) > 0 and max(p.keys for p in live) > 0, phase
    assert r.state_live_bytes_end > 0 and r.state_live_keys_end > 0
    if r.state_measure == "live bytes":  # three refreshes or more in the benchmark phase
        assert r.state_growth == pytest.approx(r.state_live_end / r.state_live_start)
    else:  # fewer: the checkpoints' ratio, marked as such
        assert r.state_measure == "checkpoint size" and r.state_growth == r.checkpoint_growth
    # The checkpoint's size stays what it is, beside it.
    assert r.checkpoint_growth == pytest.approx(r.state_bytes_end / r.state_bytes_start)
    # A job writing latency stamps (a file sink that commits on every completed snapshot)
    # takes no savepoint for the logical size: one before its cancel failed such a job.
    assert r.state_logical_bytes_start is None and r.state_logical_bytes_end is None
