"""The protocol on the scripted fake engine: phase order, restore proof, timeouts, failures,
failure isolation, resume, Ctrl-C and result derivation, in seconds and without a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_engine import FakeEngine, FakeWorld, Script
from fake_runs import fake_run
from nexmark.engines.base import NO_TTL, LiveState, SinkKind, StateTtl
from nexmark.errors import EngineError, Interrupted, NexmarkError, QueryTimeoutError, UsageError
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.preparation.plan import planned_setups
from nexmark.protocol.query.phases import Phase
from nexmark.protocol.query.proofs import (
    EventTimeStalledError,
    LateRecordsError,
    ReaderSkewError,
)
from nexmark.protocol.scoring.record import RunContext, build_result
from nexmark.protocol.suite.runner import SuiteRun, run_suite
from nexmark.results.store import ResultStore
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """4,000 events (3,000 warm-up, 1,000 benchmark), 2 files per part."""
    params = DatasetParams(events=4000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("fake-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _query_run(dataset, tmp_path, scripts=None, query="q3", **options):
    world = FakeWorld(scripts or {})
    fake = fake_run(dataset, tmp_path / "work", query=query, world=world, **options)
    return fake.run, fake.world, fake.engine


def test_phases_run_in_order_and_the_benchmark_job_restores_the_phase_snapshot(dataset, tmp_path):
    run, world, engine = _query_run(dataset, tmp_path)
    measured = run.execute()

    snapshot = measured.phase_checkpoint.snapshot
    assert world.log[1:] == [
        ("submit", "q3", "warmup", None),
        ("checkpoint", "q3", "warmup"),
        ("cancel", "q3", "warmup"),
        ("submit", "q3", "benchmark", snapshot.ref),  # the handle, passed back unchanged
        ("checkpoint", "q3", "benchmark"),
        ("cancel", "q3", "benchmark"),
    ]
    started = measured.phases
    order = [p.value for p in Phase if p.value in started]
    assert order == ["warmup", "phase-checkpoint", "stop", "restore", "benchmark",
                     "end-checkpoint", "cleanup", "done"]  # fmt: skip
    assert [started[p] for p in order] == sorted(started[p] for p in order)
    assert measured.restored_from == snapshot.ref
    assert all(job.canceled for job in engine.jobs)
    assert not (tmp_path / "work").exists()  # checkpoints removed


def test_results_are_derived_from_what_the_engine_reports(dataset, tmp_path):
    script = Script(ready_s=2.0, eps=1000.0, cores=1.5, checkpoint_s=0.5, bytes_per_event=10)
    run, _, engine = _query_run(dataset, tmp_path, {"q3": script})
    measured = run.execute()
    ctx = RunContext("run-1", dataset, engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, PhaseParts.of(dataset))

    assert r.status.value == "ok" and r.problems() == []
    assert (r.events_warmup, r.events_benchmark) == (3000, 1000)
    # Ready 2 s after the submission, seen by a poll every 50 ms.
    assert r.recovery_time_s == pytest.approx(2.0, abs=0.06)
    # 1,000 events at 1,000 events/s, then the end checkpoint's 0.5 s (its acknowledgement).
    assert r.time_s == pytest.approx(1.5, abs=0.1)
    assert r.throughput_eps == pytest.approx(1000 / r.time_s)
    assert r.cores == pytest.approx(1.5)
    assert r.throughput_per_core == pytest.approx(r.throughput_eps / 1.5)
    # The phase checkpoint holds one part's events, the end checkpoint two parts' worth.
    assert r.state_bytes_start == 10 * 3000 and r.state_bytes_end == 10 * 1000 * 2
    assert r.state_growth == pytest.approx(20_000 / 30_000)
    assert r.restored_from and r.restored_from.endswith("chk-1")
    assert r.job_options["benchmark"]["fake.restore"] == r.restored_from
    assert "fake.restore" not in r.job_options["warmup"]
    assert r.state_bound and r.state_bound.startswith(("fake TTL", "nothing"))  # the engine's words
    kinds = {(e.phase, e.kind) for e in r.checkpoint_events}
    assert kinds == {("warmup", "phase"), ("benchmark", "end")}
    ts = r.timestamps
    assert ts.warmup_start < ts.warmup_end < ts.t_submit < ts.t_running <= ts.t_first < ts.t_end


def _state_result(dataset, tmp_path, live, eps=250.0, logical=None, log=None, **options):
    """q3 on the fake with a benchmark phase of 4 s (1,000 events at 250/s), checkpoints that
    double their size over it (files: dead entries), the live state `live` gives and the
    logical sizes `logical` gives; `log` gets the engine's calls."""
    script = Script(eps=eps, checkpoint_s=0.2, bytes_per_event=10, live=live, logical=logical)
    run, _, engine = _query_run(dataset, tmp_path, {"q3": script}, **options)
    measured = run.execute()
    if log is not None:
        log.extend(engine.world.log)
    ctx = RunContext("run-1", dataset, engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, PhaseParts.of(dataset))
    assert r.status.value == "ok" and r.problems() == []
    return r


