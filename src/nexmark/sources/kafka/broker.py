"""A single-node Kafka broker (KRaft, broker and controller in one JVM) on loopback, or a user's
own cluster named by its bootstrap address.

`EmbeddedBroker` runs `kafka.Kafka` from the pinned jars (jars.toml, group `kafka-broker`) in a
work directory it owns: `server.properties`, `data/` (the log directory, formatted once with
`kafka.tools.StorageTool format`, so topics loaded there are kept for the next start),
`broker.log` (the broker's own log, through log4j 2) and `console.txt` (the JVM's output).
It starts the JVM as the Flink local cluster does (engines/flink/local_cluster.py): a session
of its own (a terminal's Ctrl-C reaches the runner, which stops it in order), and
PR_SET_PDEATHSIG so that it dies with the runner if the runner is killed itself. `stop` (also
on `close` and leaving the `with` block, so on every failure and on Ctrl-C/SIGTERM, which
`nexmark.interrupts` turns into KeyboardInterrupt) sends SIGTERM to its process group, then
SIGKILL after a grace time: no JVM is left behind.

`ExternalCluster` is a cluster the runner did not start (`--kafka-bootstrap HOST:PORT`): it is
only checked to answer; nothing is started or stopped, and the loader deletes no topic it did
not create (load.py).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import psutil

from nexmark import diskspace
from nexmark.errors import EngineError, UsageError
from nexmark.java import JavaRuntime, find_java
from nexmark.processes import die_with_parent, free_port
from nexmark.sources.kafka import jars

START_TIMEOUT_S = 90.0
STOP_GRACE_S = 20.0
# The broker's heap: it holds metadata and buffers, not the data (the page cache does).
HEAP = "512m"
# Free bytes below which a broker's file system counts as full (a segment's next batch).
DISK_FULL_BYTES = 8 << 20


class KafkaError(EngineError):
    """The broker could not be started or reached, or a topic is not what a load says."""


def check_port_free(port: int, host: str = "127.0.0.1") -> None:
    """Raises UsageError (one line) when `port` cannot be bound on `host`."""
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            why = "in use" if exc.errno == errno.EADDRINUSE else exc.strerror
            raise UsageError(
                f"port {port} on {host} is not free for the Kafka broker ({why})"
            ) from None


def parse_bootstrap(text: str) -> tuple[str, int]:
    """HOST:PORT (the first of a comma-separated list) as (host, port); UsageError if not."""
    first = text.split(",")[0].strip()
    host, sep, port = first.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--kafka-bootstrap {text!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def answers(host: str, port: int, timeout_s: float = 2.0) -> bool:
    """Whether something accepts TCP connections at host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def cluster_id() -> str:
    """A new KRaft cluster id: a random UUID in Kafka's base64 form (22 characters). Like
    Kafka's own `Uuid.randomUuid`, never one starting with "-": the storage tool would take it
    for an option (1 id in 32 did, failing the format)."""
    while True:
        found = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not found.startswith("-"):
            return found


def server_properties(data_dir: Path, port: int, controller_port: int) -> str:
    """One node, broker and controller, on loopback, keeping loaded events for ever."""
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "log.dirs": str(data_dir),
        # One node: every internal topic with one replica.
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # Events carry their event time (2024 by default) as the record timestamp: time-based
        # retention would delete them at once. The loader sets retention.ms=-1 per topic too.
        "log.retention.ms": "-1",
        # Topics are created by the loader, with the partitions it needs.
        "auto.create.topics.enable": "false",
        # Large segments: fewer files for a large load.
        "log.segment.bytes": str(1 << 30),
    }
    return "".join(f"{k}={v}\n" for k, v in props.items())


