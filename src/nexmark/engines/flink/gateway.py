"""The PyFlink gateway JVM (started by us, with the Java we found) and the embedded cluster in it.

PyFlink keeps one gateway per Python process in `pyflink.java_gateway._gateway`. We launch the
JVM ourselves so that we own its process (for CPU accounting and for killing it), then let PyFlink
connect to it through its documented `PYFLINK_GATEWAY_PORT` path.
"""

from __future__ import annotations

import collections
import contextlib
import os
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from subprocess import Popen
from typing import Any

from nexmark.engines.flink.pinning import pin_connections_to_thread
from nexmark.engines.py4j_errors import forget_errors, own_errors
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError
from nexmark.java import JavaRuntime

_GATEWAY_CLASS = "org.apache.flink.client.python.PythonGatewayServer"
JVM_DEATH_GRACE_S = 2.0  # how long a failed call waits to see whether the JVM is dying


class Gateway:
    """One PyFlink gateway JVM.

    Args:
        java: The Java runtime to start it with.
        log_dir: Where Flink writes its log files.
        start_timeout_s: How long the JVM may take to open its gateway port.
        jvm_args: Extra JVM options (e.g. `-Xmx8g`); a `JVM_ARGS` of the environment comes
            after them, so the user's own wins.
        tmp_dir: The JVM's temporary directory (`java.io.tmpdir`); None: the system's.
        classpath: Jars added to the JVM's class path (the formats' jars, `jars.py`): on the
            system class path, so the planner discovers their format factories and the
            embedded cluster's tasks load their classes, as from Flink's lib/.
        env: More environment variables for the JVM (an object store's FLINK_PLUGINS_DIR and
            FLINK_CONF_DIR: `engines.flink.s3_access`).
    """

    def __init__(
        self,
        java: JavaRuntime,
        log_dir: Path,
        start_timeout_s: float = 60.0,
        jvm_args: Sequence[str] = (),
        tmp_dir: Path | None = None,
        classpath: Sequence[Path] = (),
        env: dict[str, str] | None = None,
    ):
        self.extra_env = dict(env or {})
        self.java = java
        self.log_dir = log_dir
        self.start_timeout_s = start_timeout_s
        self.jvm_args = [*jvm_args, *os.environ.get("JVM_ARGS", "").split()]
        self.tmp_dir = tmp_dir
        self.classpath = [Path(p) for p in classpath]
        self.process: Popen | None = None
        self.gateway: Any = None
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)

    @property
    def jvm(self) -> Any:
        return self.gateway.jvm

    def start(self) -> None:
        """Launch the JVM and connect PyFlink to it. Raise EngineError on failure."""
        import pyflink.java_gateway as java_gateway

        if java_gateway._gateway is not None:
            raise EngineError(
                "a PyFlink gateway is already running in this Python process; "
                "close the other Flink engine first"
            )
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="nexmark-gw-") as tmp:
            info = os.path.join(tmp, "port")
            self.process = self._launch(info)
            port = self._wait_for_port(info)
        os.environ["PYFLINK_GATEWAY_PORT"] = str(port)
        try:
            self.gateway = java_gateway.get_gateway()
        finally:
            os.environ.pop("PYFLINK_GATEWAY_PORT", None)
        own_errors(self.gateway._gateway_client)  # PyFlink's error hook, for this JVM only
        pin_connections_to_thread(self.gateway._gateway_client)  # the planner's thread locals

    def _launch(self, info_path: str) -> Popen:
        from pyflink.pyflink_gateway_server import launch_gateway_server_process

        env = dict(os.environ, _PYFLINK_CONN_INFO_PATH=info_path, FLINK_LOG_DIR=str(self.log_dir))
        env.update(self.extra_env)
        env["JAVA_HOME"] = str(self.java.home)
        # PyFlink puts JVM_ARGS first on the java command line (FLINK_ENV_JAVA_OPTS would
        # replace the --add-opens options of its config.yaml).
        # The temporary directory is this run's own path, not part of the setup: kept out of
        # `jvm_args` (which results record), and first, so a user's JVM_ARGS can override it.
        tmp = [f"-Djava.io.tmpdir={self.tmp_dir}"] if self.tmp_dir is not None else []
        env["JVM_ARGS"] = " ".join([*tmp, *self.jvm_args])
        env.setdefault("LOG4J_PROPERTIES", str(self._log_config()))
        # PyFlink's launcher builds the class path from lib/, opt/flink-python*.jar and
        # HADOOP_CLASSPATH (pyflink_gateway_server.construct_hadoop_classpath): ours go there,
        # before a user's own.
        if self.classpath:
            own = os.pathsep.join(str(p) for p in self.classpath)
            env["HADOOP_CLASSPATH"] = os.pathsep.join(
                p for p in (own, os.environ.get("HADOOP_CLASSPATH", "")) if p
            )
        saved = os.environ.get("JAVA_HOME")
        # PyFlink picks the java binary from this process's JAVA_HOME, not from `env`.
        os.environ["JAVA_HOME"] = str(self.java.home)
        try:
            process = launch_gateway_server_process(env, ["-c", _GATEWAY_CLASS, "local"])
        finally:
            if saved is None:
                os.environ.pop("JAVA_HOME", None)
            else:
                os.environ["JAVA_HOME"] = saved
        threading.Thread(target=self._drain, args=(process,), daemon=True).start()
        return process

    def _log_config(self) -> Path:
        """PyFlink's log4j-cli.properties, but Hadoop's loggers (the parquet format's codec
        pool logs every decompressor it creates at INFO) write to the log file, not stdout."""
        import pyflink

        text = (Path(pyflink.__file__).parent / "conf" / "log4j-cli.properties").read_text()
        text = text.replace(
            "logger.hadoop.appenderRef.console.ref = ConsoleAppender",
            "logger.hadoop.appenderRef.file.ref = FileAppender\nlogger.hadoop.additivity = false",
        )
        path = self.log_dir / "log4j-gateway.properties"
        path.write_text(text)
        return path

    def _drain(self, process: Popen) -> None:
        # An unread stderr pipe would block the JVM once full; keep the tail for error messages.
        for line in process.stderr:
            self._stderr.append(line.decode(errors="replace").rstrip())

    def _wait_for_port(self, info_path: str) -> int:
        def written() -> bool:
            if os.path.isfile(info_path) and os.path.getsize(info_path) >= 4:
                return True
            if self.process.poll() is not None:
                time.sleep(0.2)  # let the drain thread catch the last lines
                raise EngineError(
                    f"the Flink JVM ({self.java.executable}) exited at start "
                    f"with code {self.process.returncode}: {self.last_output()}"
                )
            return False

        poll_until(
            written,
            self.start_timeout_s,
            0.05,
            f"the Flink JVM did not start within {self.start_timeout_s:.0f} s",
            EngineError,
            on_timeout=self.stop,
        )
        with open(info_path, "rb") as fh:
            return struct.unpack("!I", fh.read(4))[0]

    def last_output(self) -> str:
        return " | ".join(self._stderr) or "no output"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def check_alive(self, grace_s: float = 0.0) -> None:
        """Raise EngineError if the JVM has died (waiting up to `grace_s` for a dying one)."""
        if self.process is not None and grace_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace_s)
        if self.process is not None and self.process.poll() is not None:
            raise EngineError(
                f"the Flink JVM (pid {self.process.pid}) died with exit code "
                f"{self.process.returncode}"
            )

    def stop(self, timeout_s: float = 15.0) -> None:
        """Disconnect PyFlink and end the JVM (terminate, then kill). Safe to call twice."""
        import pyflink.java_gateway as java_gateway

        if self.gateway is not None:
            forget_errors(self.gateway._gateway_client)
            with contextlib.suppress(Exception):  # the JVM may already be gone
                self.gateway.shutdown()
            if java_gateway._gateway is self.gateway:
                java_gateway._gateway = None
            self.gateway = None
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except Exception:  # noqa: BLE001 - TimeoutExpired: it ignored SIGTERM
                self.process.kill()
                self.process.wait(timeout_s)


