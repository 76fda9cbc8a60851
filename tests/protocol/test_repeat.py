"""`--repeat N` on the fake engine: one warm-up, N benchmark phases restored from the same phase
checkpoint, each a full sample; a failed repeat recorded and the others kept; the statistics."""

from __future__ import annotations

import json
import statistics

import pytest

from fake_engine import FakeClock, FakeEngine, FakeWorld, Script
from fake_runs import fake_run
from nexmark.engines.base import LiveState
from nexmark.errors import UsageError
from nexmark.protocol.preparation.options import ProtocolOptions, check_repeat
from nexmark.protocol.scoring.record import build_result, status_result
from nexmark.protocol.suite.runner import SuiteRun, run_suite
from nexmark.results.document import dump_document, load_document
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("repeat-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _run(dataset, tmp_path, script=None, repeat=3, world=None, runs=1):
    fake = fake_run(dataset, tmp_path / "work", script, world=world, repeat=repeat, runs=runs)
    return fake.run, fake.world, fake.context(), fake.parts


def test_one_warmup_then_each_repeat_restores_the_same_phase_checkpoint(dataset, tmp_path):
    script = Script(repeat_eps=(500.0, 1000.0, 250.0))
    run, world, ctx, parts = _run(dataset, tmp_path, script)
    measured = run.execute()
    snapshot = measured.phase_checkpoint.snapshot
    submits = [e for e in world.log if e[0] == "submit"]
    assert (
        submits
        == [("submit", "q3", "warmup", None)] + [("submit", "q3", "benchmark", snapshot.ref)] * 3
    )
    assert [e[0] for e in world.log[1:]] == ["submit", "checkpoint", "cancel"] * 4

    result = build_result(ctx, measured, run.sampler, parts)
    assert [r.status for r in result.repeats] == ["ok"] * 3
    # every repeat proved its restore: the phase checkpoint's id
    assert {r.restored_checkpoint_id for r in result.repeats} == {snapshot.id}
    assert len({r.end_checkpoint_id for r in result.repeats}) == 3
    speeds = [r.throughput_eps for r in result.repeats]
    assert speeds[1] > speeds[0] > speeds[2]  # the scripted rates, each its own sample
    stats = result.throughput_stats
    assert stats.n == 3 and stats.median == speeds[0] == result.throughput_eps
    assert (stats.min, stats.max) == (speeds[2], speeds[1])
    assert stats.stdev == pytest.approx(statistics.stdev(speeds))
    assert stats.ci_low <= stats.median <= stats.ci_high and "bootstrap" in stats.ci_method
    assert stats.median_repeat == 0
    # the top level is the median repeat's sample, coherent with its own timestamps
    assert result.time_s == result.repeats[0].time_s and result.problems() == []
    bench = [s for s in result.timeseries if s.phase == "benchmark"]
    assert bench and all(s.t >= result.repeats[0].t_running - result.timestamps.query_start - 1
                         for s in bench)  # fmt: skip
    # a round trip through the file keeps every repeat
    again = load_document(json.loads(json.dumps(dump_document([result]))))[0]
    assert again.repeats == result.repeats and again.throughput_stats == stats


def test_a_failed_repeat_is_recorded_with_its_reason_and_the_others_kept(dataset, tmp_path):
    run, _, ctx, parts = _run(dataset, tmp_path, Script(fail_repeats=(1,)))
    result = build_result(ctx, run.execute(), run.sampler, parts)
    assert [r.status for r in result.repeats] == ["ok", "failed", "ok"]
    assert "scripted failure" in result.repeats[1].reason
    assert result.repeats[1].throughput_eps is None
    assert result.status.value == "ok" and result.throughput_stats.n == 2


def test_every_repeat_failing_fails_the_query_with_each_reason(dataset, tmp_path):
    run, _, ctx, parts = _run(dataset, tmp_path, Script(fail_repeats=(0, 1)), repeat=2)
    with pytest.raises(Exception, match="scripted failure"):
        run.execute()
    result = status_result(ctx, "q3", "failed", "x", run.measured, run.sampler, parts)
    assert [r.status for r in result.repeats] == ["failed", "failed"]
    assert result.throughput_stats.n == 0


def test_a_snapshot_consumed_by_its_restore_cannot_be_repeated(dataset, tmp_path):
    # The fake's restored job writes into its snapshot unless it copies it first: an engine
    # that says it cannot restore twice is refused --repeat before anything runs.
    world = FakeWorld({}, FakeClock(), repeatable_restore=False)
    with pytest.raises(UsageError, match="cannot restore a checkpoint more than once"):
        _run(dataset, tmp_path, repeat=2, world=world)
    run, *_ = _run(dataset, tmp_path / "one", repeat=1, world=world)
    assert run.execute().restored_id is not None  # one restore is fine


@pytest.mark.parametrize("bad", [0, -1, 101])
def test_a_repeat_count_out_of_bounds_is_one_line(bad):
    with pytest.raises(UsageError, match=rf"--repeat must be between 1 and 100, got {bad}$"):
        check_repeat(bad, True)


def test_a_suite_with_repeats_records_them_and_resume_keeps_the_count(dataset, tmp_path):
    world = FakeWorld()
    options = ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01, repeat=3)
    results = tmp_path / "r"
    suite = SuiteRun(["q1"], dataset, results, options, show_progress=False,
                     recorded_options={"repeat": 3})  # fmt: skip
    (got,) = run_suite(suite, lambda: FakeEngine(world))
    assert got.throughput_stats.n == 3 and len(got.repeats) == 3
    other = ProtocolOptions(timeout_s=30.0, repeat=5)
    again = SuiteRun(["q1", "q2"], dataset, results, other, resume=True, show_progress=False)
    with pytest.raises(UsageError, match="was run with --repeat 3; resume it with --repeat 3"):
        run_suite(again, lambda: FakeEngine(world))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--repeat", "0"], "--repeat must be between 1 and 100, got 0"),
        (["--repeat", "-2"], "--repeat must be between 1 and 100, got -2"),
        (["--repeat", "500"], "--repeat must be between 1 and 100, got 500"),
        (["--repeat", "3", "--failover"], "--failover measures one benchmark phase per query"),
        (["--runs", "0"], "--runs must be between 1 and 20, got 0"),
        (["--runs", "-1"], "--runs must be between 1 and 20, got -1"),
        (["--runs", "1000"], "--runs must be between 1 and 20, got 1000"),
    ],
)
def test_bad_repeat_counts_are_one_line_and_exit_2(tmp_path, args, message):
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "nexmark", "run", "--queries", "q0", "--events", "2M",
         "--results", str(tmp_path / "r"), *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0]
    assert not (tmp_path / "r").exists()


