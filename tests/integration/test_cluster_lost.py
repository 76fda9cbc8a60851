"""A cluster lost mid-run: the JobManager of Flink's local cluster (a failover run's, or a
remote one given by --flink-rest) and the master of a Spark standalone cluster
(--spark-master), each SIGKILLed at the start of a benchmark phase. The query fails with one
line, the run goes on where the engine can be started again (its own local cluster) or ends
cleanly where it cannot (a remote cluster gone), the finished results are kept and loadable,
and no process of the run is left."""

from __future__ import annotations

import os
import signal
import socket
import time

import psutil
import pytest
from run_killer import Run, cmdline, java_children, run_and_kill

from nexmark.errors import EngineError
from nexmark.results.store import load_results

# Seconds, not Flink's 50 s default: a lost JobManager is noticed fast on a test's budget.
HEARTBEAT = ["--set", "flink.heartbeat.interval=1 s", "--set", "flink.heartbeat.timeout=4 s"]

# Each holds the seconds a lost cluster takes to be noticed: alone on the machine.
pytestmark = pytest.mark.serial


# -- Flink ----------------------------------------------------------------------------------


def _kill_local_jobmanager(run: Run, pid: int) -> None:
    """SIGKILL the failover run's JobManager (a child of nexmark: `flink-jobmanager-...`)."""
    for jvm in java_children(pid):
        command = cmdline(jvm)
        if "StandaloneSessionClusterEntrypoint" in command:
            run.commands[jvm.pid] = command
            jvm.kill()
            return
    raise AssertionError("no JobManager to kill")


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_flink_local_cluster_jobmanager_killed(tmp_path):
    """A failover run's JobManager killed as q1's benchmark phase starts: q1 fails in one line
    naming the JobManager, the engine (a new local cluster) is started again and q2 runs to
    its end; exit 1, both recorded, every JVM of both clusters gone."""
    args = ["run", "--failover", "-q", "q1,q2", "-n", "200K", "--parallelism", "1"]
    args += ["--checkpoint-interval", "1s", "--results", str(tmp_path / "r"), "--no-report"]
    run = run_and_kill(
        [*args, *HEARTBEAT], tmp_path / "data", "q1 benchmark", _kill_local_jobmanager
    )
    assert run.fired, run.stderr[-3000:]
    assert run.returncode == 1, run.stderr[-3000:]
    assert run.errors() == [] and "Traceback" not in run.stderr, run.stderr[-3000:]
    got = {r.query: r for r in load_results(tmp_path / "r")}
    assert got["q1"].status.value == "failed", got["q1"]
    assert "the local Flink cluster's JobManager died" in got["q1"].reason, got["q1"].reason
    assert got["q2"].status.value == "ok" and got["q2"].throughput_eps > 0
    assert "restarting the engine" in run.stderr
    jobmanagers = [p for p, c in run.commands.items() if "StandaloneSessionClusterEntrypoint" in c]
    assert len(jobmanagers) == 2, "the killed JobManager and the next cluster's"
    assert run.left() == [], [run.commands[p] for p in run.left()]


@pytest.mark.flink
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_flink_remote_jobmanager_killed(tmp_path):
    """A --flink-rest cluster's JobManager killed as q1's benchmark phase starts: q1 fails in
    one line, the engine cannot be started again on a cluster that is gone, so the run ends
    there in one line (exit 4) with q0's result and q1's failure kept; the engine's own JVM
    (its gateway) is gone, the cluster's TaskManager is the test's to stop."""
    from nexmark.engines.flink.cluster import StandaloneCluster

    cluster = StandaloneCluster(tmp_path / "flink-home", slots=2)
    url = cluster.start()
    pids = cluster.pids()
    try:
        jobmanager = next(
            psutil.Process(p)
            for p in pids
            if "StandaloneSessionClusterEntrypoint" in cmdline(psutil.Process(p))
        )
        args = ["run", "-q", "q0,q1,q2", "-n", "200K", "--parallelism", "2", "--repeat", "1"]
        args += ["--flink-rest", url, "--results", str(tmp_path / "r"), "--no-report"]
        run = run_and_kill(args, tmp_path / "data", "q1 benchmark", lambda *_: jobmanager.kill())
    finally:
        cluster.stop()
    assert run.fired, run.stderr[-3000:]
    assert run.returncode == 4, run.stderr[-3000:]
    errors = run.errors()
    assert len(errors) == 1 and "Traceback" not in run.stderr, run.stderr[-3000:]
    assert url in errors[0] and "could not be started again" in errors[0], errors[0]
    got = {r.query: r for r in load_results(tmp_path / "r")}
    assert set(got) == {"q0", "q1"}
    assert got["q0"].status.value == "ok" and got["q0"].throughput_eps > 0
    assert got["q1"].status.value == "failed" and "\n" not in got["q1"].reason
    assert url in got["q1"].reason, got["q1"].reason
    assert run.jvms and run.left() == [], [run.commands[p] for p in run.left()]
    assert not [p for p in pids if psutil.pid_exists(p)], "the test's cluster was not stopped"


