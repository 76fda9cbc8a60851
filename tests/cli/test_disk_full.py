"""A full disk, met for real on a small file system of the test's own (a size-limited tmpfs,
mounted and removed by the fixture; skipped with the reason where the machine cannot mount):
while a dataset is generated, while a query checkpoints, while results are written. Each ends
in one line naming the path and the space, a non-zero exit, the results of finished queries
intact and loadable, no JVM left, and never a partial dataset taken for complete."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nexmark.errors import DiskFullError
from nexmark.results.store import ResultStore, load_results

CONSTRUCTED = Path(__file__).parent.parent / "data" / "constructed" / "quick-base"


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """A factory: `small_fs(mib)` mounts a tmpfs of that size and returns its directory; every
    mount is removed at the end, whatever the test left in it."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system (tmpfs) needs root")
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("no mount/umount command on this machine")
    mounts: list[Path] = []

    def mount(mib: int) -> Path:
        where = tmp_path / f"small-{len(mounts)}"
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={mib}m", "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            pytest.skip(f"this machine cannot mount a tmpfs: {done.stderr.strip()}")
        mounts.append(where)
        return where

    try:
        yield mount
    finally:
        for where in mounts:
            subprocess.run(["umount", "-l", str(where)], check=False)


def fill(where: Path, leave: int = 0) -> Path:
    """Fill the file system of `where` up to `leave` free bytes with a ballast file."""
    ballast = where / "ballast"
    size = shutil.disk_usage(where).free - leave
    with open(ballast, "wb") as fh, contextlib.suppress(OSError):
        os.posix_fallocate(fh.fileno(), 0, max(1, size))
    return ballast


def nexmark(*args: str, data: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "nexmark", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NEXMARK_DATA_DIR": str(data), "COLUMNS": "200", **env},
        timeout=600,
    )


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
    done = nexmark(*args, data=small, NEXMARK_FREE_BYTES=str(10**10))
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
