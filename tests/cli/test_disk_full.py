"""A full disk, met for real on a small file system of the test's own (a size-limited tmpfs,
mounted and removed by the fixture; skipped with the reason where the machine cannot mount):
while a dataset is generated, while a query checkpoints, while results are written. Each ends
in one line naming the path and the space, a non-zero exit, the results of finished queries
intact and loadable, no JVM left, and never a partial dataset taken for complete."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from cli_process import nexmark, still_running
from nexmark.errors import DiskFullError
from nexmark.results.store import ResultStore, load_results

CONSTRUCTED = Path(__file__).parent.parent / "data" / "constructed" / "quick-base"


def fill(where: Path, leave: int = 0) -> Path:
    """Fill the file system of `where` up to `leave` free bytes with a ballast file."""
    ballast = where / "ballast"
    size = shutil.disk_usage(where).free - leave
    with open(ballast, "wb") as fh, contextlib.suppress(OSError):
        os.posix_fallocate(fh.fileno(), 0, max(1, size))
    return ballast


def one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr[-3000:]
    return errors[0]


# -- generation ------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["generate", "run"])
def test_a_disk_full_while_generating_leaves_no_dataset(small_fs, tmp_path, command):
    """The free-space check passes (NEXMARK_FREE_BYTES pretends 10 GB), then the disk fills
    while the files are written: one line with the path and the sizes, exit 3, and nothing
    left that a later run could take for a dataset (no directory, no temp directory)."""
    small = small_fs(8)
    if command == "generate":
        args = ["generate", "--events", "1M", "--workers", "2", "--out", str(small / "ds")]
    else:  # `nexmark run` generates its dataset in NEXMARK_DATA_DIR before the engine starts
        args = ["run", "--events", "1M", "--queries", "q0", "--results", str(tmp_path / "r")]
    done = nexmark(*args, data=small, NEXMARK_FREE_BYTES=str(10**10), COLUMNS="200")
    assert done.returncode == 3, done.stderr[-3000:]
    line = one_error_line(done.stderr)
    assert "disk full writing the dataset" in line and str(small) in line, line
    assert "needs about" in line and "free of 8.0 MiB" in line, line
    assert list(small.iterdir()) == [], "a partial dataset or its temp files were left"
    assert not (tmp_path / "r").exists()  # no results directory for a run that never started


# -- results ---------------------------------------------------------------------------------


def test_a_disk_full_while_writing_results_keeps_those_written(small_fs):
    """The store writes both files beside their targets, then renames them: on a full disk
    the files already there stay whole, the JSON and the CSV alike, and loadable."""
    small = small_fs(1)
    records = load_results(CONSTRUCTED)
    store = ResultStore(small / "results")
    store.write(records[:2])
    before = {p.name: p.read_bytes() for p in (store.json_path, store.csv_path)}
    fill(small)
    with pytest.raises(DiskFullError) as caught:
        store.write(records)
    message = str(caught.value)
    assert "\n" not in message and str(store.dir) in message, message
    assert "need" in message and "free of 1.0 MiB" in message, message
    assert "those written before are intact" in message
    after = {p.name: p.read_bytes() for p in (store.json_path, store.csv_path)}
    assert after == before
    assert [r.query for r in store.load()] == [r.query for r in records[:2]]
    assert sorted(p.name for p in store.dir.iterdir()) == ["results.csv", "results.json"]


# -- a real run: checkpoints, then results ----------------------------------------------------


def _java_children(pid: int) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        children = psutil.Process(pid).children(recursive=True)
        return [c for c in children if "java" in (c.name() or "")]
    return []


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("full", ["checkpoint", "results"])
def test_a_disk_full_in_a_run_stops_it_and_keeps_finished_results(small_fs, tmp_path, full):
    """q0 finishes, then the results' file system fills while q19 runs.

    checkpoint: one small file system holds the results and the work directory (the engine's
    checkpoints); it is filled to 2 MiB free as q19 starts, and q19's 10 MiB phase checkpoint
    fails. results: the work directory is a file system of its own and q19 succeeds, but the
    results' one is full by then. Either way: one line naming the path and the space, exit 1,
    q0's record intact and loadable, q19 unrecorded (a --resume runs it), no JVM left."""
    results = small_fs(32) / "r"
    if full == "results":
        results.mkdir()
        (results / "work").mkdir()
        work_fs = small_fs(128)
        subprocess.run(["mount", "--bind", str(work_fs), str(results / "work")], check=True)
    args = ["run", "--queries", "q0,q19", "--events", "200K", "--parallelism", "2"]
    args += ["--repeat", "1", "--no-report", "--results", str(results)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        env={**os.environ, "NEXMARK_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(proc.communicate()[1]), daemon=True)
    reader.start()
    jvms: dict[int, psutil.Process] = {}
    filled = False
    try:
        while proc.poll() is None:
            for jvm in _java_children(proc.pid):
                jvms.setdefault(jvm.pid, jvm)
            if not filled and (results / "work" / "q19").exists():
                assert (results / "results.json").exists(), "q0 was not recorded first"
                fill(results.parent, leave=2 << 20 if full == "checkpoint" else 0)
                filled = True
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
        reader.join(30)
        if full == "results":
            subprocess.run(["umount", "-l", str(results / "work")], check=False)
    stderr = output[0] if output else ""
    assert filled, stderr[-3000:]
    assert proc.returncode == 1, stderr[-3000:]
    line = one_error_line(stderr)
    assert "disk full" in line and "free of 32.0 MiB" in line, line
    if full == "checkpoint":
        assert "q19 failed (phase checkpoint of job " in line and "No space left on device" in line
        assert f"work directory {results / 'work' / 'q19'}" in line, line
        assert "q19 unrecorded" in line and f"finished results are kept in {results}" in line
    else:
        assert f"disk full writing the results to {results}: they need" in line, line
        assert "(those written before are intact); q19 (ok) is not recorded" in line, line
    recorded = load_results(results)
    assert [(r.query, r.status.value) for r in recorded] == [("q0", "ok")]
    assert recorded[0].throughput_eps and recorded[0].throughput_eps > 0
    assert json.loads((results / "results.json").read_text())["results"][0]["query"] == "q0"
    assert len((results / "results.csv").read_text().splitlines()) == 2
    assert jvms, "the run started no JVM"
    assert still_running(jvms.values()) == []