def test_growth_is_judged_on_the_live_state_trend_not_on_checkpoint_files(dataset, tmp_path):
    # The live state holds 5 MB (noise of +-5% read to read); the checkpoint files grow.
    def flat(phase, t):
        return LiveState(bytes=int(5e6 * (1 + 0.05 * (-1) ** int(t))), keys=50_000)

    r = _state_result(dataset, tmp_path, flat)
    assert r.checkpoint_growth == pytest.approx(20_000 / 30_000)  # kept, as what it is
    assert r.state_measure == "live bytes"
    assert r.state_growth == pytest.approx(1.0, abs=0.1) and r.state_steady is True
    assert r.state_growth == pytest.approx(r.state_live_end / r.state_live_start)
    assert r.state_live_keys_end == 50_000 and r.state_live_bytes_end in (4_750_000, 5_250_000)
    # Live state is recorded through both phases, about once a second.
    for phase in ("warmup", "benchmark"):
        points = [p for p in r.live_state if p.phase == phase and p.bytes is not None]
        assert len(points) >= 2, phase
        times = [p.t for p in points]
        assert all(b - a <= 1.3 for a, b in zip(times, times[1:], strict=False)), times


def test_reads_before_a_restored_jobs_first_refresh_are_no_points(dataset, tmp_path):
    # Flink's gauges read 0 until their first refresh; then each refresh repeats for 1 s.
    def gauges(phase, t):
        return LiveState(0, 0) if t < 1.5 else LiveState(1000 + 10 * int(t), 10)

    r = _state_result(dataset, tmp_path, gauges, eps=125.0)  # an 8 s phase
    assert r.state_measure == "live bytes" and r.state_live_start >= 1010
    assert r.state_growth == pytest.approx(1.0, abs=0.05) and r.state_steady is True


def test_a_growing_live_state_is_not_steady_and_says_on_what(dataset, tmp_path):
    def growing(phase, t):  # the benchmark phase's state grows 25% a second
        return LiveState(bytes=int(1e6 * (1 + 0.25 * t)) if phase == "benchmark" else 10**6,
                         keys=None)  # fmt: skip

    r = _state_result(dataset, tmp_path, growing)
    assert r.state_measure == "live bytes" and r.state_steady is False
    assert r.state_growth > 1.5 and r.state_trend_per_s > 0.1
    assert "over the benchmark phase (live bytes)" in r.steady_reason


def test_live_bytes_that_grow_over_flat_entries_say_so(dataset, tmp_path):
    # The memtables fill with a window's inserts and deletes: bytes grow, entries do not.
    def filling(phase, t):
        return LiveState(bytes=int(1e6 * (1 + 0.25 * t)), keys=50_000 + int(t) % 2)

    r = _state_result(dataset, tmp_path, filling)
    assert r.state_measure == "live bytes" and r.state_steady is False
    assert "its entries grew 1.00x" in r.steady_reason and "memtables" in r.steady_reason
    # Entries that grow with the bytes add nothing.
    r = _state_result(
        dataset, tmp_path / "both", lambda p, t: LiveState(int(1e6 * (1 + t)), int(1e4 * (1 + t)))
    )
    assert r.state_steady is False and "memtables" not in r.steady_reason