def start_mini_cluster(gateway: Gateway, options: dict[str, str], slots: int) -> tuple[Any, str]:
    """Start Flink's MiniCluster inside the gateway JVM; return it and its REST URL.

    Args:
        gateway: A started gateway.
        options: Flink options for the cluster (must include `rest.port`).
        slots: Task slots of its single TaskManager (the highest parallelism it can run).
    """
    jvm = gateway.jvm
    java_map = jvm.java.util.HashMap()
    for key, value in options.items():
        java_map.put(key, value)
    conf = jvm.org.apache.flink.configuration.Configuration.fromMap(java_map)
    minicluster = jvm.org.apache.flink.runtime.minicluster
    cfg = (
        minicluster.MiniClusterConfiguration.Builder()
        .setConfiguration(conf)
        .setNumTaskManagers(1)
        .setNumSlotsPerTaskManager(slots)
        .build()
    )
    cluster = minicluster.MiniCluster(cfg)
    cluster.start()
    return cluster, str(cluster.getRestAddress().get().toString())


def table_environment(options: dict[str, str]) -> Any:
    """A streaming TableEnvironment with `options`, leaving the gateway thread's context class
    loader as it was.

    PyFlink's `EnvironmentSettings.Builder.build()` wraps the thread's context class loader in
    a new, empty URLClassLoader and installs it, every time: after N jobs every class lookup
    through the gateway walks N loaders (measured over 80 jobs: a submission's py4j calls
    slowed from 0.3 to 0.7 ms each, the submission from 0.52 to 1.94 s, and the JVM's CPU per
    job grew with it). The table environment keeps its own loader; the thread gets its old one
    back, so every job starts from the same depth.
    """
    from pyflink.common import Configuration
    from pyflink.java_gateway import get_gateway
    from pyflink.table import EnvironmentSettings, TableEnvironment

    thread = get_gateway().jvm.Thread.currentThread()
    loader = thread.getContextClassLoader()
    try:
        conf = Configuration()
        for key, value in options.items():
            conf.set_string(key, value)
        settings = EnvironmentSettings.new_instance().in_streaming_mode()
        return TableEnvironment.create(settings.with_configuration(conf).build())
    finally:
        thread.setContextClassLoader(loader)
