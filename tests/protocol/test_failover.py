"""Failover runs on the scripted fake engine: the kill point, the outage's metrics, a failover
that never recovers, an engine that can only observe; no JVM, on a fake clock."""

from __future__ import annotations

import pytest
from rich.console import Console

from fake_engine import FakeEngine, FakeWorld, Script
from fake_runs import FakeRun, fake_run
from nexmark.engines.base import FailoverSupport, Recovery
from nexmark.errors import EngineError, UsageError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.query.failover import OUTAGE_PHASE, Outage, check_failover
from nexmark.protocol.scoring.record import status_result
from nexmark.protocol.suite.runner import SuiteRun, run_suite
from nexmark.report.html import write_report
from nexmark.results.document import SCHEMA_VERSION, dump_document, load_document
from nexmark.results.table import results_renderable
from nexmark.verify.runner import failover_note
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """40,000 events: 10,000 in the benchmark part, 2 files per part."""
    params = DatasetParams(events=40_000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("failover-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


# 1,000 events/s: the benchmark part takes 10 s; periodic checkpoints every 2 s (0.1 s each).
SCRIPT = Script(ready_s=0.5, eps=1000.0, periodic_s=2.0, detect_s=3.0, restart_s=1.5)


def _run(dataset, tmp_path, script=SCRIPT, support=FailoverSupport.INJECT, **options) -> FakeRun:
    world = FakeWorld({"q3": script}, failover=support)
    return fake_run(dataset, tmp_path / "work", world=world, failover=True, **options)


def test_the_worker_is_killed_at_half_the_events_after_a_periodic_checkpoint(dataset, tmp_path):
    fake = _run(dataset, tmp_path)
    measured, r = fake.measure()
    world = fake.world
    f = r.failover

    assert ("kill", "q3", "benchmark") in world.log
    assert r.status.value == "ok" and r.problems() == []
    assert f.mode == "inject" and f.killed == "fake worker 1 (2 tasks)"
    # Half of the 10,000 events (sampled about every second: at most one second more).
    assert 5000 <= f.kill_events <= 6000
    # The fake notices 3 s after the kill (its own failure time) and runs 1.5 s later.
    assert f.detect_s == pytest.approx(3.0, abs=0.01)
    assert f.restore_s == pytest.approx(4.5, abs=0.06)
    # It restarts from the last periodic checkpoint before the kill (every 2 s from ready).
    assert f.events_at_restore % 2000 == 0 and f.kill_events - 2000 < f.events_at_restore
    assert f.events_replayed == f.kill_events - f.events_at_restore
    # Reading again at the rate it had: the first 1 s sample after the restore reaches it.
    assert f.rate_before_eps == pytest.approx(1000, rel=0.05)
    assert f.restore_s < f.catch_up_rate_s <= f.restore_s + 1.1
    replay_s = f.events_replayed / 1000
    assert f.catch_up_kill_point_s == pytest.approx(f.restore_s + replay_s, abs=0.1)
    # Time spans the outage; without it the phase would have taken the lost time less.
    assert f.throughput_with_outage_eps == pytest.approx(r.throughput_eps)
    lost = f.catch_up_kill_point_s
    assert f.throughput_without_outage_eps == pytest.approx(10_000 / (r.time_s - lost))
    assert r.time_s == pytest.approx(10.0 + lost, abs=1.2)
    assert any(s.phase == OUTAGE_PHASE for s in r.timeseries)
    assert r.timestamps.t_end > measured.outage.t_restored
    # The failover block survives the results file and its CSV row.
    (back,) = load_document(dump_document([r]))
    assert back.failover == f and SCHEMA_VERSION >= 4


def test_events_read_beyond_the_counter_at_the_kill_count_as_read(dataset, tmp_path):
    # An engine that counts a batch when it commits (Spark) says what it had read at the kill:
    # the batch in flight is read again after the restart, and caught up with.
    script = Script(ready_s=0.5, eps=1000.0, periodic_s=2.0, detect_s=3.0, restart_s=1.5,
                    reads_ahead=700)  # fmt: skip
    fake = _run(dataset, tmp_path, script)
    f = fake.measure()[1].failover
    counted = fake.run.measured.outage.events_at_kill - 700
    assert 5000 <= counted <= 6000  # the counter's value at the kill, as without the batch
    assert f.kill_events == counted + 700
    assert f.events_replayed == f.kill_events - f.events_at_restore > 700
    replay_s = f.events_replayed / 1000
    assert f.catch_up_kill_point_s == pytest.approx(f.restore_s + replay_s, abs=0.1)


def test_the_kill_waits_for_a_periodic_checkpoint(dataset, tmp_path):
    # The first periodic checkpoint completes 7.1 s after ready: 7,000+ events were read.
    script = Script(ready_s=0.5, eps=1000.0, periodic_s=7.0, detect_s=1.0, restart_s=1.0)
    f = _run(dataset, tmp_path, script).measure()[1].failover
    assert f.kill_events >= 7000 and f.events_at_restore == 7000


def test_the_phase_does_not_end_before_the_failover(dataset, tmp_path):
    # Every event is read (10 s) before the first periodic checkpoint (12 s): kill anyway.
    script = Script(ready_s=0.5, eps=1000.0, periodic_s=12.0, detect_s=1.0, restart_s=1.0)
    fake = _run(dataset, tmp_path, script)
    _, r = fake.measure()
    world = fake.world
    assert r.failover.kill_events == 10_000 and r.failover.events_at_restore == 10_000
    assert r.failover.events_replayed == 0
    assert [e[0] for e in world.log if e[0] in ("kill", "checkpoint")][-2:] == [
        "kill",
        "checkpoint",
    ]


def test_a_failover_that_does_not_recover_fails_the_query_with_the_reason(dataset, tmp_path):
    script = Script(ready_s=0.5, eps=1000.0, periodic_s=2.0, never_recovers=True)
    fake = _run(dataset, tmp_path, script, timeout_s=120.0)
    run = fake.run
    with pytest.raises(EngineError, match="failover: q3 did not recover within its 120 s") as exc:
        run.execute()
    assert "detected after 1.00 s" in str(exc.value) and "not running yet" in str(exc.value)
    assert all(job.canceled for job in fake.engine.jobs)
    r = status_result(fake.context(), "q3", "failed", str(exc.value), run.measured, run.sampler)
    assert r.failover.detect_s == pytest.approx(1.0) and r.failover.restore_s is None


def test_a_suite_enables_failover_on_every_engine_and_goes_on_after_a_failed_one(dataset, tmp_path):
    # On the real clock (as the suite runs): 50,000 events/s, checkpoints every 50 ms.
    fast = dict(eps=50_000.0, periodic_s=0.05, checkpoint_s=0.01, detect_s=0.1, restart_s=0.1)
    world = FakeWorld({"q1": Script(**fast, never_recovers=True), "q2": Script(**fast)})
    options = ProtocolOptions(timeout_s=3.0, sample_interval_s=0.01)
    suite = SuiteRun(["q1", "q2"], dataset, tmp_path / "r", options, show_progress=False)
    suite.failover, suite.calibrate = True, False
    got = {r.query: r for r in run_suite(suite, lambda: FakeEngine(world))}
    assert got["q1"].status.value == "failed" and "did not recover" in got["q1"].reason
    assert got["q2"].status.value == "ok"
    assert got["q2"].failover.restore_s == pytest.approx(0.2, abs=0.1)
    # The table, the report and its timeline show the outage.
    console = Console(width=120, record=True)
    console.print(results_renderable(list(got.values())))
    assert "Failover" in console.export_text()
    report = write_report(tmp_path / "r")
    assert "failover: killed fake worker 1" in report.read_text()
    assert (report.parent / "charts" / "fake-q2-timeline.png").is_file()
    # q1 broke the first engine: the second was set up for failover too; both closed.
    assert [e for e in world.log if e == ("enable_failover",)] == [("enable_failover",)] * 2
    assert all(e.closed for e in world.engines)


def test_an_engine_that_only_observes_is_not_killed_and_the_phase_ends_without_a_failure(
    dataset, tmp_path
):
    fake = _run(dataset, tmp_path, support=FailoverSupport.OBSERVE)
    _, r = fake.measure()
    world = fake.world
    assert not any(e[0] == "kill" for e in world.log)
    assert r.failover.mode is None  # nobody killed a worker: no outage to report


def test_an_observed_failure_is_measured_from_the_engines_failure_time(dataset, tmp_path):
    fake = _run(dataset, tmp_path, support=FailoverSupport.OBSERVE)
    run = fake.run
    original = run.sampler.sample

    def sample_and_kill(job, phase, force=False):  # a user kills the worker at 6,000 events
        s = original(job, phase, force)
        if phase == "benchmark" and job.killed_at is None and s.events >= 6000:
            job.inject_failure()
        return s

    run.sampler.sample = sample_and_kill
    _, r = fake.measure()
    f = r.failover
    assert f.mode == "observe" and f.killed is None and f.t_kill is None
    assert f.detect_s is None  # no kill time: nothing to measure detection from
    assert f.restore_s == pytest.approx(1.5, abs=0.06)  # from the engine's failure time
    assert f.events_replayed is not None and f.events_replayed >= 0


def test_a_failover_run_is_refused_before_anything_on_an_engine_that_declares_none():
    engine = FakeEngine(FakeWorld(failover=FailoverSupport.NONE))
    with pytest.raises(UsageError, match="--failover: fake cannot restart a failed job"):
        check_failover(True, engine)
    check_failover(False, engine)  # a run without failover is no concern of it
    check_failover(True, FakeEngine(FakeWorld(failover=FailoverSupport.OBSERVE)))
    with pytest.raises(EngineError, match="does not support failover"):
        engine.enable_failover()


@pytest.mark.parametrize(
    ("at_kill", "at_restore", "replayed", "kill_point", "note"),
    [
        (7_000, 5_000, 2_000, 7_000, "killed w at 7,000 events, restored at 5,000 (2,000 read"),
        # The count at the kill lagged the source, which read the whole part before the
        # restored checkpoint: nothing is read again, and the kill came at the part's end.
        (7_000, 10_000, 0, 10_000, "killed w at 10,000 events, restored at 10,000 (0 read"),
        # Lagged, and the restore left events to read: how many were read twice is unknown.
        (7_000, 8_000, None, None, "killed w after 7,000 events, restored at 8,000 (how many"),
        (None, 8_000, None, None, "killed w; restored position unknown"),
    ],
)
def test_a_count_at_the_kill_that_lagged_never_gives_a_negative_replay(
    at_kill, at_restore, replayed, kill_point, note
):
    """A Flink run once said "restored at 150,000 (-70,093 read again)": the REST count at
    the kill lagged a source that read on to the part's end before the kill landed."""
    outage = Outage(FailoverSupport.INJECT, killed="w", events_at_kill=at_kill, part_events=10_000)
    outage.recovery = Recovery(restarts=1, events_at_restore=at_restore)
    assert outage.events_replayed == replayed
    assert outage.kill_point == kill_point
    assert failover_note(outage).startswith(f"failover: {note}"), failover_note(outage)
