"""`nexmark run` as a user runs it: a subprocess, its exit code, its one-line errors, its files;
its refusals of bad input, before any work, through the same entry point in process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from cli_process import nexmark, still_running

# The system check's CPU windows (2 s before a run, 1 s before each query) are idle time here:
# these tests prove failure handling and stopping, not the load warning. A zero window still
# takes the check, without waiting.
NO_CHECK_WINDOWS = ["--set", "system_check.run_window=0 s"]
NO_CHECK_WINDOWS += ["--set", "system_check.query_window=0 s"]


def _start(*args: str, data: Path, **env: str) -> subprocess.Popen:
    """`nexmark` in its own process group, as a terminal's foreground job."""
    return subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        env={**os.environ, "NEXMARK_DATA_DIR": str(data), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # A shell starting a background job (as a CI runner may) sets SIGINT to "ignore", and
        # Python then installs no Ctrl-C handler: give the child a terminal's default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _java_children(proc: subprocess.Popen) -> list[psutil.Process]:
    children = psutil.Process(proc.pid).children(recursive=True)
    return [c for c in children if "java" in (c.name() or "")]


def _wait_for_jvm_working_on(proc: subprocess.Popen, work_dir: Path) -> psutil.Process:
    """The engine's JVM, once a query's job has started writing its work directory."""
    deadline = time.time() + 400
    while not work_dir.exists() and time.time() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    jvms = _java_children(proc)
    assert work_dir.exists() and jvms, "the query never started"
    return jvms[0]


def _results(path: Path) -> dict[str, dict]:
    doc = json.loads((path / "results.json").read_text())
    return {r["query"]: r for r in doc["results"]}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--queries", "q99"], "unknown query"),
        (["--events", "-5"], "--events"),
        (["--events", "lots"], "--events"),
        (["--checkpoint-interval", "60s"], "at most 30 s"),
        # the protocol's bound holds whatever path sets the interval
        (["--set", "flink.execution.checkpointing.interval=60 s"], "at most 30 s"),
        (["--set", "flink.parallelism.default=zero"], "parallelism.default"),
        (["--state-ttl", "forever"], "--state-ttl"),
        (["--warmup-fraction", "1.5"], "fraction"),
        (["--suite", "huge"], "unknown suite"),
        (["--format", "orc"], "unknown dataset format 'orc'"),
        (["--rate", "0"], "--rate must be a number of events/s above 0, got 0"),
        (["--rate", "-3"], "--rate must be a number of events/s above 0, got -3"),
        (["--rate", "100", "--failover"], "--rate and --failover measure different things"),
        (["--rate", "1", "--timeout", "10s"], "takes 250 s, above the query's timeout of 10 s"),
        (["--set", "system_check.query_window=2 min"], "between 0 and 60 s, got 2 min"),
        (["--set", "system_check.warn_cores=-1"], "warn_cores must be a positive number"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(tmp_path, nexmark_main, args, message):
    # tiny --events where the input under test leaves it alone: a bug must not start 200M
    sized = args if "--events" in args else [*args, "--events", "1K"]
    done = nexmark_main("run", *sized, "--results", str(tmp_path / "r"), data=tmp_path / "data")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_resume_needs_the_results_directory(tmp_path, nexmark_main):
    done = nexmark_main("run", "--resume", "--events", "1K", data=tmp_path / "data")
    assert done.returncode == 2 and "--resume needs --results" in done.stderr
    assert not (tmp_path / "data").exists()  # refused before any dataset work


@pytest.mark.flink
@pytest.mark.slow
def test_failure_isolation_timeout_and_resume(tmp_path):
    results, data = tmp_path / "results", tmp_path / "data"
    # One benchmark phase per query (the quick suite's default is 5): what is under test here
    # is the failure handling, not the repeats.
    common = ["--events", "200K", "--parallelism", "2", "--repeat", "1", "--no-report"]
    common += ["--results", str(results), *NO_CHECK_WINDOWS]

    # The engine dies under q0 (its JVM killed mid-query): q0 is recorded as failed with the
    # reason, the engine is restarted, and the suite goes on: q5 succeeds.
    proc = _start("run", "--queries", "q0,q5", *common, data=data)
    try:
        jvm = _wait_for_jvm_working_on(proc, results / "work" / "q0")
        jvm.kill()
        _, stderr = proc.communicate(timeout=600)
    finally:
        _kill_group(proc)
    assert proc.returncode == 1 and (results / "results.json").exists(), stderr
    got = _results(results)
    assert got["q0"]["status"] == "failed" and "died" in got["q0"]["reason"]
    assert got["q5"]["status"] == "ok" and got["q5"]["throughput_eps"] > 0
    assert "restarting the engine" in stderr

    # --resume skips what is recorded; q2 runs and hits its (tiny) per-query timeout.
    again = nexmark(
        "run", "--queries", "q0,q5,q2", "--resume", "--timeout", "1s", *common, data=data
    )
    assert again.returncode == 1, again.stderr
    got2 = _results(results)
    assert got2["q0"] == got["q0"] and got2["q5"] == got["q5"]  # untouched
    assert got2["q2"]["status"] == "timeout" and "1 s" in got2["q2"]["reason"]
    assert {r["run_id"] for r in got2.values()} == {got["q0"]["run_id"]}
    csv_rows = (results / "results.csv").read_text().strip().splitlines()
    assert len(csv_rows) == 1 + 3

    # Without --resume the same directory is refused rather than overwritten.
    third = nexmark("run", "--queries", "q1", *common, data=data)
    assert third.returncode != 0 and "--resume" in third.stderr
    assert _results(results) == got2


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.parametrize(
    "stop, code",
    [
        # Ctrl-C: the terminal sends SIGINT to the whole foreground process group
        (lambda proc: os.killpg(proc.pid, signal.SIGINT), 130),
        # `kill`, `timeout`, a CI runner: SIGTERM to the nexmark process alone
        (lambda proc: os.kill(proc.pid, signal.SIGTERM), 143),
    ],
    ids=["ctrl-c", "sigterm"],
)
def test_stopping_keeps_results_and_leaves_no_jvm(tmp_path, stop, code):
    results, temp = tmp_path / "results", tmp_path / "temp"
    temp.mkdir()  # the engine's scratch directory goes here, and must go with the engine
    args = ["run", "--queries", "q0,q1,q2", "--events", "300K", "--parallelism", "2"]
    args += ["--repeat", "1", *NO_CHECK_WINDOWS]  # the stop is under test, not the repeats
    proc = _start(
        *args, "--no-report", "--results", str(results), data=tmp_path / "data", TMPDIR=str(temp)
    )
    try:
        deadline = time.time() + 400
        while not (results / "results.json").exists() and time.time() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.5)
        assert (results / "results.json").exists(), "the first query never finished"
        children = psutil.Process(proc.pid).children(recursive=True)
        assert _java_children(proc)
        assert list(temp.glob("nexmark-flink-*")), "the engine made no scratch directory"
        stop(proc)
        _, stderr = proc.communicate(timeout=90)
    finally:
        _kill_group(proc)
    assert proc.returncode == code, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert _results(results)["q0"]["status"] == "ok"
    assert still_running(children) == []
    assert list(temp.glob("nexmark-flink-*")) == []