def log4j2_properties(log_file: Path) -> str:
    """log4j 2 configuration: INFO and above into `log_file`, nothing on the console."""
    return (
        "status = warn\n"
        "appender.file.type = File\n"
        "appender.file.name = file\n"
        f"appender.file.fileName = {log_file}\n"
        "appender.file.layout.type = PatternLayout\n"
        "appender.file.layout.pattern = [%d] %p %m (%c)%n\n"
        "rootLogger.level = info\n"
        "rootLogger.appenderRef.file.ref = file\n"
    )


class ExternalCluster:
    """A Kafka cluster the runner did not start (`--kafka-bootstrap HOST:PORT`)."""

    owned = False

    def __init__(self, bootstrap: str) -> None:
        self.host, self.port = parse_bootstrap(bootstrap)
        self.bootstrap = bootstrap

    def start(self, timeout_s: float = 10.0) -> str:
        """Checks that the first bootstrap address answers; starts nothing."""
        if not answers(self.host, self.port, timeout_s):
            raise KafkaError(f"Kafka broker at {self.bootstrap} not reachable (no TCP answer)")
        return self.bootstrap

    def stop(self) -> None:
        """Nothing to stop: the cluster is the user's."""

    def cpu_seconds(self) -> float | None:
        return None  # not ours to measure

    def __enter__(self) -> ExternalCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class EmbeddedBroker:
    """A single-node KRaft broker of the pinned jars, in `work_dir`.

    Args:
        work_dir: Its directory (created; kept, with the loaded topics, after `stop`).
        port: The client port on 127.0.0.1 (None: a free one).
        java: The Java runtime (None: `find_java()`).
        fetch: Fetch the broker's jars with mvn when they are not cached.
    """

    owned = True

    def __init__(
        self,
        work_dir: Path,
        port: int | None = None,
        java: JavaRuntime | None = None,
        fetch: bool = True,
    ) -> None:
        self.work_dir = Path(work_dir).resolve()  # the JVM runs inside it
        self.requested_port = port
        self.port = port
        self.java = java
        self.fetch = fetch
        self.process: subprocess.Popen | None = None
        self._cpu = 0.0

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.work_dir / "data"

    @property
    def log_file(self) -> Path:
        return self.work_dir / "broker.log"

    def start(self, timeout_s: float = START_TIMEOUT_S) -> str:
        """Format the storage if new, start the JVM, wait until it serves; its bootstrap.

        Raises:
            UsageError: The requested port is in use.
            JarsUnavailableError: The jars are not cached and cannot be fetched.
            KafkaError: The broker exited or did not answer in time (stopped then).
        """
        if self.port is not None:
            check_port_free(self.port)
        classpath = jars.ensure([jars.BROKER], fetch=self.fetch)
        java = self.java or find_java()
        self.port = self.port or free_port()
        controller_port = free_port()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        props = self.work_dir / "server.properties"
        props.write_text(server_properties(self.data_dir, self.port, controller_port))
        log_config = self.work_dir / "log4j2.properties"
        log_config.write_text(log4j2_properties(self.log_file))
        command = [
            str(java.executable),
            f"-Xmx{HEAP}",
            f"-Xms{HEAP}",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={log_config}",
            f"-Dkafka.logs.dir={self.work_dir}",
            "-cp",
            os.pathsep.join(str(p) for p in classpath),
        ]
        if not (self.data_dir / "meta.properties").is_file():
            self._format(command, props)
        with open(self.work_dir / "console.txt", "ab") as console:
            self.process = subprocess.Popen(
                [*command, "kafka.Kafka", str(props)],
                cwd=self.work_dir,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped as one
                preexec_fn=die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
            )
        try:
            self._wait_ready(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self.bootstrap

    def _format(self, command: list[str], props: Path) -> None:
        """`StorageTool format`: a new cluster id and the log directory's meta.properties."""
        done = subprocess.run(
            [*command, "kafka.tools.StorageTool", "format", "-t", cluster_id(), "-c", str(props)],
            cwd=self.work_dir,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise KafkaError(
                f"formatting the Kafka broker's storage in {self.data_dir} failed "
                f"(exit code {done.returncode}: {_java_error(done.stdout + done.stderr)})"
            )

    def _wait_ready(self, timeout_s: float) -> None:
        """Until a client gets the cluster's metadata with this broker in it."""
        from confluent_kafka.admin import AdminClient

        deadline = time.monotonic() + timeout_s
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "logger": quiet_logger()})
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise KafkaError(
                    f"the Kafka broker exited with code {self.process.returncode} while starting "
                    f"(see {self.log_file} and {self.work_dir / 'console.txt'})"
                )
            if answers("127.0.0.1", self.port, 0.5):
                with contextlib.suppress(Exception):
                    if _serving(admin.list_topics(timeout=2)):
                        return
            if time.monotonic() > deadline:
                raise KafkaError(
                    f"the Kafka broker did not answer on {self.bootstrap} within {timeout_s:.0f} s "
                    f"(see {self.log_file})"
                )
            time.sleep(0.2)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def cpu_seconds(self) -> float:
        """CPU seconds the broker's JVM used so far (kept after it stopped)."""
        if self.alive():
            with contextlib.suppress(psutil.Error):
                t = psutil.Process(self.process.pid).cpu_times()
                self._cpu = t.user + t.system
        return self._cpu

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM to its process group (a clean shutdown), SIGKILL after `grace_s`. Safe to
        call twice, and from a KeyboardInterrupt handler."""
        process = self.process
        if process is None:
            return
        self.cpu_seconds()  # its last figure, kept
        self.process = None
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        if self.requested_port is None:
            self.port = None

    close = stop

    def disk_full_reason(self) -> str | None:
        """'disk full in DIR (free of ...)' when the broker's file system is full: its log says
        so (Kafka stops a broker whose only log directory failed), or, since that log is on
        the same full disk and may say nothing, less than DISK_FULL_BYTES is free there."""
        said = False
        with contextlib.suppress(OSError), open(self.log_file, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - 200_000))
            said = diskspace.is_disk_full(fh.read().decode(errors="replace"))
        try:
            free = shutil.disk_usage(self.data_dir).free
        except OSError:
            free = None
        if said or (free is not None and free < DISK_FULL_BYTES):
            return f"disk full in {self.data_dir} ({diskspace.free_space(self.data_dir)})"
        return None

    def __enter__(self) -> EmbeddedBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _java_error(output: str) -> str:
    """The line of a JVM's output that says what failed (an exception's), not a stack frame."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    said = [ln for ln in lines if not ln.startswith("at ") and ("Exception" in ln or "rror" in ln)]
    return (said or lines or ["no output"])[0][:300]


def _serving(metadata) -> bool:
    """The broker is registered and every partition it holds (topics kept from an earlier
    start) has a leader again: reads and writes will be served."""
    if not metadata.brokers:
        return False
    return all(
        t.error is None and all(p.leader >= 0 and p.error is None for p in t.partitions.values())
        for t in metadata.topics.values()
    )


def quiet_logger() -> logging.Logger:
    """A logger for librdkafka's own lines (connection refused while a broker starts, ...),
    which it would print on stderr: kept out of the user's console. Errors reach the user as
    KafkaError lines instead."""
    logger = logging.getLogger("nexmark.kafka.client")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


def open_cluster(
    bootstrap: str | None, work_dir: Path, port: int | None = None
) -> EmbeddedBroker | ExternalCluster:
    """The user's cluster when `bootstrap` is given, else an embedded broker in `work_dir`."""
    if bootstrap:
        return ExternalCluster(bootstrap)
    return EmbeddedBroker(work_dir, port=port)


def default_work_dir() -> Path:
    """Where the embedded broker keeps its data: $NEXMARK_KAFKA_DIR, else
    ~/.cache/nexmark/kafka (loads are reused across runs, like datasets)."""
    env = os.environ.get("NEXMARK_KAFKA_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nexmark" / "kafka"
