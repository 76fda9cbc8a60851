"""What a days-long run needs, on the fake engine and plain processes: the suite's progress and
estimate, the plan and the disk it needs, the run lock, a killed run's leftovers reaped, and a
results directory of another run refused on --resume."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from rich.console import Console
from rich.progress import Progress

from fake_engine import FakeClock, FakeEngine, FakeWorld
from nexmark.engines.spec import JobSetup
from nexmark.errors import DiskSpaceError, UsageError
from nexmark.protocol.preparation import leftovers, resume, run_plan
from nexmark.protocol.preparation.options import ProtocolOptions, RunOptions
from nexmark.protocol.preparation.runlock import LOCK_NAME, RunLock
from nexmark.protocol.progress import display as display_module
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.progress.suite_progress import SuiteProgress
from nexmark.protocol.suite.runner import SuiteRun, run_suite
from nexmark.results.query_result import QueryResult, Status
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=4000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("long-run-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


# -- suite progress ------------------------------------------------------------------------


def test_the_estimate_is_the_finished_queries_rate_applied_to_what_remains():
    clock = FakeClock()
    suite = SuiteProgress(4, events_per_query=1_000_000, clock=clock)
    suite.query_started(0)
    assert "no estimate yet" in suite.line("q0") and "query 1 of 4 (q0)" in suite.line("q0")
    clock.advance(100)
    suite.query_finished("ok")
    suite.query_started(1)
    clock.advance(5)
    suite.query_finished("failed")  # a failure says nothing of the others' pace
    suite.query_started(2)
    # 100 s per million events, two queries left (q2 and the last)
    assert suite.remaining_s(2) == pytest.approx(200)
    line = suite.line("q2")
    assert line.startswith("suite: query 3 of 4 (q2), 1 min 45 s elapsed, about 3 min 20 s left")
    assert "(estimate: 2 queries x 1,000,000 events at 100 s per million events" in line
    assert suite.short() == "suite 3/4, ~3 min 20 s left (estimate)"


def test_a_suite_logs_query_k_of_n_elapsed_and_its_estimate(dataset, tmp_path, capsys):
    # Off a terminal (captured stderr): the plain lines, one at each query's start.
    options = ProtocolOptions(timeout_s=30.0, sample_interval_s=0.01)
    suite = SuiteRun(["q1", "q2", "q3"], dataset, tmp_path / "r", options, show_progress=True)
    run_suite(suite, lambda: FakeEngine(FakeWorld()))
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("suite:")]
    assert len(lines) == 4, lines
    assert re.fullmatch(r"suite: query 1 of 3 \(q1\), \d+ s elapsed, no estimate yet .*", lines[0])
    for k, line in ((2, lines[1]), (3, lines[2])):
        left = 4 - k
        assert re.fullmatch(
            rf"suite: query {k} of 3 \(q{k}\), \d+ s elapsed, about \d+ s left \(estimate: "
            rf"{left} quer(y|ies) x 4,000 events at [\d.e+-]+ s per million events, this run's "
            rf"rate over its {k - 1} finished ok\)",
            line,
        ), line
    assert re.fullmatch(r"suite: 3 of 3 queries in \d+ s", lines[3])


def test_on_a_terminal_the_suite_bar_carries_the_estimate(monkeypatch):
    buf = io.StringIO()
    term = Console(file=buf, force_terminal=True, width=200)
    monkeypatch.setattr(display_module, "err", term)
    monkeypatch.setattr(display_module, "rich_progress", lambda: Progress(console=term))
    clock = FakeClock()
    with RunDisplay(3, events_per_query=2000, clock=clock) as shown:
        assert shown.live
        shown.query_started("q0", 0)
        clock.advance(60)
        shown.query_finished("ok", "")
        shown.query_started("q1", 1)
        (task,) = [t for t in shown._progress.tasks if t.description.startswith("suite")]
        assert task.description == "suite 2/3, ~2 min 00 s left (estimate)"
    assert "suite: query 2 of 3 (q1), 1 min 00 s elapsed, about 2 min 00 s left" in buf.getvalue()


# -- the plan and the disk -----------------------------------------------------------------


def _results_file(directory: Path, records: list[dict]) -> None:
    directory.mkdir(parents=True)
    (directory / "results.json").write_text(json.dumps({"schema_version": 2, "results": records}))


def test_the_largest_checkpoint_is_read_from_earlier_results_of_the_same_size(tmp_path):
    flink = {"engine": "flink", "events_total": 10_000_000}
    _results_file(tmp_path / "a", [
        {**flink, "query": "q5", "state_bytes_end": 3 << 20,
         "phase_checkpoint": {"state_bytes": 4 << 20}},
        {**flink, "query": "q0", "state_bytes_end": 1 << 20},
    ])  # fmt: skip
    _results_file(tmp_path / "b", [
        {**flink, "query": "q9", "state_bytes_end": 900 << 20},  # not planned
        {**flink, "query": "q5", "events_total": 200_000_000, "state_bytes_end": 5 << 30},
        {"engine": "spark", "query": "q5", "events_total": 10_000_000, "state_bytes_end": 7 << 30},
        {**flink, "query": "q8", "checkpoints": {"state_bytes_last": 2 << 20}},
    ])  # fmt: skip
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "results.json").write_text("{ not json")
    seen = run_plan.largest_checkpoint(tmp_path, "flink", 10_000_000, ("q0", "q5", "q8"))
    assert (seen.bytes, seen.query, seen.where) == (4 << 20, "q5", tmp_path / "a")
    assert run_plan.largest_checkpoint(tmp_path, "flink", 20_000_000, ("q5",)) is None

    options = RunOptions(queries=("q0", "q5", "q8"), events=10_000_000, repeat=5)
    need = run_plan.DatasetNeed(tmp_path / "data", 500 << 20, there=False)
    lines = run_plan.plan_lines(options, "flink", {"q0"}, need, seen, tmp_path)
    assert lines == [
        "plan: 2 of 3 queries to run on flink: q5, q8; 1 already done, kept",
        "plan: 10,000,000 events per query: 7,500,000 warm-up, then 2,500,000 scored x 5 repeats",
        f"plan: dataset about 500.0 MiB to generate (estimate) in {tmp_path / 'data'}",
        "plan: largest checkpoint seen so far: 4.0 MiB (q5 at 10,000,000 events, "
        f"{tmp_path / 'a'})",
    ]
    none = run_plan.plan_lines(options, "flink", set(), need, None, tmp_path)[3]
    assert none.endswith(f"none known (no earlier flink result under {tmp_path} for these "
                         "queries at 10,000,000 events)")  # fmt: skip


def test_a_disk_that_cannot_hold_the_dataset_and_the_largest_checkpoint_is_refused(
    tmp_path, monkeypatch
):
    need = run_plan.DatasetNeed(tmp_path / "data", 300 << 20, there=False)
    seen = run_plan.SeenCheckpoint(200 << 20, "q5", 1000, tmp_path)
    monkeypatch.setenv("NEXMARK_FREE_BYTES", str(400 << 20))
    with pytest.raises(DiskSpaceError, match=r"needs 500.0 MiB \(the dataset 300.0 MiB \+ the "
                       r"largest checkpoint seen so far 200.0 MiB\), 400.0 MiB free"):  # fmt: skip
        run_plan.check_disk(need, seen, tmp_path / "work", checkpoints_on_store=False)
    # a dataset already there needs no more disk; checkpoints on a store none here
    there = run_plan.DatasetNeed(tmp_path / "data", 300 << 20, there=True)
    (line,) = run_plan.check_disk(there, seen, tmp_path / "work", checkpoints_on_store=False)
    assert "needs" not in line and "200.0 MiB on" in line and "400.0 MiB free" in line
    (line,) = run_plan.check_disk(need, seen, tmp_path / "work", checkpoints_on_store=True)
    assert "(the dataset 300.0 MiB)" in line


# -- the run lock ----------------------------------------------------------------------------


def test_a_live_lock_is_refused_and_a_killed_runners_lock_taken_over(tmp_path, lock_holder):
    results = tmp_path / "r"
    holder = lock_holder(results)
    with pytest.raises(UsageError, match=rf"in use by another nexmark run \(pid {holder.pid}, "):
        RunLock(results).__enter__()
    holder.kill()  # as SIGKILL or a closed terminal ends a runner: no release
    holder.wait()
    assert (results / LOCK_NAME).exists()
    with RunLock(results) as lock:
        assert lock.taken_over["pid"] == holder.pid
        assert json.loads((results / LOCK_NAME).read_text())["pid"] == os.getpid()
    assert not (results / LOCK_NAME).exists()  # released cleanly: nothing to take over
    with RunLock(results) as lock:
        assert lock.taken_over is None


# -- a killed run's leftovers ----------------------------------------------------------------


def _sleeper(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", *args])


def test_the_recorded_processes_still_alive_are_stopped_and_their_scratch_removed(tmp_path):
    scratch = Path(tempfile.mkdtemp(prefix="nexmark-flink-"))
    (scratch / "tmp").mkdir()
    ours = _sleeper(f"-Djava.io.tmpdir={scratch / 'tmp'}")
    reused = _sleeper()  # stands for a pid reused by another process after the kill
    try:
        time.sleep(0.2)
        leftovers.record(tmp_path)
        recorded = json.loads((tmp_path / leftovers.PROCESSES_NAME).read_text())["processes"]
        by_pid = {e["pid"]: e for e in recorded}
        assert {ours.pid, reused.pid} <= set(by_pid) and by_pid[ours.pid]["scratch"] == str(scratch)
        for entry in recorded:  # all but `ours` started "at another time": not ours to stop
            if entry["pid"] != ours.pid:
                entry["started"] -= 3600
        (tmp_path / leftovers.PROCESSES_NAME).write_text(json.dumps({"processes": recorded}))
        lines = leftovers.reap(tmp_path)
        assert lines[0].startswith("stopped 1 engine process a killed run on ")
        assert f"(pid {ours.pid})" in lines[0] and f"removed the killed run's engine scratch " \
            f"directory {scratch}" in lines[1]  # fmt: skip
        assert ours.wait(timeout=5) == -9
        assert reused.poll() is None and psutil.pid_exists(reused.pid)
        assert not scratch.exists() and not (tmp_path / leftovers.PROCESSES_NAME).exists()
        assert leftovers.reap(tmp_path) == []  # a clean end leaves nothing to reap
    finally:
        for proc in (ours, reused):
            proc.kill()
            proc.wait()


def test_the_unfinished_querys_work_is_removed_and_finished_work_kept(tmp_path):
    for name in ("q0", "q1", "source"):
        (tmp_path / "work" / name / "chk-1").mkdir(parents=True)
    assert leftovers.remove_unfinished_work(tmp_path, {"q0"}) == ["q1", "source"]
    assert [p.name for p in (tmp_path / "work").iterdir()] == ["q0"]


# -- another run's directory on --resume -----------------------------------------------------


def _recorded(query: str, options: RunOptions, job: dict[str, str]) -> QueryResult:
    r = QueryResult(run_id="r1", engine="flink", query=query, status=Status.OK)
    r.setup.options = options.recorded()
    r.job_options = {"warmup": job}
    return r


def test_resume_names_each_difference_in_dataset_engine_and_setup():
    before = RunOptions(queries=("q0", "q5"), events=200_000, seed=0)
    job = {"state.backend.type": "rocksdb", "rest.port": "1234",
           "execution.checkpointing.dir": "file:///a/work/q0"}  # fmt: skip
    done = [_recorded("q0", before, job)]
    same = RunOptions(queries=("q0", "q5", "q8"), events=200_000, seed=0, timeout_s=60)
    assert resume.option_differences(done, "flink", same.recorded()) == []
    other = RunOptions(queries=("q0",), events=10_000, seed=3, repeat=2, event_rate=5000)
    assert resume.option_differences(done, "spark", other.recorded()) == [
        "engine flink there, spark now",
        "--events 200,000 there, 10,000 now",
        "--seed 0 there, 3 now",
        "--event-rate unset there, 5,000 now",
        "--repeat 1 there, 2 now",
    ]
    # A suite whose queries read datasets of different sizes: each query against its own.
    quick = [_recorded("q0", RunOptions(queries=("q0",), events=48_000_000), job),
             _recorded("q5", RunOptions(queries=("q5",), events=8_000_000), job)]  # fmt: skip
    sizes = {"q0": 48_000_000, "q8": 48_000_000, "q5": 8_000_000, "q11": 8_000_000}
    now_q = RunOptions(queries=("q0", "q8"), events=48_000_000).recorded()
    assert resume.option_differences(quick, "flink", now_q, sizes) == []
    assert resume.option_differences(quick, "flink", now_q, {**sizes, "q0": 8_000_000}) == [
        "--events 48,000,000 there, 8,000,000 now (q0)"
    ]
    now = {"state.backend.type": "rocksdb", "rest.port": "99",
           "execution.checkpointing.dir": "file:///b/work/q0"}  # fmt: skip
    assert resume.setup_differences(done, {"q0": JobSetup(2, 30.0, None, now)}) == []
    now["state.backend.type"] = "forst"
    diffs = resume.setup_differences(done, {"q0": JobSetup(2, 30.0, None, now)})
    assert diffs == ["state.backend.type rocksdb there, forst now"]
    with pytest.raises(UsageError, match=r"another dataset, engine or setup \(state.backend"):
        resume.refuse_if_different(Path("r"), diffs)
