"""Spark on a standalone cluster: a master and a worker started from the pip distribution,
`nexmark run --spark-master spark://...` through them, both stopped, nothing left running.

One SparkContext per process, and the test session already holds the embedded one, so the run
is a `nexmark` subprocess (the command a user types). Executor task CPU accounting (cpu.py) is
checked here without a JVM on a scripted status store.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from nexmark.engines.spark.cluster import StandaloneCluster
from nexmark.engines.spark.cpu import ExecutorTaskCpu
from nexmark.results.store import load_results

# -- executor CPU from the status store, without Spark ------------------------------------


class _Stage:
    def __init__(self, stage_id: int, cpu_s: float, status: str) -> None:
        self.id, self.cpu_ns, self.status = stage_id, int(cpu_s * 1e9), status

    def stageId(self):  # noqa: N802 - Spark's names
        return self.id

    def attemptId(self):  # noqa: N802
        return 0

    def executorCpuTime(self):  # noqa: N802
        return self.cpu_ns

    def executorDeserializeCpuTime(self):  # noqa: N802
        return 0


class _Seq(list):
    def length(self):
        return len(self)

    def apply(self, i):
        return self[i]


class _StatusStore:
    """Spark's AppStatusStore as far as ExecutorTaskCpu reads it: stages newest first."""

    def __init__(self) -> None:
        self.stages: list[_Stage] = []
        self.reads = 0

    def stageList(self, statuses, *_):  # noqa: N802
        self.reads += 1
        wanted = set(statuses)
        return _Seq(s for s in sorted(self.stages, key=lambda s: -s.id) if s.status in wanted)


class _ArrayList(list):
    add = list.append


class _Jvm:
    class java:  # noqa: N801
        class util:  # noqa: N801
            ArrayList = _ArrayList

    class org:  # noqa: N801
        class apache:  # noqa: N801
            class spark:  # noqa: N801
                class status:  # noqa: N801
                    class api:  # noqa: N801
                        class v1:  # noqa: N801
                            class StageStatus:  # noqa: N801
                                valueOf = staticmethod(str)  # noqa: N815

    double = float


class _Context:
    def __init__(self, store: _StatusStore) -> None:
        self._jvm = _Jvm()
        self._gateway = type("G", (), {"new_array": staticmethod(lambda *_: [])})()
        sc = type("SC", (), {"statusStore": staticmethod(lambda: store)})()
        self._jsc = type("JSC", (), {"sc": staticmethod(lambda: sc)})()


def test_executor_task_cpu_adds_up_stages_and_never_goes_back():
    store = _StatusStore()
    cpu = ExecutorTaskCpu(_Context(store))
    store.stages = [_Stage(0, 1.0, "COMPLETE"), _Stage(1, 0.5, "ACTIVE"), _Stage(2, 0, "PENDING")]
    assert cpu.seconds() == pytest.approx(1.5)
    # stage 1 finishes after stage 3 started and finished; the store then drops stage 0
    store.stages = [_Stage(1, 2.0, "COMPLETE"), _Stage(2, 0.2, "ACTIVE")]
    store.stages.append(_Stage(3, 4.0, "COMPLETE"))
    assert cpu.seconds() == pytest.approx(1.0 + 2.0 + 4.0 + 0.2)
    store.stages = [_Stage(2, 1.0, "COMPLETE"), _Stage(3, 4.0, "COMPLETE")]
    assert cpu.seconds() == pytest.approx(1.0 + 2.0 + 4.0 + 1.0)


# -- a real standalone cluster ----------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.serial  # its master's free port was once taken by a neighbour's JVM in between
def test_a_run_through_a_standalone_master_then_nothing_is_left(tmp_path: Path):
    results = tmp_path / "results"
    with StandaloneCluster(cores=2, memory="2g", log_dir=tmp_path / "logs") as cluster:
        daemons = [psutil.Process(pid) for pid in cluster.pids()]
        done = subprocess.run(
            [sys.executable, "-m", "nexmark", "run", "--engine", "spark", "--spark-master",
             cluster.url, "-q", "q0,q17", "--events", "40000", "--repeat", "1",
             "--results", str(results),
             "--timeout", "5min", "--no-report", "--set", "spark.spark.executor.memory=1g"],
            capture_output=True, text=True, timeout=600, env=dict(os.environ),
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        apps = cluster.state()["completedapps"]
        executors = [p for d in daemons for p in d.children(recursive=True)]
    assert apps and {a["name"] for a in apps} == {"nexmark"}  # the jobs ran on its executors
    by_query = {r.query: r for r in load_results(results)}
    assert sorted(by_query) == ["q0", "q17"]
    for r in by_query.values():
        assert r.status.value == "ok", r.reason
        assert r.setup.engine_target == f"remote {cluster.url}"
        assert r.throughput_eps and r.cores and r.cores > 0
        assert r.restored_from and r.recovery_time_s is not None
    assert by_query["q17"].state_bytes_end and by_query["q17"].state_bytes_end > 0
    gone = psutil.wait_procs(daemons + executors, timeout=30)[1]
    assert not gone, f"still running: {[p.pid for p in gone]}"
