"""Shared fixtures: small real datasets and ONE embedded Flink for the whole session.

Every JVM start costs seconds on a 2-core machine, so tests that only need *an* engine share
`flink_engine`; tests that kill or misconfigure an engine start their own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset

# Keep generated datasets out of the user's cache and out of the source tree.
os.environ.setdefault("NEXMARK_DATA_DIR", "/tmp/nexmark-test-data")


@pytest.fixture(scope="session")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("datasets")


def make_dataset(root: Path, events: int, files: int = 2, seed: int = 0) -> Dataset:
    params = DatasetParams(events=events, seed=seed, files=files)
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


@pytest.fixture(scope="session")
def small_dataset(data_root: Path) -> Dataset:
    """40K events (30K warm-up, 10K benchmark) in 2 files per part: seconds of event time."""
    return make_dataset(data_root, 40_000)


@pytest.fixture(scope="session")
def flink_engine() -> Iterator:
    """One embedded Flink (parallelism 2) shared by every test that only needs an engine."""
    from nexmark.engines.flink import FlinkEngine
    from nexmark.settings import Settings

    engine = FlinkEngine(Settings.load(overrides=["flink.parallelism.default=2"]))
    engine.start()
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(scope="session")
def spark_engine() -> Iterator:
    """One embedded Spark (local[cores], 2 shuffle partitions) shared by the Spark tests."""
    from nexmark.engines.spark import SparkEngine
    from nexmark.settings import Settings

    engine = SparkEngine(Settings.load(overrides=["spark.spark.sql.shuffle.partitions=2"]))
    engine.start()
    try:
        yield engine
    finally:
        engine.close()


@pytest.fixture(autouse=True)
def _cancel_leftover_flink_jobs(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that fails midway must not leave its jobs holding the shared engine's slots
    (every later test would then fail with NoResourceAvailableException)."""
    yield
    if "flink_engine" not in request.fixturenames:
        return
    engine = request.getfixturevalue("flink_engine")
    for job in list(engine._jobs):
        try:
            if not job.status().state.terminal:
                job.cancel(timeout_s=60)
        except Exception:  # noqa: BLE001 - best effort; the next test reports a real problem
            pass


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """A factory: `small_fs(mib)` mounts a tmpfs of that size and returns its directory, for
    meeting a full disk for real. At the end every process still using a mount (a broker or a
    JVM the test left behind on it) is killed and every mount removed, whatever the test left
    in it. Skipped with the reason where the machine cannot mount one (no root, no mount)."""
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
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"this machine cannot mount a tmpfs: {done.stderr.strip()}")
        mounts.append(where)
        return where

    try:
        yield mount
    finally:
        for where in mounts:
            for proc in _processes_using(where):  # never leave a process on a vanished mount
                proc.kill()
            subprocess.run(["umount", "-l", str(where)], check=False)


def _processes_using(where: Path) -> list[psutil.Process]:
    """Live processes whose command line names a path under `where` (the test's own)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if any(str(where) in part for part in cmd):
            found.append(proc)
    return found


@pytest.fixture
def lock_holder() -> Iterator[Callable[[Path], subprocess.Popen]]:
    """Start another process that holds a results directory's run lock, as a running `nexmark
    run` does, once it says so; killed at the end unless the test killed it first (as SIGKILL
    or a closed terminal ends a runner, without a release)."""
    started: list[subprocess.Popen] = []

    def hold(results: Path) -> subprocess.Popen:
        holder = subprocess.Popen(
            [sys.executable, "-c", "import sys, time; from pathlib import Path; "
             "from nexmark.protocol.runlock import RunLock; "
             "RunLock(Path(sys.argv[1])).__enter__(); "
             "print('held', flush=True); time.sleep(120)", str(results)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        started.append(holder)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        return holder

    yield hold
    for holder in started:
        holder.kill()
        holder.wait()
