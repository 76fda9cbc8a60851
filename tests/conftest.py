"""Shared fixtures: small real datasets, ONE embedded Flink (and Spark, and s3proxy) for the whole
session, and `nexmark` through its entry point in process.

Every JVM start costs seconds on a 2-core machine, so tests that only need *an* engine share
`flink_engine`; tests that kill or misconfigure an engine start their own. Every Python start
costs about a second: a command refused before any work runs in process (`nexmark_main`).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
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


# The modules whose tests start clusters, kill workers, run a broker or feed at a rate: minutes
# each. Run first, so that `make test`'s two engine workers (a whole module each) end together,
# not one of them finishing them alone while the other idles.
HEAVY_FIRST = ("integration", "sources")
HEAVY_MODULES = ("test_s3_probes.py",)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def heavy_first(item: pytest.Item) -> int:
        heavy = item.path.parent.name in HEAVY_FIRST or item.path.name in HEAVY_MODULES
        return 0 if heavy else 1

    items.sort(key=heavy_first)  # stable: each module's order kept


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


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """One local s3proxy (a JVM over a temporary folder) for the session's object-store tests:
    each module makes buckets of its own on it (`make_bucket`), so none sees another's objects.
    Stopped at the end of the session, its process with it."""
    from nexmark.storage.s3proxy import S3Proxy

    with S3Proxy(tmp_path_factory.mktemp("s3proxy")) as server:
        pid = server.pid()
        yield server
    assert not _running(pid), "the s3proxy outlived its stop"


def _running(pid: int | None) -> bool:
    try:
        return pid is not None and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


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
             "from nexmark.protocol.preparation.runlock import RunLock; "
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


@pytest.fixture
def nexmark_main(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., subprocess.CompletedProcess]]:
    """`nexmark ARGS` through its entry point in this process: the arguments and the answer of
    `cli_process.nexmark` (an exit code, stdout, stderr), without a Python start. For what is
    refused before any work; the variables are set for the test, and what the entry point
    changes in the process (SIGTERM's handler, --quiet, the root logger) is put back after."""
    from nexmark import console
    from nexmark.cli.app import main

    def run(
        *args: str, data: Path | None = None, env: dict[str, str] | None = None, **variables: str
    ) -> subprocess.CompletedProcess:
        data_dir = {} if data is None else {"NEXMARK_DATA_DIR": str(data)}
        for key, value in {**data_dir, **(env or {}), **variables}.items():
            monkeypatch.setenv(key, value)
        capsys.readouterr()  # only this command's output
        with pytest.raises(SystemExit) as done:
            main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(
            ["nexmark", *args], done.value.code or 0, out.out, out.err
        )

    handler, quiet = signal.getsignal(signal.SIGTERM), console.quiet()
    handlers = list(logging.getLogger().handlers)
    yield run
    if handler is not None:  # None: a handler not set from Python, nothing to put back
        signal.signal(signal.SIGTERM, handler)
    console.set_quiet(quiet)
    logging.getLogger().handlers[:] = handlers