def _runs(dataset, tmp_path, script=None, repeat=2, runs=2):
    """Two whole cycles (`--runs`) of two repeats each."""
    return _run(dataset, tmp_path, script, repeat=repeat, runs=runs)


def test_runs_repeat_the_whole_cycle_with_a_fresh_warmup_each(dataset, tmp_path):
    script = Script(repeat_eps=(500.0, 600.0, 1000.0, 900.0))
    run, world, ctx, parts = _runs(dataset, tmp_path, script)
    result = build_result(ctx, run.execute(), run.sampler, parts)
    phases = [e[2] for e in world.log if e[0] == "submit"]
    assert phases == ["warmup", "benchmark", "benchmark"] * 2
    restores = [e[3] for e in world.log if e[0] == "submit" and e[2] == "benchmark"]
    # each run's repeats restore that run's own phase checkpoint, not the other run's
    assert restores[0] == restores[1] != restores[2] == restores[3]
    assert [(r.run, r.index, r.status) for r in result.repeats] == [
        (0, 0, "ok"), (0, 1, "ok"), (1, 2, "ok"), (1, 3, "ok"),
    ]  # fmt: skip
    stats = result.throughput_stats
    assert (stats.n, stats.runs) == (4, 2)
    speeds = [r.throughput_eps for r in result.repeats]
    assert (stats.min, stats.max) == (min(speeds), max(speeds)) and speeds[2] > speeds[1]
    # the headline is the median repeat, its timeline from its own run's warm-up
    assert result.throughput_eps == stats.median == speeds[stats.median_repeat]
    assert result.problems() == []
    assert not (tmp_path / "work").exists()  # every run's work directory removed


