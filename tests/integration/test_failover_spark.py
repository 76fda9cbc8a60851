"""Failover on a real Spark: the local driver JVM, which runs every task, is SIGKILLed with a
micro-batch in flight; a new driver restarts the query from its checkpoint directory, the
batch runs again, and the committed rows still match the reference exactly, for an append
query (q1) and an update-mode one (q17); no JVM of the run is left."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
import time

import psutil
import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# 100K events: the benchmark part's 25K in five slices of 5K, one micro-batch each, so the
# kill (half of them committed) lands with batches still to come.
ARGS = ["-n", "100K", "--event-rate", "1000", "--parallelism", "2", "--timeout", "300"]
ARGS += ["--checkpoint-interval", "100ms", "--set", "spark.nexmark.slice.events=5000"]
BENCHMARK_EVENTS = 25_000


def _java_under(pid: int) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        return [c for c in psutil.Process(pid).children(recursive=True) if "java" in c.name()]
    return []


def _alive(proc: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    return False


@pytest.mark.timeout(900)
def test_a_killed_driver_loses_and_duplicates_nothing(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", "verify", "--engine", "spark", "--failover"]
        + ["-q", "q1,q17", *ARGS],
        env={**os.environ, "COLUMNS": "400", "NEXMARK_DATA_DIR": str(tmp_path / "data")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    seen: dict[int, psutil.Process] = {}
    try:
        while proc.poll() is None:  # every driver JVM: the first, and one per failover
            for jvm in _java_under(proc.pid):
                seen.setdefault(jvm.pid, jvm)
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    reader.join(10)
    output = "".join(lines)
    assert proc.returncode == 0, output[-3000:]
    rows = {ln.split()[1]: ln for ln in output.splitlines() if ln.startswith("│ q")}
    assert set(rows) == {"q1", "q17"}, output[-3000:]
    for row in rows.values():
        assert "│ match" in row, row
    # The verdicts' table, printed last (the progress lines before it narrate the kills too)
    table = output[output.rindex("nexmark verify on") :]
    flat = " ".join(table.replace("│", " ").split())  # the Details column may wrap
    assert flat.count("failover: killed the Spark driver JVM") == 2, output[-3000:]
    # The kill waits for a micro-batch in flight: its events were counted as read, are
    # restored from before it and read again. Under load the whole part can be committed
    # before the kill point is seen (nothing in flight, nothing read again); at least one of
    # the two kills must land with a batch in flight, and every kill that restores to before
    # the part's end must read again what it counted past the restore point.
    kills = re.findall(r"at ([\d,]+) events, restored at ([\d,]+) \(([\d,]+) read again\)", flat)
    kills = [tuple(int(n.replace(",", "")) for n in k) for k in kills]
    assert len(kills) == 2, flat[-2000:]
    for killed, restored, replayed in kills:
        assert replayed == killed - restored and restored <= killed, flat[-2000:]
        if restored < BENCHMARK_EVENTS:
            assert replayed > 0, flat[-2000:]
    assert any(replayed > 0 for _, _, replayed in kills), flat[-2000:]
    assert len(seen) >= 3, "a driver, and a new one after each query's kill"
    assert not [p.pid for p in seen.values() if _alive(p)], "a JVM of the run survived"
