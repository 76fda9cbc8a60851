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
import time

import psutil
import pytest

from nexmark.engines.base import FailoverSupport
from nexmark.protocol.query_run import PhaseParts
from nexmark.verify.check import Status
from nexmark.verify.reference import load_events
from nexmark.verify.runner import VerifyOptions, verify_query
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]

# 600K events at parallelism 1: the 150K of the benchmark phase take seconds to read, so the
# kill (half of them read, and a periodic checkpoint every second done) lands mid-stream.
EVENTS, RATE, FILES = 600_000, 1000, 1
# Seconds, not Flink's 50 s default: the outage stays short on a test's budget.
HEARTBEAT = ["flink.heartbeat.interval=1 s", "flink.heartbeat.timeout=4 s"]


@pytest.fixture(scope="module")
def dataset():
    return ensure_dataset(DatasetParams(events=EVENTS, rate=RATE, files=FILES), show_progress=False)


@pytest.fixture(scope="module")
def data(dataset):
    return load_events(dataset.path)


@pytest.fixture(scope="module")
def failover_engine():
    """A Flink set up for failover: a local cluster of a JobManager and TaskManager processes."""
    from nexmark.engines.flink import FlinkEngine
    from nexmark.settings import Settings

    engine = FlinkEngine(Settings.load(overrides=["flink.parallelism.default=1", *HEARTBEAT]))
    support = engine.enable_failover()
    engine.start()
    try:
        yield engine, support
    finally:
        started = _cluster_processes(engine)
        engine.close()
        assert started and not [p for p in started if _alive(p)], "a cluster process survived"


def _cluster_processes(engine) -> list[psutil.Process]:
    local = engine._local
    procs = [local.jobmanager, *local.taskmanagers] if local else []
    return [psutil.Process(p.pid) for p in procs if p and p.alive()]


def _alive(proc: psutil.Process) -> bool:
    return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE


@pytest.mark.timeout(600)
@pytest.mark.parametrize("query", ["q1", "q4"])
def test_a_killed_taskmanager_loses_and_duplicates_nothing(
    failover_engine, dataset, data, tmp_path, query
):
    engine, support = failover_engine
    assert support is FailoverSupport.INJECT
    killed = [p.pid for p in engine._local.running_taskmanagers()]
    options = VerifyOptions(FILES, timeout_s=300.0, failover=support, checkpoint_interval_s=1.0)
    verdict = verify_query(engine, query, PhaseParts.of(dataset), data, tmp_path, options)

    assert verdict.status is Status.MATCH, (verdict.reason, verdict.diff)
    (note,) = [n for n in verdict.notes if n.startswith("failover:")]
    assert "killed TaskManager tm-" in note and "read again" in note, note
    # The TaskManager that ran the job was killed; its replacement runs.
    assert not any(psutil.pid_exists(pid) and _alive(psutil.Process(pid)) for pid in killed)
    assert engine._local.running_taskmanagers()


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
