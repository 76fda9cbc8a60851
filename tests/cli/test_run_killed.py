"""A runner killed outright (SIGKILL: no `finally` runs, as when its terminal is closed), then
`--resume`: a real `nexmark run` on the embedded Flink, killed in its second query."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from nexmark.protocol.preparation.leftovers import PROCESSES_NAME
from nexmark.protocol.preparation.runlock import LOCK_NAME

pytestmark = [pytest.mark.flink, pytest.mark.slow]


def _env(data: Path, temp: Path) -> dict[str, str]:
    return {**os.environ, "NEXMARK_DATA_DIR": str(data), "TMPDIR": str(temp)}


def _records(results: Path) -> dict[str, str]:
    """Each query's record as JSON text, and its CSV row."""
    doc = json.loads((results / "results.json").read_text())
    with open(results / "results.csv", newline="") as fh:
        rows = {row["query"]: row for row in csv.DictReader(fh)}
    return {
        r["query"]: json.dumps(r, sort_keys=True) + json.dumps(rows[r["query"]], sort_keys=True)
        for r in doc["results"]
    }


def _ours_alive(temp: Path) -> list[psutil.Process]:
    """Live processes (zombies aside) whose command line names this test's temp directory:
    the engines' JVMs (their java.io.tmpdir is under it)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if str(temp) in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


def test_a_killed_runner_is_resumed_with_no_jvm_left_and_finished_results_kept(tmp_path):
    results, data, temp = tmp_path / "results", tmp_path / "data", tmp_path / "temp"
    temp.mkdir()
    args = [sys.executable, "-m", "nexmark", "run", "--queries", "q0,q1", "--events", "200K",
            "--parallelism", "2", "--repeat", "1", "--no-report",
            "--results", str(results)]  # fmt: skip
    proc = subprocess.Popen(
        args, env=_env(data, temp), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    jvm = None
    try:
        deadline = time.time() + 400
        while not (results / "work" / "q1").exists() and time.time() < deadline:
            assert proc.poll() is None, "the run ended before its second query"
            time.sleep(0.2)
        assert (results / "work" / "q1").exists(), "the second query never started"
        before = _records(results)
        assert list(before) == ["q0"]

        # A second run on the same directory while this one runs: refused, one line.
        second = subprocess.run([*args, "--resume"], env=_env(data, temp), capture_output=True,
                                text=True, timeout=300)  # fmt: skip
        assert second.returncode == 2, second.stderr
        assert f"in use by another nexmark run (pid {proc.pid}, started " in second.stderr

        recorded = json.loads((results / PROCESSES_NAME).read_text())["processes"]
        (entry,) = [e for e in recorded if e["name"] == "java"]
        jvm = psutil.Process(entry["pid"])
        assert jvm.ppid() == proc.pid and entry["scratch"].startswith(str(temp))
        # Left alone, the gateway JVM ends itself within a second once PyFlink's watchdog (the
        # killed Python) stops answering; a JVM that cannot (a local cluster's TaskManagers,
        # one hung in its shutdown) is what the next run must stop. Frozen, this one cannot.
        jvm.suspend()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        time.sleep(2)
        assert jvm.is_running() and jvm.status() == psutil.STATUS_STOPPED  # orphaned
        assert jvm.ppid() != proc.pid and Path(entry["scratch"]).is_dir()
        assert (results / LOCK_NAME).exists() and (results / "work" / "q1").exists()

        again = subprocess.run([*args, "--resume"], env=_env(data, temp), capture_output=True,
                               text=True, timeout=600)  # fmt: skip
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if jvm is not None and jvm.is_running():
            jvm.kill()
    assert again.returncode == 0, again.stderr
    err = again.stderr.splitlines()
    stopped = f"note: stopped 1 engine process a killed run on {results} left running: java " \
        f"(pid {jvm.pid})"  # fmt: skip
    # reaped once the next command starts: before its plan, its dataset and its engine
    assert stopped in err and err.index(stopped) < min(
        i for i, line in enumerate(err) if line.startswith(("plan:", "dataset:"))
    ), again.stderr
    assert not jvm.is_running() or jvm.status() == psutil.STATUS_ZOMBIE
    assert f"was left locked by a killed run (pid {proc.pid}, started " in again.stderr
    assert f"note: removed the killed run's engine scratch directory {entry['scratch']}" in err
    assert "removed the unfinished work of an earlier run: q1" in err
    after = _records(results)
    assert after["q0"] == before["q0"]  # the finished query kept, byte for byte
    assert json.loads((results / "results.json").read_text())["results"][1]["status"] == "ok"
    assert _ours_alive(temp) == [] and list(temp.glob("nexmark-flink-*")) == []
    assert sorted(p.name for p in results.iterdir()) == ["results.csv", "results.json"]
