"""A Spark standalone cluster of several workers, started for real: a master and two workers
(separate JVMs, one core each, each launching the application's executor), driven over
`--spark-master`; one worker is SIGKILLed with its executor in the middle of the benchmark
phase, as a machine lost.

Spark does not restore the query from a checkpoint here: the driver lives on, marks the
executor lost, and runs its tasks again on the other executor (the state store's partitions
loaded there from the checkpoint directory). What it did is read back from its event log
(`spark.eventLog.enabled`): the executor removed with its reason, tasks ended by
`ExecutorLostFailure`, and attempts after them that succeeded on the other executor. The
results still match the reference (`nexmark verify`). One cluster for the module, tiny data.

Where the dataset and checkpoints live is a parameter: "local" (one machine: every process
sees the same disk) or "s3", a local S3 (s3proxy) that the driver and both executors read the
dataset from and checkpoint to, through S3A (docs/object-store.md): the lost executor's state
partitions are loaded by the other one from the store. Each kill costs a minute of CI, so each
claim is made once: the run test takes the store, the verify test local files, and the event
log's account of the loss is checked on both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_killer import Run, run_and_kill

from nexmark.engines.spark.cluster import StandaloneCluster
from nexmark.results.store import load_results
from nexmark.storage.s3proxy import S3Proxy

pytestmark = [pytest.mark.spark, pytest.mark.slow]

DATA, CKPT = "nexmark-data", "nexmark-ckpt"  # the local S3's buckets
# Small slices: many micro-batches, so the benchmark phase lasts seconds and the kill lands
# in one. Task retries allowed: the project's default (1) fails a query at its first lost
# task, which on a cluster is the point of having another worker.
SPARK = [
    "spark.nexmark.slice.events=2500",
    "spark.spark.task.maxFailures=4",
    "spark.spark.executor.memory=1g",
    "spark.spark.eventLog.enabled=true",
    "spark.spark.eventLog.compress=false",  # plain JSON lines to read back
    "spark.spark.eventLog.rolling.enabled=false",  # one file
]
KILL_AFTER_S = 2.0  # after the benchmark phase starts: a batch is in flight on both executors


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    logs = tmp_path_factory.mktemp("spark-cluster")
    with StandaloneCluster(cores=1, memory="1500m", log_dir=logs, workers=2) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Proxy]:
    with S3Proxy(tmp_path_factory.mktemp("s3proxy"), buckets=(DATA, CKPT)) as server:
        yield server


def store_args(store: str, tmp_path: Path, request, monkeypatch) -> tuple[list[str], Path]:
    """The options that put the dataset and checkpoints in `store` (the local S3's variables
    set for the run), and the local data directory."""
    if store == "local":
        return [], tmp_path / "data"
    server = request.getfixturevalue("s3")
    for key, value in server.env().items():
        monkeypatch.setenv(key, value)
    return [
        "--data", f"s3://{DATA}/cluster", "--checkpoints", f"s3://{CKPT}/cluster",
    ], tmp_path / "data"  # fmt: skip


def run_with_worker_killed(
    cluster: StandaloneCluster, args: list[str], tmp_path: Path, extra: list[str], data: Path
) -> tuple[Run, Path]:
    while len(cluster.alive_workers()) < 2:  # a previous test killed one: its replacement
        cluster.add_worker()
    events = tmp_path / "events"
    events.mkdir()
    options = [*SPARK, f"spark.spark.eventLog.dir={events.as_uri()}"]
    args = [*args, "--engine", "spark", "--spark-master", cluster.url, *extra]
    for option in options:
        args += ["--set", option]
    victim = cluster.workers.index(cluster.alive_workers()[-1])

    def kill(*_: object) -> None:
        time.sleep(KILL_AFTER_S)
        cluster.kill_worker(victim)

    run = run_and_kill(args, data, "q17 benchmark", kill, timeout_s=400)
    assert run.fired, run.stderr[-3000:]
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-3000:]
    (log,) = events.iterdir()
    return run, log


def what_spark_did(event_log: Path) -> dict:
    """From the application's event log: executors added and removed (with the reason),
    tasks failed by a lost executor, and later attempts that succeeded elsewhere."""
    added, removed, lost_tasks, retried = {}, {}, [], []
    for line in event_log.read_text().splitlines():
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerExecutorAdded":
            added[event["Executor ID"]] = event["Executor Info"]["Host"]
        elif kind == "SparkListenerExecutorRemoved":
            removed[event["Executor ID"]] = event["Removed Reason"]
        elif kind == "SparkListenerTaskEnd":
            info, reason = event["Task Info"], event["Task End Reason"]["Reason"]
            if reason == "ExecutorLostFailure":
                lost_tasks.append((event["Stage ID"], info["Index"], info["Executor ID"]))
            elif reason == "Success" and info["Attempt"] > 0:
                retried.append((event["Stage ID"], info["Index"], info["Executor ID"]))
    return dict(added=added, removed=removed, lost_tasks=lost_tasks, retried=retried)


def assert_one_executor_lost_and_its_tasks_run_again(did: dict) -> None:
    """What the event log must show of the kill: two executors, the killed worker's removed
    (it alone) as lost, and any task it was running ended by the loss and run again on the
    other one."""
    assert len(did["added"]) == 2, did
    (lost,) = did["removed"]  # the killed worker's executor, and it alone
    assert "lost" in did["removed"][lost].lower() or "worker" in did["removed"][lost].lower()
    (survivor,) = set(did["added"]) - {lost}
    if did["lost_tasks"]:  # tasks it ran when it died: run again, on the survivor
        assert {e for *_, e in did["lost_tasks"]} == {lost}, did
        assert did["retried"] and {e for *_, e in did["retried"]} == {survivor}, did


@pytest.mark.timeout(900)
@pytest.mark.parametrize("store", ["s3"])
def test_q17_goes_on_when_a_worker_is_lost(cluster, tmp_path, store, request, monkeypatch):
    """`nexmark run --spark-master` on q17 with a worker killed 2 s into its benchmark phase:
    the result is ok, its setup names both executors, its cores count the executors' tasks;
    the event log shows the executor removed and its tasks run again on the other one. On the
    local S3 the phase snapshot restored is the store's."""
    args = ["run", "-q", "q17", "-n", "100K", "--parallelism", "2", "--repeat", "1"]
    args += ["--timeout", "5min", "--no-report", "--results", str(tmp_path / "r")]
    extra, data = store_args(store, tmp_path, request, monkeypatch)
    started = time.monotonic()
    _, event_log = run_with_worker_killed(cluster, args, tmp_path, extra, data)
    took = time.monotonic() - started

    (result,) = load_results(tmp_path / "r")
    assert result.status.value == "ok", result.reason
    assert result.throughput_eps and result.cores and result.cores > 0
    assert result.restored_from and result.recovery_time_s is not None
    if store == "s3":
        assert result.restored_from.startswith(f"s3://{CKPT}/cluster/"), result.restored_from
    executors = {w.id: w for w in result.setup.workers}
    assert len(executors) == 2, result.setup.workers  # listed when the run started
    for executor in executors.values():
        assert executor.kind == "executor" and executor.host == "127.0.0.1", executor
        assert executor.slots == 1 and executor.memory_bytes and executor.removed is None

    did = what_spark_did(event_log)
    assert set(did["added"]) == set(executors), did
    assert_one_executor_lost_and_its_tasks_run_again(did)
    print(f"\nq17 on 2 workers, one killed: {took:.0f} s; Spark: {did}")


@pytest.mark.timeout(900)
@pytest.mark.parametrize("store", ["local"])
def test_verify_q17_with_a_worker_lost_matches(cluster, tmp_path, store, request, monkeypatch):
    """`nexmark verify --spark-master` with a worker killed mid-phase: q17's rows match
    (local files: the store's path is the run test's, and the rows are the same code's), and
    the event log shows the loss on local files as the run test's does on the store."""
    args = ["verify", "-q", "q17", "-n", "100K", "--parallelism", "2", "--timeout", "5min"]
    extra, data = store_args(store, tmp_path, request, monkeypatch)
    started = time.monotonic()
    run, event_log = run_with_worker_killed(cluster, args, tmp_path, extra, data)
    took = time.monotonic() - started
    did = what_spark_did(event_log)
    assert_one_executor_lost_and_its_tasks_run_again(did)  # a worker really was lost
    print(f"\nverify q17 on 2 workers, one killed: {took:.0f} s; Spark: {did}")