def test_reads_that_only_saw_the_memtables_fill_are_no_trend(dataset, tmp_path):
    # A restored LSM store: its files hold 1 MB at every read while its memtables fill with
    # the phase's writes (25%/s of the files). Without a flush that fill is not the state.
    def filling(phase, t):
        memory = int(1e6 * 0.25 * t)
        return LiveState(10**6 + memory, 50_000 + int(t), files_bytes=10**6, memory_bytes=memory)

    r = _state_result(dataset, tmp_path / "fill", filling)
    assert r.state_live_unflushed is True and r.state_measure == "checkpoint size"
    assert r.state_growth == r.checkpoint_growth and r.state_steady is True
    assert r.state_live_bytes_end is not None  # still recorded as read

    # The same fill flushed every 2 s (the files take the memtables): a trend is drawn.
    def flushing(phase, t):
        memory = int(1e6 * 0.25 * (t % 2))
        files = 10**6 + int(1e6 * 0.5 * (t // 2))
        return LiveState(files + memory, 50_000, files_bytes=files, memory_bytes=memory)

    r = _state_result(dataset, tmp_path / "flush", flushing)
    assert r.state_live_unflushed is False and r.state_measure == "live bytes"
    assert r.state_steady is False and "(live bytes)" in r.steady_reason


def _memtables_filling(phase, t):
    memory = int(1e6 * 0.25 * t)
    return LiveState(10**6 + memory, 50_000, files_bytes=10**6, memory_bytes=memory)


def test_without_a_live_trend_the_logical_sizes_judge_the_growth(dataset, tmp_path):
    # The reads are memtables (no trend); the state written once is 2.0 MB, then 2.1 MB.
    sizes = {"warmup": 2_000_000, "benchmark": 2_100_000}
    log = []
    r = _state_result(dataset, tmp_path / "a", _memtables_filling, logical=sizes.get, log=log)
    assert r.state_live_unflushed is True and r.state_measure == "logical size"
    assert r.state_logical_bytes_start == 2_000_000 and r.state_logical_bytes_end == 2_100_000
    assert r.state_growth == pytest.approx(1.05) and r.state_steady is True
    assert r.checkpoint_growth == pytest.approx(20_000 / 30_000)  # kept, as what it is
    # Measured once after each phase's checkpoint, before the job stops.
    calls = [e for e in log if e[0] in ("checkpoint", "logical", "cancel")]
    assert [e[0] for e in calls] == ["checkpoint", "logical", "cancel"] * 2
    # Grown 1.5x: not steady, said on what, and why the live reads were not judged.
    grown = {"warmup": 2_000_000, "benchmark": 3_000_000}
    r = _state_result(dataset, tmp_path / "b", _memtables_filling, logical=grown.get)
    assert r.state_steady is False and r.state_growth == pytest.approx(1.5)
    assert "(logical size)" in r.steady_reason and "memtables" in r.steady_reason
    # A live trend, where there is one, still comes first.
    r = _state_result(
        dataset, tmp_path / "c", lambda p, t: LiveState(10**6, 1000 + round(t)), logical=grown.get
    )
    assert r.state_measure == "live bytes" and r.state_growth == pytest.approx(1.0)
    assert r.state_steady is True and r.state_logical_bytes_end == 3_000_000


def test_a_logical_size_not_measured_leaves_the_checkpoints(dataset, tmp_path, monkeypatch):
    def failing_at_end(phase):
        if phase == "benchmark":
            raise EngineError("savepoint failed: No space left on device")
        return 2_000_000

    r = _state_result(dataset, tmp_path / "a", None, logical=failing_at_end)
    assert r.state_logical_bytes_start == 2_000_000 and r.state_logical_bytes_end is None
    assert r.state_measure == "checkpoint size" and r.state_growth == r.checkpoint_growth
    # A state above the bound is not written again at the cut (nor at the end).
    monkeypatch.setattr("nexmark.protocol.query.query_run.LOGICAL_MAX_BYTES", 1_000)
    log = []
    r = _state_result(dataset, tmp_path / "b", None, logical=lambda p: 5, log=log)
    assert not any(e[0] == "logical" for e in log)
    assert r.state_logical_bytes_start is None and r.state_measure == "checkpoint size"
    # Nor in a verification run: its sink commits rows on a finished snapshot.
    monkeypatch.undo()
    log.clear()
    r = _state_result(
        dataset, tmp_path / "c", None, logical=lambda p: 5, log=log, sink=SinkKind.COLLECT
    )
    assert not any(e[0] == "logical" for e in log) and r.state_logical_bytes_end is None


def test_keys_serve_where_there_are_no_live_bytes_and_checkpoints_where_nothing(dataset, tmp_path):
    r = _state_result(dataset, tmp_path / "keys", lambda phase, t: LiveState(None, 1000 + round(t)))
    assert r.state_measure == "live keys" and r.state_growth == pytest.approx(1.0, abs=0.01)
    # A state that reads the same at every refresh gives one point, not a trend.
    r = _state_result(dataset, tmp_path / "same", lambda phase, t: LiveState(None, 1000))
    assert r.state_measure == "checkpoint size" and r.state_live_keys_end == 1000
    r = _state_result(dataset, tmp_path / "none", None)
    assert r.state_measure == "checkpoint size" and r.live_state == []
    assert r.state_growth == r.checkpoint_growth == pytest.approx(20_000 / 30_000)
    assert r.state_live_bytes_end is None and r.state_live_start is None


@pytest.mark.parametrize(
    "restore, message",
    [("silent", "reports no restored state"), ("other", "not from the phase checkpoint")],
)
def test_a_restore_the_engine_does_not_confirm_fails_the_query(dataset, tmp_path, restore, message):
    run, _, engine = _query_run(dataset, tmp_path, {"q3": Script(restore=restore)})
    with pytest.raises(EngineError, match=message):
        run.execute()
    assert run.tracker.phase is Phase.FAILED
    assert all(job.canceled for job in engine.jobs)  # nothing left running
    assert not (tmp_path / "work").exists()


def test_a_job_that_never_gets_ready_times_out(dataset, tmp_path):
    run, _, engine = _query_run(
        dataset, tmp_path, {"q3": Script(never_ready_in="benchmark")}, timeout_s=60
    )
    with pytest.raises(QueryTimeoutError, match="within 60 s \\(in phase restore\\)"):
        run.execute()
    assert all(job.canceled for job in engine.jobs)


def test_a_failed_job_and_a_failed_checkpoint_give_the_engines_reason(dataset, tmp_path):
    run, _, _ = _query_run(dataset, tmp_path, {"q3": Script(fail_in="warmup")})
    with pytest.raises(EngineError, match="job failed in phase warmup: scripted failure"):
        run.execute()
    run, _, _ = _query_run(dataset, tmp_path, {"q3": Script(checkpoint_fails=True)})
    with pytest.raises(EngineError, match="checkpoint 1 of job fake-0 failed"):
        run.execute()


def test_a_benchmark_phase_whose_event_time_stalled_is_not_a_measurement(dataset, tmp_path):
    # A first watermark 2 s late is waited for after the scored phase; one that never comes
    # fails the query: its windows never fired.
    run, _, _ = _query_run(dataset, tmp_path, {"q3": Script(watermark_after_s=2.0)})
    assert run.execute().t_end is not None
    stalled = Script(watermark_after_s=2.0, watermark_stalls=1)
    run, _, engine = _query_run(dataset, tmp_path, {"q3": stalled})
    with pytest.raises(EventTimeStalledError, match="windows never fired"):
        run.execute()
    assert all(job.canceled for job in engine.jobs)


def test_a_benchmark_phase_that_dropped_late_records_is_not_a_measurement(dataset, tmp_path):
    # Windows fired without the dropped events: the phase did not do the query's work.
    run, _, engine = _query_run(dataset, tmp_path, {"q3": Script(late_dropped=94)})
    with pytest.raises(LateRecordsError, match="dropped 94 records behind the watermark"):
        run.execute()
    assert all(job.canceled for job in engine.jobs)
    run, _, _ = _query_run(dataset, tmp_path, {"q3": Script(late_dropped=0)})  # none: valid
    assert run.execute().t_end is not None


def test_the_parts_files_are_known_so_each_reader_can_be_checked(dataset):
    parts = PhaseParts.of(dataset)
    for part, events in (("warmup", parts.warmup_events), ("benchmark", parts.benchmark_events)):
        files = parts.file_events[part]
        assert len(files) == 2 and sum(files) == events
        assert files == [f.events for f in dataset.files(part)]


@pytest.mark.parametrize("phase", ["warmup", "benchmark"])
def test_a_phase_whose_reader_read_every_file_is_not_valid(dataset, tmp_path, phase):
    # Each reader must read exactly one file: one that read two went back in event time.
    run, _, engine = _query_run(dataset, tmp_path, {"q3": Script(one_reader_in=phase)})
    with pytest.raises(ReaderSkewError, match=r"read \[\d+, 0\] events where .* hold"):
        run.execute()
    assert all(job.canceled for job in engine.jobs)
    run, _, _ = _query_run(dataset, tmp_path)  # one file each: valid
    assert run.execute().t_end is not None


def _suite(dataset, results: Path, queries: list[str], resume: bool = False) -> SuiteRun:
    options = ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01)
    return SuiteRun(queries, dataset, results, options, resume=resume, show_progress=False)


def test_a_failing_query_is_recorded_and_the_engine_restarted_for_the_next(dataset, tmp_path):
    world = FakeWorld({"q1": Script(die_in="benchmark"), "q3": Script(fail_in="warmup")})
    got = run_suite(
        _suite(dataset, tmp_path / "r", ["q1", "q2", "q3", "q6"]), lambda: FakeEngine(world)
    )
    by_query = {r.query: r for r in got}
    assert by_query["q1"].status.value == "failed" and "died" in by_query["q1"].reason
    assert by_query["q2"].status.value == "ok" and by_query["q2"].throughput_eps > 0
    assert by_query["q3"].status.value == "failed" and "scripted failure" in by_query["q3"].reason
    assert by_query["q6"].status.value == "unsupported"
    assert by_query["q6"].reason == "fake has no implementation of q6"
    # q1 and q3 each broke an engine: three engines, every one closed.
    assert len(world.engines) == 3 and all(e.closed for e in world.engines)
    assert not (tmp_path / "r" / "work").exists()


def test_resume_runs_only_what_is_missing(dataset, tmp_path):
    world = FakeWorld()
    results = tmp_path / "r"
    first = run_suite(_suite(dataset, results, ["q0", "q1"]), lambda: FakeEngine(world))
    with pytest.raises(NexmarkError, match="--resume"):
        run_suite(_suite(dataset, results, ["q0", "q1", "q2"]), lambda: FakeEngine(world))
    world.log.clear()
    again = run_suite(
        _suite(dataset, results, ["q0", "q1", "q2"], resume=True), lambda: FakeEngine(world)
    )
    # the resumed sitting measures its own source ceiling (a fresh engine: one unscored read,
    # then the timed one), then only q2 runs
    assert [e[1] for e in world.log if e[0] == "submit"] == ["source", "source", "q2", "q2"]
    assert {r.query for r in again} == {"q0", "q1", "q2"}
    assert {r.run_id for r in again} == {first[0].run_id}
    assert len(ResultStore(results).load()) == 3


def test_ctrl_c_keeps_finished_results_and_stops_everything(dataset, tmp_path):
    world = FakeWorld({"q2": Script(interrupt_in="benchmark")})
    results = tmp_path / "r"
    with pytest.raises(Interrupted, match="finished results are kept"):
        run_suite(_suite(dataset, results, ["q1", "q2", "q3"]), lambda: FakeEngine(world))
    assert [r.query for r in ResultStore(results).load()] == ["q1"]
    (engine,) = world.engines
    assert engine.closed and all(job.canceled for job in engine.jobs)
    assert not any(e[1:2] == ("q3",) for e in world.log)
    assert not (results / "work" / "q2").exists()


def test_a_state_ttl_is_refused_on_an_engine_that_cannot_expire_state():
    engine = FakeEngine()
    with pytest.raises(UsageError, match="fake cannot expire state by time"):
        planned_setups(engine, ["q3"], ProtocolOptions(state_ttl=StateTtl.parse("5 min")))
    setups = planned_setups(engine, ["q3"], ProtocolOptions(state_ttl=NO_TTL))
    assert setups["q3"].state_ttl_s is None


def test_state_ttl_values_are_typed():
    assert StateTtl.parse("10 min").seconds == 600.0
    assert StateTtl.parse("0") == StateTtl.parse("0 ms") == NO_TTL
    assert str(StateTtl.parse("3 s")) == "3 s" and str(NO_TTL) == "none"
    with pytest.raises(UsageError, match="--state-ttl"):
        StateTtl.parse("forever", "--state-ttl")


def test_a_job_may_finish_at_the_end_of_its_input_but_not_before(dataset, tmp_path):
    # Spark's availableNow queries stop once they have processed what is there.
    run, world, _ = _query_run(dataset, tmp_path, {"q3": Script(finish_at=1.0)})
    measured = run.execute()
    assert measured.restored_from and measured.benchmark_events_seen == 1000
    assert [e[0] for e in world.log[1:]] == ["submit", "checkpoint", "cancel"] * 2
    run, _, _ = _query_run(dataset, tmp_path, {"q3": Script(finish_at=0.5)})
    with pytest.raises(EngineError, match="job finished in phase warmup after 1,500 of 3,000"):
        run.execute()


def test_the_machine_records_the_java_the_engine_runs_on(dataset, tmp_path):
    # The engine knows its Java (a JVM engine's info); an engine without one records none.
    java = run_suite(
        _suite(dataset, tmp_path / "j", ["q0"]), lambda: FakeEngine(FakeWorld(java="21.0.2"))
    )
    assert java[0].setup.machine.java == "21.0.2"
    none = run_suite(_suite(dataset, tmp_path / "n", ["q0"]), lambda: FakeEngine(FakeWorld()))
    assert none[0].setup.machine.java is None


def _fake_dataset(tmp_path: Path, rate: int) -> Dataset:
    """4,000 events at `rate` events per event-time second: the benchmark part's 1,000 span
    1000 / rate seconds of event time."""
    params = DatasetParams(events=4000, files=2, rate=rate)
    return ensure_dataset(params, out=tmp_path / params.dataset_id, show_progress=False)


def _window_result(tmp_path, rate, logical, query="q8"):
    data = _fake_dataset(tmp_path / "data", rate)
    script = Script(eps=100.0, checkpoint_s=0.2, bytes_per_event=10, logical=logical)
    run, _, engine = _query_run(data, tmp_path / "run", {query: script}, query=query)
    measured = run.execute()
    ctx = RunContext("run-1", data, engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, PhaseParts.of(data))
    assert r.status.value == "ok" and r.problems() == []
    return r


def test_a_window_bound_state_is_judged_only_at_the_same_point_of_its_cycle(tmp_path):
    """q8's 10 s tumbling windows at 10M events: the benchmark part spans 25 s, the cut falls
    half-way into a window and the end at a whole one, and the two sizes read 2x."""
    half_then_whole = {"warmup": 1_000_000, "benchmark": 2_000_000}.get
    r = _window_result(tmp_path / "unaligned", 40, half_then_whole)  # 25 s of event time
    assert r.state_steady is None and r.state_growth is None and r.state_measure is None
    assert r.steady_reason.startswith("not judged") and "spans 25 s" in r.steady_reason
    assert "400 events" in r.steady_reason  # one cycle at this dataset's rate
    assert r.state_logical_bytes_end == 2_000_000  # the sizes stay, as what they are
    # Spanning whole cycles (10 s), the same sizes are a verdict; a steady state reads steady.
    r = _window_result(tmp_path / "grown", 100, half_then_whole)
    assert r.state_steady is False and r.state_growth == pytest.approx(2.0)
    steady = {"warmup": 1_000_000, "benchmark": 1_050_000}.get
    r = _window_result(tmp_path / "aligned", 100, steady)
    assert r.state_steady is True and r.steady_reason is None
    # Processing-time windows (q12) cycle with the wall clock: two sizes never judge them.
    r = _window_result(tmp_path / "q12", 100, half_then_whole, query="q12")
    assert r.state_steady is None and "processing-time windows every 10 s" in r.steady_reason


def test_a_phase_too_short_to_resolve_is_flagged_and_still_scored(dataset, tmp_path):
    # 1,000 events at 250/s: a 4 s phase, under 5 one-second samples.
    r = _state_result(dataset, tmp_path / "short", None)
    assert r.throughput_eps and "under 5 s" in r.phase_too_short
    assert r.repeats[0].phase_too_short == r.phase_too_short
    # 10 s: resolved; unless its end checkpoint (inside Time) takes over a quarter of it.
    r = _state_result(dataset, tmp_path / "long", None, eps=100.0)
    assert r.time_s >= 10 and r.phase_too_short is None
    script = Script(eps=100.0, checkpoint_s=4.0)
    run, _, engine = _query_run(dataset, tmp_path / "ckpt", {"q3": script})
    measured = run.execute()
    ctx = RunContext("run-1", dataset, engine.info(), collect_machine())
    r = build_result(ctx, measured, run.sampler, PhaseParts.of(dataset))
    assert "end checkpoint took 4.0 s" in r.phase_too_short