# -- Spark ----------------------------------------------------------------------------------


def test_a_spark_master_that_does_not_answer_is_one_line_at_once():
    """Checked before Spark starts: Spark itself retries for a minute, then fails on a stopped
    SparkContext."""
    from nexmark.engines.spark.cluster import check_standalone_master

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        check_standalone_master(f"spark://127.0.0.1:{port}")
    assert time.monotonic() - started < 5
    assert str(caught.value) == (
        f"the Spark master spark://127.0.0.1:{port} does not answer "
        f"(127.0.0.1:{port}: Connection refused)"
    )
    check_standalone_master("local[2]")  # not a standalone master: nothing to check


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("lost", ["master", "cluster"])
def test_spark_master_killed(tmp_path, lost):
    """A --spark-master cluster's master killed as q1's benchmark phase starts.

    master: a running application does not need its standalone master (it only grants
    executors), so q1 and q2 run to their end on the executors they have: exit 0, all three
    recorded. cluster: the worker and its executors are killed with it: q1 fails in one line
    (its executor lost), no Spark can start again without a master, so the run ends in one line
    (exit 4) with q0 and q1 recorded, in seconds rather than at the query's timeout. Either
    way the driver JVM and every executor are gone."""
    from nexmark.engines.spark.cluster import StandaloneCluster

    with StandaloneCluster(cores=2, memory="2g", log_dir=tmp_path / "logs") as cluster:
        master = psutil.Process(cluster.master.pid)
        daemons = [psutil.Process(pid) for pid in cluster.pids()]
        args = ["run", "--engine", "spark", "--spark-master", cluster.url, "-q", "q0,q1,q2"]
        args += ["-n", "40000", "--repeat", "1", "--timeout", "2min", "--no-report"]
        args += ["--results", str(tmp_path / "r"), "--set", "spark.spark.executor.memory=1g"]

        def lose(*_):
            master.kill()
            if lost == "cluster":
                os.killpg(cluster.worker.pid, signal.SIGKILL)  # the worker and its executors

        run = run_and_kill(args, tmp_path / "data", "q1 benchmark", lose)
        executors = [p for d in daemons for p in d.children(recursive=True)]
    assert run.fired, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "ERROR" not in run.stderr, run.stderr[-3000:]
    got = {r.query: r for r in load_results(tmp_path / "r")}
    assert got["q0"].status.value == "ok" and got["q0"].throughput_eps > 0
    if lost == "master":
        assert run.returncode == 0 and run.errors() == [], run.stderr[-3000:]
        assert {q: r.status.value for q, r in got.items()} == dict.fromkeys(got, "ok")
        assert set(got) == {"q0", "q1", "q2"}
    else:
        assert run.returncode == 4, run.stderr[-3000:]
        (line,) = run.errors()
        assert "the engine could not be started again after the failure" in line, line
        assert f"the Spark master {cluster.url} does not answer" in line, line
        assert set(got) == {"q0", "q1"} and got["q1"].status.value == "failed"
        # A task running on the lost executor fails the query; else the driver waits for
        # executors, and the engine finds its cluster lost within seconds, not the timeout.
        reason = got["q1"].reason
        assert "\n" not in reason and (
            "ExecutorLostFailure" in reason or "the Spark cluster is lost: no executor" in reason
        ), reason
        assert run.after_kill_s < 60, "the loss was found at the query's timeout"
    assert run.jvms and run.left() == [], [run.commands[p] for p in run.left()]
    assert not psutil.wait_procs(daemons + executors, timeout=30)[1]