def test_a_failed_repeat_among_runs_is_recorded_and_the_statistics_count_the_rest(
    dataset, tmp_path
):
    run, _, ctx, parts = _runs(dataset, tmp_path, Script(fail_repeats=(2,)))
    result = build_result(ctx, run.execute(), run.sampler, parts)
    assert [r.status for r in result.repeats] == ["ok", "ok", "failed", "ok"]
    assert result.repeats[2].run == 1 and "scripted failure" in result.repeats[2].reason
    assert (result.throughput_stats.n, result.throughput_stats.runs) == (3, 2)


def test_failed_warmups_of_every_run_fail_the_query_with_each_repeat_recorded(dataset, tmp_path):
    run, world, ctx, parts = _runs(dataset, tmp_path, Script(fail_in="warmup"))
    with pytest.raises(Exception, match="scripted failure"):
        run.execute()
    assert [e[2] for e in world.log if e[0] == "submit"] == ["warmup", "warmup"]
    result = status_result(ctx, "q3", "failed", "x", run.measured, run.sampler, parts)
    assert [(r.run, r.status) for r in result.repeats] == [(0, "failed")] * 2 + [(1, "failed")] * 2
    assert all(r.reason.startswith("warm-up failed") for r in result.repeats)
    assert result.throughput_stats.n == 0


def test_resume_refuses_another_number_of_runs(dataset, tmp_path):
    world = FakeWorld()
    options = ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01, repeat=1, runs=2)
    results = tmp_path / "r"
    suite = SuiteRun(["q1"], dataset, results, options, show_progress=False,
                     recorded_options={"repeat": 1, "runs": 2})  # fmt: skip
    (got,) = run_suite(suite, lambda: FakeEngine(world))
    assert got.throughput_stats.n == 2 and {r.run for r in got.repeats} == {0, 1}
    other = ProtocolOptions(timeout_s=30.0, repeat=1, runs=3)
    again = SuiteRun(["q1", "q2"], dataset, results, other, resume=True, show_progress=False)
    with pytest.raises(UsageError, match="was run with --runs 2; resume it with --runs 2, not 3"):
        run_suite(again, lambda: FakeEngine(world))


def _refreshing_gauge(growth_per_s: float):
    """As Flink's state gauges: a restored job's live state reads 0 until its first refresh,
    then a new value every 2.5 s, from an offset that differs repeat to repeat (1.0, 1.5, 2.0 s
    after the job is ready), so a 4 s phase gets one or two values of its own."""
    jobs: list[float] = []  # the last time read of each job so far

    def live(phase: str, t: float) -> LiveState:
        if phase != "benchmark":
            return LiveState(10**6, 1000)
        if not jobs or t < jobs[-1]:
            jobs.append(t)  # a new job's clock
        jobs[-1] = t
        offset = 1.0 + 0.5 * (len(jobs) - 1)
        if t < offset:
            return LiveState(0, 0)
        n = int((t - offset) / 2.5)  # refreshes so far: each reads a little apart
        refreshed = offset + 2.5 * n
        return LiveState(int(1e6 * (1 + growth_per_s * refreshed)) + 1000 * (n % 2), 1000)

    return live


@pytest.mark.parametrize("growth_per_s, steady", [(0.0, True), (0.25, False)])
def test_state_is_judged_on_every_repeats_reads_where_one_phase_draws_no_trend(
    dataset, tmp_path, growth_per_s, steady
):
    script = Script(eps=250.0, live=_refreshing_gauge(growth_per_s))  # 4 s phases
    run, _, ctx, parts = _run(dataset, tmp_path, script)
    result = build_result(ctx, run.execute(), run.sampler, parts)
    # Alone, no phase has the three refreshed reads of a trend: each repeat fell back on its
    # checkpoints, which would call a growing state steady (the files shrink here).
    assert [r.state_measure for r in result.repeats] == ["checkpoint size"] * 3
    assert all(r.state_steady for r in result.repeats)
    # Together, on one clock, they draw the phase's trend.
    assert result.state_measure == "live bytes" and result.state_pooled_repeats == 3
    assert result.state_reads == 4  # 2 + 1 + 1, where no phase alone had 3
    assert result.state_steady is steady and result.problems() == []
    if steady:
        assert result.state_growth == pytest.approx(1.0, abs=0.01)
    else:
        assert result.state_growth > 1.4 and "over the benchmark phase (live bytes)" in (
            result.steady_reason
        )
    again = load_document(json.loads(json.dumps(dump_document([result]))))[0]
    assert (again.state_reads, again.state_pooled_repeats) == (result.state_reads, 3)
