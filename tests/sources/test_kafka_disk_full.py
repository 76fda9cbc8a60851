"""A full disk under the embedded broker, met for real on a size-limited tmpfs of the test's
own (skipped where the machine cannot mount one): refused before loading when the load cannot
fit, and while loading when the disk fills. One line, non-zero exit, no JVM left, and the
load never taken for complete."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kafka_helpers import kafka_jvms

from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = pytest.mark.slow


def _load(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "nexmark", "load", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, NEXMARK_PROGRESS_INTERVAL="0.2"),
    )


def test_a_load_that_cannot_fit_is_refused_before_writing(small_fs, tmp_path: Path) -> None:
    ds = ensure_dataset(
        DatasetParams(events=1_000_000, files=2, seed=5), out=tmp_path / "ds", show_progress=False
    )
    kdir = small_fs(64)
    _, err = (proc := _load(str(ds.path), "--kafka-dir", str(kdir))).communicate(timeout=180)
    assert proc.returncode == 1
    errors = [ln for ln in err.strip().splitlines() if not ln.startswith("loading")]
    assert len(errors) == 1 and errors[0].startswith("error: the Kafka load needs about"), err
    assert "free of 64.0 MiB" in errors[0]
    assert kafka_jvms(kdir) == []
    assert not list((kdir / "data").glob("nexmark-e*"))  # no topic was created


def test_disk_full_while_loading_is_one_line_and_the_load_stays_incomplete(
    small_fs, tmp_path: Path
) -> None:
    ds = ensure_dataset(
        DatasetParams(events=2_000_000, files=2, seed=6), out=tmp_path / "ds", show_progress=False
    )
    kdir = small_fs(600)
    proc = _load(str(ds.path), "--kafka-dir", str(kdir))
    line, deadline = "", time.monotonic() + 180
    while not re.match(r"loading: [1-9]", line) and time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line or proc.poll() is None, proc.stderr.read()
    ballast = kdir / "ballast"  # fill the broker's disk while it writes
    with open(ballast, "wb") as fh, contextlib.suppress(OSError):
        os.posix_fallocate(fh.fileno(), 0, shutil.disk_usage(kdir).free)
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: disk full in {kdir / 'data'}"), err
    assert last.endswith("the load stays incomplete")
    assert kafka_jvms(kdir) == []
    ballast.unlink()
    _, err = (check := _load(str(ds.path), "--kafka-dir", str(kdir), "--check")).communicate(
        timeout=180
    )
    assert check.returncode == 4
    assert "no complete Kafka load" in err and "an interrupted load" in err
    assert kafka_jvms(kdir) == []
