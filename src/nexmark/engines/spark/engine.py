"""The Spark engine: Structured Streaming through PySpark, one streaming query per job.

Target: `embedded` runs Spark in local mode (`local[N]`, N = cores) inside the JVM PySpark
launches; a master URL (`spark://host:7077`) targets a standalone cluster instead (the dataset
and work directories must then be reachable at the same paths from every worker).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import psutil

from nexmark.engines import profiling
from nexmark.engines.base import (
    SOURCE_ONLY,
    Capabilities,
    Engine,
    EngineInfo,
    FailoverSupport,
    InjectedFailure,
    JobSetup,
    JobSpec,
    ResultSemantics,
    SinkKind,
    Snapshot,
    StateTtlSupport,
    TargetOption,
)
from nexmark.engines.py4j_errors import forget_errors, own_errors
from nexmark.engines.source import KafkaSource
from nexmark.engines.spark import options as opts
from nexmark.engines.spark import restore, s3_access, source, statements, writes
from nexmark.engines.spark import store as store_check
from nexmark.engines.spark.checkpoint_dir import last_commit
from nexmark.engines.spark.cluster import check_standalone_master as cluster_master_answers
from nexmark.engines.spark.cluster import executors as cluster_executors
from nexmark.engines.spark.cpu import ExecutorTaskCpu
from nexmark.engines.spark.java import checked_spark_java
from nexmark.engines.spark.job import SparkJob, _spark_message
from nexmark.engines.spark.semantics import SEMANTICS
from nexmark.engines.support import UnsupportedQueries, process_tree_cpu_seconds, redacted
from nexmark.errors import EngineError, JarsUnavailableError
from nexmark.java import JavaRuntime
from nexmark.maven import KAFKA_JARS
from nexmark.settings import Settings
from nexmark.storage import files
from nexmark.storage.files import Location
from nexmark.storage.s3 import S3Settings, S3Url
from nexmark.workload import queries
from nexmark.workload.feed import Feed

# The driver JVM's own class path, set at its launch (embedded: the JVM that runs the tasks).
PROFILER_CLASSPATH_KEY = "spark.driver.extraClassPath"
FAILOVER_KILL = "the driver JVM (SIGKILL): in local mode it runs every task"
FAILOVER_RESTART = (
    "at once, as a supervisor would: a new driver JVM, the query restarted from its checkpoint "
    "directory (the batch in flight runs again)"
)
READY = (
    "the query wrote the offsets of its first new batch: its source listed the directory and "
    "that batch, which loads the restored state, is executing (rate-fed: or the query, its "
    "checkpoint's logs read, waits for data, before anything is released)"
)


class SparkEngine(Engine):
    """Apache Spark Structured Streaming through PySpark.

    Args:
        settings: Effective settings (default: the packaged recommended setup).
        master: A Spark master URL (`spark://host:7077`); None = `[spark] spark.master`
            (embedded `local[cores]` by default).
        start_timeout_s: Unused bound kept for symmetry with the Flink engine (PySpark's
            launcher has its own).
    """

    name = "spark"
    requires = ("pyspark",)
    install_command = "pip install 'nexmark[spark]'"

    @classmethod
    def sql_dir(cls):
        return statements.SQL_DIR

    target_options = (
        TargetOption(
            "--spark-master",
            "master",
            "Spark master URL, e.g. spark://host:7077 (default: embedded local[cores]).",
            "URL",
        ),
    )

    def __init__(
        self,
        settings: Settings | None = None,
        master: str | None = None,
        start_timeout_s: float = 180.0,
        **_: Any,
    ):
        self.settings = settings or Settings.defaults()
        self.master = master
        self.start_timeout_s = start_timeout_s
        self.spark: Any = None
        self.java: JavaRuntime | None = None
        self.java_version = ""
        self.jvm_pid: int | None = None
        self._executor_cpu: ExecutorTaskCpu | None = None  # on a cluster only
        self._jobs: list[SparkJob] = []
        self._unsupported = UnsupportedQueries("Spark", self._explain)
        self._confs = opts.session_confs(self.settings, master=master)
        self._failover = False
        self._profiling = False  # enable_profiling() was answered None
        self._profiler: profiling.InJvmProfiler | None = None
        self._cpu_of_dead_jvms = 0.0  # failover: what the killed drivers had used
        self._kafka_jars = False  # the session has Kafka's connector (`_start`: when cached)
        self._s3: S3Settings | None = None  # an object store's settings (use_object_store)
        self._reach: list[S3Url] = []  # what the executors must reach on it (checked at start)

    def capabilities(self) -> Capabilities:
        return Capabilities(
            queries=frozenset(
                q.name for q in queries.REGISTERED if statements.has_spark_sql(q.name)
            ),
            state_ttl=StateTtlSupport.NONE,  # Spark SQL cannot expire state by time
            targets=("embedded", "remote"),
            ready=READY,
            # Local mode: the driver JVM runs every task; it is killed and a new one resumes
            # the query from its checkpoint directory (docs/failover.md).
            failover=FailoverSupport.INJECT,
            # Each restore runs on its own copy of the checkpoint directory (`submit`).
            repeatable_restore=True,
            # The file source lists its directory at every trigger: released files are read
            # as they appear (a rate-fed query is ready once it waits for data).
            rate_feed=True,
            # A load's topic too (source.read_kafka_events): the benchmark phase is restored
            # onto the benchmark topic with the warm-up's state (`kafka_subscription`). Not
            # rate-fed: a rate-fed run releases files.
            sources=("files", "kafka"),
            # A foreachBatch sink brings a sample of each batch's rows back with the batch's
            # wall time (collect.stamp_writer) in place of the noop sink.
            latency_stamps=True,
        )

    def semantics(self) -> ResultSemantics:
        return SEMANTICS

    @property
    def target(self) -> str:
        master = self._confs.get(opts.MASTER_KEY, "local[*]")
        return f"embedded {master}" if master.startswith("local") else f"remote {master}"

    # -- lifecycle ---------------------------------------------------------------------------

    def enable_failover(self) -> FailoverSupport:
        if not self.target.startswith("embedded"):
            raise EngineError(
                "Spark failover runs kill the local driver JVM, which runs every task in local "
                f"mode; with a cluster master ({self.target.removeprefix('remote ')}) the driver "
                "is not the process running the tasks: run it embedded (no --spark-master)"
            )
        self._failover = True
        return FailoverSupport.INJECT

    def enable_profiling(self) -> str | None:
        """Embedded, the driver's JVM runs every task: the profiler goes there. With a cluster
        master the tasks run in executors elsewhere."""
        if self.spark is not None:
            raise EngineError("enable_profiling must be called before the Spark engine starts")
        if not self.target.startswith("embedded"):
            return "a cluster master's executors are not processes of this run: not profiled"
        self._profiling = True
        return None

    def profiler(self) -> profiling.InJvmProfiler | None:
        return self._profiler

    def use_object_store(self, settings: S3Settings, reach: list[S3Url]) -> None:
        """Read datasets from, and checkpoint to, an S3 store (docs/object-store.md): the
        session starts with S3A's jars and the store's `fs.s3a.*` options, and checks there,
        with a task on an executor, that it reads each of `reach` (a manifest) or writes
        under it (a checkpoint prefix)."""
        if self.spark is not None:
            raise EngineError("use_object_store must be called before the Spark engine starts")
        self._s3 = settings
        self._reach = list(reach)
        for key, value in s3_access.conf(settings).items():  # a --set one wins
            self._confs.setdefault(key, value)

    def start(self) -> None:
        if self.spark is not None:
            return
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self, extra_jars: list[Path] | None = None) -> None:
        cluster_master_answers(self._confs.get(opts.MASTER_KEY))
        # Jars beside PySpark's own (a session takes them only at its start): Kafka's
        # connector when it was fetched (or asked for), so a Kafka source needs no restart.
        jars = list(extra_jars or [])
        if self._s3 is not None:  # S3A and the AWS SDK (fetched at first use, then cached)
            jars += s3_access.jars()
        with contextlib.suppress(JarsUnavailableError):
            jars += KAFKA_JARS.ensure([source.KAFKA_CONNECTOR], fetch=False)
            self._kafka_jars = True
        self.java, self.java_version = checked_spark_java()  # one `java -version`, not two
        os.environ["JAVA_HOME"] = str(self.java.home)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        if SparkContext._active_spark_context is not None:
            raise EngineError("a SparkContext is already running in this process")
        builder = SparkSession.builder.appName("nexmark")
        for key, value in self._confs.items():
            builder = builder.config(key, value)
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        if self._profiling:  # on the driver's own class path: py4j finds its classes there
            own = self._confs.get(PROFILER_CLASSPATH_KEY)
            paths = [str(j) for j in profiling.jars()] + ([own] if own else [])
            builder = builder.config(PROFILER_CLASSPATH_KEY, os.pathsep.join(paths))
        if jars:  # after a user's own spark.jars, which it keeps
            listed = [self._confs["spark.jars"]] if self._confs.get("spark.jars") else []
            listed += [str(j) for j in dict.fromkeys(jars)]
            builder = builder.config("spark.jars", ",".join(listed))
        try:
            self.spark = builder.getOrCreate()
        except Exception as exc:  # noqa: BLE001 - the launcher's failure as one line
            raise EngineError(f"Spark did not start: {_spark_message(exc)}") from None
        self.spark.sparkContext.setLogLevel("FATAL")
        statements.quiet_query_context_loggers()
        gateway = SparkContext._gateway
        own_errors(gateway._gateway_client)  # PySpark's error hook, for this JVM only
        proc = getattr(gateway, "proc", None)
        self.jvm_pid = proc.pid if proc is not None else None
        if self._profiling:  # (a restarted driver is a new JVM: a new profiler)
            self._profiler = profiling.InJvmProfiler(self.spark._jvm)
        if not self.target.startswith("embedded"):  # the tasks run in executors elsewhere
            self._executor_cpu = ExecutorTaskCpu(self.spark.sparkContext)
        if self._reach:
            store_check.check_reach(self.spark, self._reach)
            self._reach = []  # once per engine: a restarted driver reaches what this one did

    def _check_alive(self) -> None:
        if self.spark is None:
            raise EngineError("the Spark engine is not started")
        if self.jvm_pid is not None and not psutil.pid_exists(self.jvm_pid):
            raise EngineError(f"the Spark JVM (pid {self.jvm_pid}) died")
        with contextlib.suppress(psutil.NoSuchProcess):
            if self.jvm_pid and psutil.Process(self.jvm_pid).status() == psutil.STATUS_ZOMBIE:
                raise EngineError(f"the Spark JVM (pid {self.jvm_pid}) died")
        self._check_cluster()

    def _check_cluster(self, every_s: float = 2.0) -> None:
        """On a standalone master, no executor left and the master gone is a lost cluster: a
        query would wait for executors until its timeout. (A master lost alone is no failure:
        the application keeps its executors, the master only grants them.) Checked every
        `every_s` at most: the samples call it every second."""
        master = str(self._confs.get(opts.MASTER_KEY, ""))
        now = time.monotonic()
        if not master.startswith("spark://") or now < getattr(self, "_cluster_checked", 0.0):
            return
        self._cluster_checked = now + every_s
        try:  # the driver is listed too
            executors = len(self.spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos())
        except Exception:  # noqa: BLE001 - the driver's own failures are found elsewhere
            return
        if executors <= 1:
            try:
                cluster_master_answers(master, timeout_s=2.0)
            except EngineError as exc:
                raise EngineError(f"the Spark cluster is lost: no executor, and {exc}") from None

    def close(self) -> None:
        for job in self._jobs:
            with contextlib.suppress(Exception):
                job.cancel(timeout_s=30)
        self._jobs.clear()
        self._drop_driver()

    def _drop_driver(self) -> None:
        """Stop the session and end the driver JVM (also one already dead): PySpark's globals
        are reset, so a new session can start in this process."""
        from pyspark import SparkContext
        from pyspark.sql import SparkSession

        if self.spark is not None:
            with contextlib.suppress(Exception):
                self.spark.stop()
            self.spark = None
        # A stop that failed half-way (a dead JVM) leaves the active context and session set.
        SparkContext._active_spark_context = None
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        gateway = SparkContext._gateway
        if gateway is not None:
            forget_errors(gateway._gateway_client)
            proc = getattr(gateway, "proc", None)
            with contextlib.suppress(Exception):
                gateway.shutdown()
            if proc is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.close() if proc.stdin else None
                    proc.terminate()
                    proc.wait(15)
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(10)
            SparkContext._gateway = None
            SparkContext._jvm = None
        self.jvm_pid = None
        self._executor_cpu = None

    def info(self) -> EngineInfo:
        import pyspark

        config = redacted({**self._confs, **opts.knobs(self.settings)})
        if self.java is not None:
            config["nexmark.java.home"] = str(self.java.home)
            config["nexmark.java.source"] = self.java.source
            config["nexmark.java.version"] = self.java_version
        if self._failover:
            config["nexmark.failover.kill"] = FAILOVER_KILL
            config["nexmark.failover.restart"] = FAILOVER_RESTART
        version = self.spark.version if self.spark is not None else pyspark.__version__
        java = self.java.version() if self.java is not None else None
        workers = []
        if self.spark is not None and self.target.startswith("remote"):
            with contextlib.suppress(Exception):  # a dead driver: no executors to name
                workers = cluster_executors(self.spark.sparkContext)
        return EngineInfo(
            self.name, version, self.target, dict(sorted(config.items())), java, workers
        )

    def dataset_slices(self, part_events: int) -> int:
        # Each micro-batch reads whole slices (`nexmark.slices.per.batch`): the slice count
        # sets the batch size, and with it the interval between commits.
        return opts.dataset_slices(self.settings, part_events)

    def cpu_seconds(self) -> float:
        """The driver JVM's tree; on a cluster plus the executors' task CPU (see cpu.py)."""
        self._check_alive()
        total = process_tree_cpu_seconds(self.jvm_pid) if self.jvm_pid else 0.0
        total += self._cpu_of_dead_jvms
        if self._executor_cpu is not None:
            total += self._executor_cpu.seconds()
        return total

    # -- jobs --------------------------------------------------------------------------------

    def job_setup(self, spec: JobSpec) -> JobSetup:
        setup = opts.job_setup(self.settings, spec, self._confs)
        if spec.query in self.capabilities().queries:
            setup.state_bound = writes.of(spec.query).state_bound
        return setup

    def unsupported_reason(self, query: str) -> str | None:
        return self._unsupported.reason(queries.get(query).name)

    def _explain(self, name: str) -> str | None:
        self._check_alive()
        return statements.explain(self.spark, name, self._check_alive)

    def _ensure_kafka_jars(self) -> None:
        """The Kafka connector on the session's classpath: a session's jars are fixed when its
        JVM starts, so a session started without them (not fetched then) is started again
        with them, here, while it runs no query."""
        if self._kafka_jars:
            return
        if any(job.query.isActive for job in self._jobs):
            raise EngineError(
                "the Spark session started without Kafka's connector jars and runs a query: "
                "it cannot take them now"
            )
        connector = KAFKA_JARS.ensure([source.KAFKA_CONNECTOR])  # fetched if missing
        if self.jvm_pid is not None:
            self._cpu_of_dead_jvms += process_tree_cpu_seconds(self.jvm_pid)
        self._jobs.clear()
        self._drop_driver()
        self._start(extra_jars=connector)

    def submit(self, spec: JobSpec, in_place: bool = False) -> SparkJob:
        """Start the query. Restored (`spec.restore`), it runs on a private copy of the
        snapshot's checkpoint directory, which a Spark query writes its own batches into, so
        the snapshot can be restored again (`repeatable_restore`); `in_place` (a failover
        restart, which must go on in its own directory) uses the directory itself."""
        name = SOURCE_ONLY if spec.source_only else queries.get(spec.query).name
        self._unsupported.refuse_known(name)
        setup = self.job_setup(spec)
        kafka = spec.source if isinstance(spec.source, KafkaSource) else None
        part = self._checked_source(spec, kafka)
        spec.work_dir.mkdir(parents=True, exist_ok=True)
        sq = (
            statements.SOURCE_ONLY_QUERY
            if spec.source_only
            else statements.spark_query(name, spec.work_dir)
        )
        checkpoint, restored = restore.checkpoint_to_run_on(spec, in_place)
        expected = None if restored is None else self._phase_state(checkpoint, restored)
        read, feed, batch_bound = self._input(spec, sq, kafka, part, checkpoint, restored, in_place)
        options = {**setup.options, **batch_bound}
        options[opts.OUTPUT_MODE_KEY] = sq.mode
        options[opts.CHECKPOINT_KEY] = files.as_engine_path(checkpoint)
        handle, columns, collect_dir, stamps_dir = self._start_query(
            name, spec, sq, setup, read, checkpoint
        )
        events = {str(path): n for path, n in feed.file_events.items()} if feed else {}
        job = SparkJob(
            handle,
            name,
            checkpoint,
            events,
            restored,
            self._check_alive,
            collect_dir,
            sq.keys,
            columns,
            feed=feed if spec.rate_fed else None,
            stamps_dir=stamps_dir,
            kafka=kafka,
        )
        if expected is not None:
            if opts.restore_check_mode(self.settings) == "before":
                job.restore_check = self.check_restored_state(checkpoint, restored, expected)
            else:  # after the phase, when the job stops: outside the measured time
                job.pending_restore_check = (self, restored, expected)
        # Restored from the snapshot it was given, whichever private copy it runs on.
        job.restored_ref = spec.restore.ref if spec.restore is not None else None
        job.setup = dataclasses.replace(setup, state_ttl_s=None, options=redacted(options))
        if self._failover:
            job.supervise(spec, self._kill_driver, self._restart_query)
        self._jobs.append(job)
        return job

    def _checked_source(self, spec: JobSpec, kafka: KafkaSource | None) -> Location | None:
        """The part the query reads (None: it reads `kafka`), with what it needs: a topic the
        connector's jars, a part its folder."""
        if kafka is not None:
            if spec.rate_fed:
                raise EngineError(
                    "Spark reads a Kafka topic as it is: a rate-fed run releases files "
                    f"(engines/spark/source.py), not records of {kafka.topic}"
                )
            self._check_alive()
            self._ensure_kafka_jars()
            return None
        part = store_check.part_of(spec.source, self._s3 is not None)
        self._check_alive()
        return part

    def _input(
        self,
        spec: JobSpec,
        sq: statements.SparkQuery,
        kafka: KafkaSource | None,
        part: Location | None,
        checkpoint: Location,
        restored: int | None,
        in_place: bool,
    ) -> tuple[Callable[[], Any], Feed | None, dict[str, str]]:
        """What the query reads: its input (a dataframe made when the query starts), the
        part's feed staged in the folder it watches (None for a topic), and the bound of a
        batch as the job's option."""
        if kafka is not None:
            max_offsets = opts.batch_events(self.settings)
            kafka_opts = source.kafka_options(
                kafka, restore.kafka_subscription(kafka, checkpoint, restored), max_offsets
            )
            read = partial(statements.kafka_dataframe, self.spark, sq, kafka_opts)
            return read, None, {opts.MAX_OFFSETS_KEY: str(max_offsets)}
        assert part is not None
        watch = store_check.watch_dir(spec, part, checkpoint, restored)
        if restored is None:  # a fresh query: a fresh watched directory
            files.remove_tree(watch)
        # Rate-fed: staged unreleased; the protocol releases it once the query is ready.
        again = spec.restore is not None and not in_place  # from the phase checkpoint
        feed = source.stage(part, watch, release=not spec.rate_fed, again=again)
        if spec.rate_fed:
            max_files = source.rate_fed_max_files(feed.part, opts.batch_events(self.settings))
        else:
            max_files = source.slice_width(
                [f.path for f in feed.part.files]
            ) * opts.slices_per_batch(self.settings)
        read = partial(statements.dataframe, self.spark, sq, watch, max_files, feed.part.format)
        return read, feed, {opts.MAX_FILES_KEY: str(max_files)}

    def _start_query(
        self,
        name: str,
        spec: JobSpec,
        sq: statements.SparkQuery,
        setup: JobSetup,
        read: Callable[[], Any],
        checkpoint: Location,
    ) -> tuple[Any, list[str], Path | None, Location | None]:
        """The streaming query over `read`'s input started, its sinks chosen: its handle, its
        output's columns, where COLLECT writes and where the latency stamps go."""
        collect_dir = None
        if spec.sink == SinkKind.COLLECT and sq.output_dir is None:
            collect_dir = spec.collect_dir or spec.work_dir / "collect"
        # Latency stamps beside the checkpoint directory: each restore has its own, and a
        # failover restart (in place) goes on writing its job's.
        stamps = None
        if spec.latency is not None and sq.output_dir is None and not spec.source_only:
            beside = checkpoint.parent if isinstance(checkpoint, Path) else spec.work_dir
            stamps = (spec.latency, beside / f"{checkpoint.name}-latency")
        try:  # every call from here goes to the JVM, which can die under any of them
            self.spark.conf.set(opts.PARTITIONS_KEY, str(setup.parallelism))
            df = read()
            output = statements.query_output(df, name)  # (the stamps alone read a stamp column)
            stamped = stamps is not None and collect_dir is None  # (`stream_writer` picks the sink)
            writer = statements.stream_writer(
                df if stamped else output, sq, checkpoint, collect_dir, stamps
            )
            interval = setup.checkpoint_interval_s or 0
            writer = writer.trigger(processingTime=f"{round(interval * 1000)} milliseconds")
            columns = list(output.columns)
            handle = writer.start()
        except Exception as exc:  # noqa: BLE001 - analysis and start errors from the JVM
            self._check_alive()
            raise EngineError(f"Spark refused {name}: {_spark_message(exc)}") from None
        return handle, columns, collect_dir, stamps[1] if stamps else None

    # -- failover (docs/failover.md) ---------------------------------------------------------

    def _kill_driver(self) -> InjectedFailure:
        """SIGKILL the driver JVM; what it had used is kept for `cpu_seconds`."""
        self._check_alive()
        pid = self.jvm_pid
        assert pid is not None
        used = process_tree_cpu_seconds(pid)
        tasks = self._confs.get(opts.MASTER_KEY, "local")
        os.kill(pid, signal.SIGKILL)
        at = time.time()
        self._cpu_of_dead_jvms += used
        return InjectedFailure(at, f"the Spark driver JVM (pid {pid}) running every task ({tasks})")

    def _restart_query(self, spec: JobSpec, checkpoint: Location) -> Any:
        """What a supervisor does for a dead local driver: a new driver JVM, and the query
        started again on its checkpoint directory. Returns the new StreamingQuery."""
        jobs, self._jobs = self._jobs, []
        self._drop_driver()
        self._start()
        batch = last_commit(checkpoint)
        if batch is None:
            raise EngineError(f"failover: no committed batch to restart from in {checkpoint}")
        restore = Snapshot(batch, str(checkpoint))
        attempt = self.submit(dataclasses.replace(spec, restore=restore), in_place=True)
        self._jobs = jobs  # the restarted query belongs to the job it replaces
        return attempt.query

    def _phase_state(self, checkpoint: Location, batch: int) -> list[int] | None:
        """The state rows per operator the warm-up reported at `batch` (None: nothing to
        compare: a stateless query, the check turned off, or no phase checkpoint there)."""
        if opts.restore_check_mode(self.settings) == "off":
            return None
        return restore.phase_state(checkpoint, batch)

    def check_restored_state(self, checkpoint: Location, batch: int, expected: list[int]) -> dict:
        """The restore proof (`restore.check_state`) on this engine's session.

        Raises:
            EngineError: The state stores at `batch` do not hold the rows the warm-up reported.
        """
        return restore.check_state(self.spark, checkpoint, batch, expected, self._check_alive)
