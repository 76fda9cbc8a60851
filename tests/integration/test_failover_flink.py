"""Failover on a real Flink: a TaskManager of a local cluster is SIGKILLed in the benchmark
phase, a replacement takes over from the latest periodic checkpoint, and the committed rows
still match the reference exactly, for an insert-only query (q1) and a retracting one (q4);
closing the engine, or Ctrl-C in the middle of the outage, leaves no process behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

pytestmark = [pytest.mark.flink, pytest.mark.slow]

# 600K events at parallelism 1: the 150K of the benchmark phase take seconds to read, so the
# kill (half of them read, and a periodic checkpoint every second done) lands mid-stream.
EVENTS, RATE, FILES = 600_000, 1000, 1
# Seconds, not Flink's 50 s default: the outage stays short on a test's budget.
HEARTBEAT = ["flink.heartbeat.interval=1 s", "flink.heartbeat.timeout=4 s"]


def _alive(proc: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    return False


@pytest.mark.timeout(900)
def test_a_killed_taskmanager_loses_and_duplicates_nothing(tmp_path):
    """`nexmark verify --failover` on q1 (insert-only) and q4 (retracting): both match the
    reference exactly, the killed TaskManager and every JVM of the cluster are gone at the end.

    A subprocess, as a user runs it: PyFlink allows one gateway per process, and the test
    session's shared embedded Flink holds it."""
    args = ["verify", "--failover", "-q", "q1,q4", "-n", str(EVENTS), "--event-rate", str(RATE)]
    args += ["--parallelism", str(FILES), "--checkpoint-interval", "1s", "--timeout", "300"]
    for option in HEARTBEAT:
        args += ["--set", option]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        env={**os.environ, "COLUMNS": "400"},  # one line per query in the table
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: dict[int, psutil.Process] = {}
    commands: dict[int, str] = {}  # read while the JVM lives
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    try:
        while proc.poll() is None:  # every JVM the run starts: the cluster and its replacement
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(proc.pid).children(recursive=True):
                    if _is_java(child) and child.pid not in seen:
                        seen[child.pid] = child
                        commands[child.pid] = " ".join(_cmdline(child))
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(10)
    output = "".join(lines)
    assert proc.returncode == 0, output[-3000:]
    rows = {ln.split()[1]: ln for ln in output.splitlines() if ln.startswith("│ q")}
    assert set(rows) == {"q1", "q4"}, output[-3000:]
    for row in rows.values():
        assert "│ match" in row, row
    # The verdicts' table, printed last (the progress lines before it narrate the kills too)
    table = output[output.rindex("nexmark verify on") :]
    flat = " ".join(table.replace("│", " ").split())  # the Details column may wrap
    assert flat.count("failover: killed TaskManager tm-") == 2, output[-3000:]
    assert flat.count("read again") == 2, output[-3000:]
    assert "(-" not in flat, output[-3000:]  # a replay is never negative (a lagged count)
    taskmanagers = [pid for pid, command in commands.items() if "flink-tm-" in command]
    assert len(taskmanagers) >= 3, "a TaskManager, a kill and its replacement per query"
    assert not [p.pid for p in seen.values() if _alive(p)], "a JVM of the run survived"


@pytest.mark.timeout(300)
def test_ctrl_c_during_the_outage_stops_the_cluster_and_the_replacement(tmp_path):
    """`nexmark run --failover` interrupted while the replacement TaskManager starts: exit
    code 130 and not one of the cluster's processes left."""
    env = {**os.environ, "NEXMARK_DATA_DIR": str(tmp_path / "data")}
    args = ["run", "--failover", "-q", "q0", "-n", "200K", "--parallelism", "1"]
    args += ["--checkpoint-interval", "1s", "--results", str(tmp_path / "r"), "--no-report"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        seen = _wait_for_replacement(proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
        assert not [p.pid for p in seen if _alive(p)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _wait_for_replacement(proc: subprocess.Popen) -> list[psutil.Process]:
    """Every JVM under `proc` once the replacement TaskManager (`tm-2`) has been started."""
    deadline = time.time() + 240
    while time.time() < deadline:
        assert proc.poll() is None, "nexmark ended before its failover"
        jvms = [c for c in psutil.Process(proc.pid).children(recursive=True) if _is_java(c)]
        if any("flink-tm-2-" in " ".join(_cmdline(j)) for j in jvms):
            return jvms
        time.sleep(0.2)
    raise AssertionError("no replacement TaskManager started in time")


def _is_java(proc: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return "java" in proc.name()
    return False


def _cmdline(proc: psutil.Process) -> list[str]:
    with contextlib.suppress(psutil.Error):
        return proc.cmdline()
    return []
