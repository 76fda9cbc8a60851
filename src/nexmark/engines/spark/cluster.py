"""A standalone Spark cluster on this machine, started from the pip distribution.

PySpark's wheel ships Spark's jars and `bin/spark-class` (not `sbin/start-master.sh`), which is
all a standalone master and worker need: `spark-class org.apache.spark.deploy.master.Master`
and `... deploy.worker.Worker spark://host:port`. Each runs in the foreground in its own process
group, so `stop()` ends each one with all its children (the worker's executor JVMs) on every
path, and a crashed test leaves nothing behind.

This is how the tests run a query through `spark://`; `nexmark run --spark-master URL` takes
any standalone master, this one or a real cluster's. `executors` lists an application's
executors for the result's setup (docs/clusters.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from nexmark.engines.capabilities import Worker
from nexmark.engines.spark.java import find_spark_java
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError
from nexmark.processes import free_port

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"


def spark_home() -> Path:
    """The pip distribution's Spark home (its `bin/spark-class` and `jars/`)."""
    import pyspark

    return Path(pyspark.__file__).parent


class StandaloneCluster:
    """One master and `workers` workers on 127.0.0.1, each a separate JVM.

    Args:
        cores: Cores each worker offers to applications.
        memory: Memory each worker offers (`"2g"`); an application's executors take
            `spark.executor.memory` of it each.
        workers: Worker processes (each launches the application's executor on it).
        log_dir: Where the daemons write their logs (default: a temporary directory).
        start_timeout_s: Limit for the worker to register with the master.
    """

    def __init__(
        self,
        cores: int = 2,
        memory: str = "2g",
        log_dir: Path | None = None,
        start_timeout_s: float = 120.0,
        workers: int = 1,
    ) -> None:
        self.cores, self.memory, self.start_timeout_s = cores, memory, start_timeout_s
        self.worker_count = workers
        self._tmp = None if log_dir else tempfile.TemporaryDirectory(prefix="nexmark-spark-")
        self.log_dir = Path(log_dir or self._tmp.name)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.port, self.ui_port = free_port(), free_port()
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []
        self._worker_ports: list[int] = []
        self._killed: list[subprocess.Popen] = []  # killed on purpose: not a failed start

    @property
    def worker(self) -> subprocess.Popen | None:
        """The first worker (the only one by default)."""
        return self.workers[0] if self.workers else None

    @property
    def url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def start(self) -> StandaloneCluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        java = find_spark_java()
        env = dict(
            os.environ,
            SPARK_HOME=str(spark_home()),
            JAVA_HOME=str(java.home),
            SPARK_LOG_DIR=str(self.log_dir),
            SPARK_WORKER_DIR=str(self.log_dir / "work"),
            SPARK_NO_DAEMONIZE="1",
        )
        master_args = ["--host", HOST, "--port", str(self.port), "--webui-port", str(self.ui_port)]
        self.master = self._daemon("master", MASTER_CLASS, master_args, env)
        self._env = env
        for _ in range(self.worker_count):
            self._launch_worker()
        self._wait_for_worker()

    def _launch_worker(self) -> None:
        n = len(self.workers) + 1
        # Each its own work directory: an executor's files stay apart from another's.
        env = dict(self._env, SPARK_WORKER_DIR=str(self.log_dir / f"work-{n}"))
        port = free_port()  # known: the master's listing names a worker by it
        self._worker_ports.append(port)
        args = ["--host", HOST, "--port", str(port), "--cores", str(self.cores)]
        args += ["--memory", self.memory, "--webui-port", str(free_port()), self.url]
        name = "worker" if self.worker_count == 1 else f"worker-{n}"
        self.workers.append(self._daemon(name, WORKER_CLASS, args, env))

    def add_worker(self) -> None:
        """Start one more worker (a lost one's replacement) and wait until it registers."""
        self.worker_count += 1
        self._launch_worker()
        self._wait_for_worker()

    def _daemon(self, name: str, cls: str, args: list[str], env: dict) -> subprocess.Popen:
        log = (self.log_dir / f"{name}.log").open("wb")
        with log:
            return subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), cls, *args],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop() ends its children too
            )

    def state(self) -> dict:
        """The master's JSON status (`aliveworkers`, `cores`, `activeapps`, ...)."""
        with urllib.request.urlopen(f"http://{HOST}:{self.ui_port}/json/", timeout=5) as resp:
            return json.load(resp)

    def _wait_for_worker(self) -> None:
        def registered() -> bool:
            for name, proc in (("master", self.master), *self._named_workers()):
                if proc is not None and proc.poll() is not None and proc not in self._killed:
                    raise EngineError(
                        f"the Spark {name} exited with code {proc.returncode} "
                        f"(log: {self.log_dir / (name + '.log')})"
                    )
            with contextlib.suppress(OSError, ValueError):
                listed = self.state().get("workers", [])
                alive = {w.get("port") for w in listed if w.get("state") == "ALIVE"}
                wanted = zip(self.workers, self._worker_ports, strict=True)
                return alive >= {port for w, port in wanted if w not in self._killed}
            return False

        poll_until(
            registered,
            self.start_timeout_s,
            0.5,
            f"the Spark worker did not register with {self.url} within "
            f"{self.start_timeout_s:g} s (logs: {self.log_dir})",
            EngineError,
        )

    def _named_workers(self) -> list[tuple[str, subprocess.Popen]]:
        if len(self.workers) == 1:
            return [("worker", w) for w in self.workers]
        return [(f"worker-{i + 1}", w) for i, w in enumerate(self.workers)]

    def alive_workers(self) -> list[subprocess.Popen]:
        return [w for w in self.workers if w.poll() is None]

    def pids(self) -> list[int]:
        """The daemons' process ids (their process groups hold the executors)."""
        return [p.pid for p in (self.master, *self.workers) if p is not None]

    def kill_worker(self, index: int) -> None:
        """SIGKILL worker `index` with its executor (its process group): a machine lost. The
        master counts it among its workers until its timeout (60 s): `alive_workers` not."""
        proc = self.workers[index]
        self._killed.append(proc)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop(self) -> None:
        """End the workers (with their executors) and the master. Safe to call twice."""
        for proc in (*self.workers, self.master):
            if proc is None or proc.poll() is not None:
                continue
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        for proc in (*self.workers, self.master):  # executors left in a group after its leader
            if proc is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
        self.workers, self.master, self._worker_ports = [], None, []
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> StandaloneCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def executors(spark_context: Any) -> list[Worker]:
    """Every executor the application has had, the driver left out, from Spark's status store
    (kept with the UI off): id, host, cores, storage memory, and why a lost one was removed."""
    store = spark_context._jsc.sc().statusStore()
    listed = store.executorList(False)  # False: the dead ones too
    found = []
    for i in range(listed.length()):
        executor = listed.apply(i)
        if executor.id() == "driver":
            continue
        removed = executor.removeReason()
        found.append(
            Worker(
                id=str(executor.id()),
                kind="executor",
                host=str(executor.hostPort()).rsplit(":", 1)[0],
                slots=int(executor.totalCores()),
                memory_bytes=int(executor.maxMemory()),
                removed=str(removed.get()) if removed.isDefined() else None,
            )
        )
    return sorted(found, key=lambda w: int(w.id) if w.id.isdigit() else w.id)


def check_standalone_master(master: str | None, timeout_s: float = 5.0) -> None:
    """A standalone master (`spark://host:port`, or several for a standby) that nothing
    answers at is one line at once, where Spark would retry for a minute ("All masters are
    unresponsive! Giving up.") and then fail on a stopped SparkContext."""
    if not master or not master.startswith("spark://"):
        return
    errors = []
    for address in master.removeprefix("spark://").split(","):
        host, _, port = address.rpartition(":") if ":" in address else (address, "", "7077")
        try:
            with socket.create_connection((host, int(port)), timeout=timeout_s):
                return
        except (OSError, ValueError) as exc:
            errors.append(f"{address}: {getattr(exc, 'strerror', None) or exc}")
    raise EngineError(f"the Spark master {master} does not answer ({'; '.join(errors)})")
