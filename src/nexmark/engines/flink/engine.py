"""The Flink engine: PyFlink submits jobs; the REST API watches and controls them.

Targets: `embedded` (default) runs Flink's MiniCluster inside the PyFlink gateway JVM with its
REST API on a free local port; `remote` submits to an existing cluster given by its REST URL.
Both submit with `execution.target = remote`, so the two share every code path after start.
A failover run (`enable_failover`, docs/failover.md) replaces the embedded cluster with a local
one of separate processes (`local_cluster.py`), so that a TaskManager can be killed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
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
    StateTtlSupport,
    TargetOption,
)
from nexmark.engines.flink import (
    cpu,
    jars,
    kafka,
    memory,
    planning,
    remote_checks,
    s3_access,
    store,
)
from nexmark.engines.flink import options as opts
from nexmark.engines.flink.collect import result_columns
from nexmark.engines.flink.ddl import SINK_TABLE, is_query, sink_descriptor
from nexmark.engines.flink.gateway import JVM_DEATH_GRACE_S, Gateway, start_mini_cluster
from nexmark.engines.flink.job import FlinkJob
from nexmark.engines.flink.local_cluster import LocalCluster
from nexmark.engines.flink.planning import SQL_DIR, keeps_source_open, output_table
from nexmark.engines.flink.rest import FlinkRest, wait_for_taskmanager
from nexmark.engines.flink.semantics import SEMANTICS
from nexmark.engines.flink.sink_dirs import SinkFolders
from nexmark.engines.py4j_errors import java_message
from nexmark.engines.source import KafkaSource, file_part
from nexmark.engines.support import (
    UnsupportedQueries,
    process_tree_cpu_seconds,
    redacted,
)
from nexmark.errors import EngineError
from nexmark.java import JavaRuntime, find_java
from nexmark.processes import free_port
from nexmark.settings import Settings
from nexmark.storage.s3 import S3Settings, S3Url
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT
from nexmark.workload.feed import Feed, PartFeed

__all__ = ["SQL_DIR", "FlinkEngine", "flink_message", "output_table"]  # (tests import these)


def flink_message(exc: BaseException) -> str:
    """The useful part of a (Java) exception raised through PyFlink: its first line and root."""
    return java_message(exc)


class FlinkEngine(Engine):
    """Apache Flink through PyFlink.

    Args:
        settings: Effective settings (default: the packaged recommended setup).
        rest_url: REST address of an existing cluster (`http://host:8081`); None = embedded.
        log_dir: Where the JVM writes Flink's logs (default: inside the engine's scratch
            directory). The scratch directory (a fresh temporary one) is also every JVM's
            temporary directory, so that `close` removes what Flink extracts and spills there
            (about 70 MB of jars per start that a JVM leaves behind in /tmp otherwise).
        start_timeout_s: Limit for the JVM and the embedded cluster to come up.
        request_timeout_s: Limit for each REST request.
    """

    name = "flink"
    requires = ("pyflink",)
    install_command = "pip install 'nexmark[flink]'"

    @classmethod
    def sql_dir(cls):
        return SQL_DIR

    target_options = (
        TargetOption(
            "--flink-rest",
            "rest_url",
            "REST URL of a running Flink cluster (default: an embedded one).",
            "URL",
        ),
    )

    def __init__(
        self,
        settings: Settings | None = None,
        rest_url: str | None = None,
        log_dir: Path | None = None,
        start_timeout_s: float = 120.0,
        request_timeout_s: float = 10.0,
    ):
        self.settings = settings or Settings.defaults()
        self.rest_url = rest_url.rstrip("/") if rest_url else None
        self.start_timeout_s = start_timeout_s
        self.request_timeout_s = request_timeout_s
        self._log_dir = log_dir
        self._scratch: Path | None = None
        self.java: JavaRuntime | None = None
        self.gateway: Gateway | None = None
        self.rest: FlinkRest | None = None
        self._cluster: Any = None
        self._failover = False  # enable_failover() was called
        self._profiling = False  # enable_profiling() was answered None
        self._profiler: profiling.InJvmProfiler | None = None
        self._local: LocalCluster | None = None  # a failover run's cluster of processes
        self._remote_cpu: cpu.RemoteCpu | None = None  # a remote cluster's JVMs, remembered
        self._jobs: list[FlinkJob] = []
        self._unsupported = UnsupportedQueries("Flink", self._explain)
        # The last job's planned table, to insert again for an identical job (a repeat).
        self._planned: tuple[Any, ...] | None = None
        self._slots = 0
        self._s3: S3Settings | None = None  # an object store's settings (use_object_store)
        self._reach: list[S3Url] = []  # what the worker-reach check reads at start
        self.memory: memory.TaskManagerMemory | None = None  # embedded only
        # Extra arguments of ddl.source_ddl for every job (e.g. text_times=True for files of
        # the older format): only benchmarks/bench_data_path.py sets them, to compare.
        self.source_options: dict[str, Any] = {}
        # The jar groups (jars.toml) on every JVM's class path, fetched at start when missing:
        # parquet by default; benchmarks/bench_data_path.py adds avro.
        self.jar_groups: tuple[str, ...] = jars.DEFAULT_GROUPS
        self._jars: list[Path] = []
        self._formats_checked: set[str] = {"csv"}  # formats the (remote) cluster reads
        self._sink_folders = SinkFolders()  # sink folders as each restored snapshot left them

    @property
    def target(self) -> str:
        if self.rest_url:
            return f"remote {self.rest_url}"
        return "local cluster (failover)" if self._failover else "embedded"

    def enable_failover(self) -> FailoverSupport:
        """Failover runs: jobs restart from their latest checkpoint (FAILOVER_RESTART); the
        embedded target becomes a local cluster of processes whose TaskManager can be killed.
        On a remote cluster the runner cannot kill anything: it observes."""
        if self.gateway is not None:
            raise EngineError("enable_failover must be called before the Flink engine starts")
        self._failover = True
        return FailoverSupport.OBSERVE if self.rest_url else FailoverSupport.INJECT

    def enable_profiling(self) -> str | None:
        """The embedded cluster runs every task in the gateway's JVM: the profiler goes there.
        A cluster's TaskManagers are processes of their own (remote, or a failover run's)."""
        if self.gateway is not None:
            raise EngineError("enable_profiling must be called before the Flink engine starts")
        if self.rest_url:
            return "a remote cluster's TaskManagers are not processes of this run: not profiled"
        if self._failover:
            return "a failover run's TaskManager is a process of its own: not profiled"
        self._profiling = True
        return None

    def profiler(self) -> profiling.InJvmProfiler | None:
        return self._profiler

    def use_object_store(self, settings: S3Settings, reach: list[S3Url]) -> None:
        """Read datasets from, and checkpoint to, an S3 store (docs/object-store.md): the
        embedded cluster gets the S3 plugin and the store's settings at start, and checks
        there that its own file system reaches each of `reach` (a manifest: read; a prefix:
        listed). A remote cluster needs them in its own plugins/ and config.yaml
        (s3_access.cluster_setup)."""
        if self.gateway is not None:
            raise EngineError("use_object_store must be called before the Flink engine starts")
        self._s3 = settings
        self._reach = list(reach)

    def capabilities(self) -> Capabilities:
        return Capabilities(
            queries=frozenset(q.name for q in queries.REGISTERED),
            state_ttl=StateTtlSupport.PROCESSING_TIME,  # table.exec.state.ttl
            targets=("embedded", "remote"),
            ready="every task of the job is RUNNING (a restored task, once its state is loaded)",
            failover=FailoverSupport.INJECT,  # on a local cluster it starts; OBSERVE on remote
            # Restores use claim mode NO_CLAIM (options.job_options): the restored job never
            # deletes the snapshot's files nor references them after its first (full)
            # checkpoint, so one phase checkpoint serves every repeat.
            repeatable_restore=True,
            rate_feed=True,  # the job's feed, staged, is released by the protocol
            latency_stamps=True,  # a second, sampled sink beside the query's (ddl.py)
            sources=("files", "kafka"),  # a KafkaSource: the kafka connector's table (kafka.py)
        )

    def semantics(self) -> ResultSemantics:
        return SEMANTICS

    def start(self) -> None:
        if self.gateway is not None:
            return
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        flink = self.settings.flink_options()
        jvm_args: list[str] = []
        if self.rest_url is None:
            # Sized before anything starts: the JVM's heap follows the TaskManager's.
            self._slots = opts.slots(flink)
            total = psutil.virtual_memory().total
            self.memory = memory.size_taskmanager(flink, self._slots, total)
            # With a local cluster the gateway JVM only submits: the TaskManager gets the size.
            jvm_args = [] if self._failover else self.memory.jvm_args()
        self.java = find_java()
        # Before any JVM: planning (here) and reading (the cluster) need the formats' classes.
        self._jars = jars.ensure(self.jar_groups)
        self._scratch = Path(tempfile.mkdtemp(prefix="nexmark-flink-"))
        tmp = self._scratch / "tmp"
        tmp.mkdir()
        log_dir = self._log_dir or self._scratch / "log"
        # On a store: the S3 plugin and a config.yaml with the s3.* options (its secret in a
        # file of mode 600 of this run's scratch folder), the file systems initialized with them.
        s3_env = None
        if self._s3 is not None:  # (the user's flink.s3.* settings win over the variables')
            own = {k: v for k, v in flink.items() if k.startswith("s3.")}
            s3_env = s3_access.gateway_env(self._scratch / "s3", self._s3, own)
        self.gateway = Gateway(
            self.java,
            log_dir,
            self.start_timeout_s,
            jvm_args,
            tmp_dir=tmp,
            classpath=self._jars + (profiling.jars() if self._profiling else []),
            env=s3_env,
        )
        if self.rest_url is None and self._failover:  # its JVMs start while the gateway's does
            self._launch_local_cluster(flink, log_dir)
        self.gateway.start()
        if self._profiling:
            self._profiler = profiling.InJvmProfiler(self.gateway.jvm)
        if self._s3 is not None:  # (the embedded cluster does not load plugins by itself)
            s3_access.initialize_plugins(self.gateway.jvm)
            if self.rest_url is None:  # the worker-reach check, before the first query
                store.check_reach(self.gateway.jvm, self._reach)
        if self._local is not None:
            self._wait_local_cluster()
        elif self.rest_url is None:
            cluster_conf = opts.cluster_options(flink, free_port(), self.memory)
            cluster_conf.setdefault("io.tmp.dirs", str(tmp))  # a path of this run: not recorded
            try:
                self._cluster, url = start_mini_cluster(self.gateway, cluster_conf, self._slots)
            except Exception as exc:  # noqa: BLE001 - any Java failure becomes one line
                raise EngineError(
                    f"embedded Flink cluster did not start: {flink_message(exc)}"
                ) from None
            self.rest = FlinkRest(url, self.request_timeout_s)
            wait_for_taskmanager(self.rest, self.gateway.check_alive, self.start_timeout_s)
        else:
            self.rest = FlinkRest(self.rest_url, self.request_timeout_s)
            self.rest.overview()  # fail now, with the address, if nothing answers
            if self._s3 is not None and self._reach:  # the worker-reach check, before any query
                self._check_cluster_reads(DEFAULT_FORMAT, self._scratch / "reach")

    def _launch_local_cluster(self, flink: dict[str, str], log_dir: Path) -> None:
        assert self.java is not None and self.memory is not None
        options = opts.local_cluster_options(flink, self.memory)
        self._local = LocalCluster(log_dir / "cluster", self.java, options, self._jars)
        self._local.launch()

    def _wait_local_cluster(self) -> None:
        assert self._local is not None
        url = self._local.wait_started(self.start_timeout_s)
        self.rest = FlinkRest(url, self.request_timeout_s)

    def _kill_worker(self, job: FlinkJob) -> InjectedFailure:
        assert self._local is not None
        return self._local.kill_and_replace(job.taskmanagers())

    def _require_started(self) -> None:
        if self.gateway is None or self.rest is None:
            raise EngineError("the Flink engine is not started")
        self.gateway.check_alive()

    def _on_unreachable(self) -> None:
        # Embedded: the REST API dies with the JVM; give a dying JVM a moment to be reaped.
        if self.gateway is not None and self.rest_url is None:
            self.gateway.check_alive(grace_s=3.0)
        if self._local is not None and not self._local.jobmanager_alive(grace_s=3.0):
            raise EngineError("the local Flink cluster's JobManager died")

    def close(self) -> None:
        for job in self._jobs:
            try:
                if self.gateway is not None and self.gateway.alive() or self.rest_url:
                    job.cancel(timeout_s=30)
            except Exception:  # noqa: BLE001 - best effort; the JVM is stopped next anyway
                pass
        self._jobs.clear()
        self._sink_folders.forget()
        if self._local is not None:
            self._local.stop()
            self._local = None
        if self._cluster is not None:
            try:
                if self.gateway is not None and self.gateway.alive():
                    self._cluster.close()
            except Exception:  # noqa: BLE001
                pass
            self._cluster = None
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        self.rest = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def info(self) -> EngineInfo:
        from pyflink.version import __version__ as pyflink_version

        # Memory options are the embedded cluster's (as sized) and never reach a remote one.
        config = opts.without_sizing(self.settings.flink_options())
        version = pyflink_version
        if self.rest_url is None and self.memory is not None and not self._failover:
            config.update(self.memory.recorded())
        if self._local is not None:
            config.update({f"cluster:{k}": str(v) for k, v in self._local.options.items()})
        if self._failover:
            config.update(opts.failover_recorded(self.settings.flink_options()))
        if self.rest is not None and self.rest_url:
            config.update(opts.remote_options(self.rest_url))
            try:
                version = self.rest.get("/config").get("flink-version", version)
                cluster = self.rest.get("/jobmanager/config")
                config.update({f"cluster:{e['key']}": e["value"] for e in cluster})
            except EngineError:
                pass
        if self.rest is not None:
            with contextlib.suppress(EngineError):  # what each TaskManager really has
                config.update(memory.taskmanager_facts(self.rest))
        # The JVM options the job ran under: the gateway's, which hosts the embedded cluster
        # (a local cluster's processes inherit a JVM_ARGS of the environment too). A remote
        # cluster's are its own: the client's options never reach it.
        if self.rest_url is None and self.gateway is not None and self.gateway.jvm_args:
            config["nexmark.jvm.args"] = " ".join(self.gateway.jvm_args)
        if self.java is not None:
            config["nexmark.java.home"] = str(self.java.home)
            config["nexmark.java.source"] = self.java.source
        java = self.java.version() if self.java is not None else None
        config = redacted(config)  # an s3.secret-key given with --set
        workers = []
        if self.rest is not None and (self.rest_url or self._local is not None):
            with contextlib.suppress(EngineError):  # a cluster: who runs the jobs
                workers = cpu.workers(self.rest)
        return EngineInfo(
            self.name, version, self.target, dict(sorted(config.items())), java, workers
        )

    def target_notes(self) -> list[str]:
        if self.rest is None or not self.rest_url:
            return []  # the embedded cluster is set up by the engine itself
        try:
            cluster = {e["key"]: e["value"] for e in self.rest.get("/jobmanager/config")}
        except EngineError:
            return []
        notes = [opts.status_cache_note(cluster)]
        if self._failover:  # a TaskManager will die: the metrics must not freeze for minutes
            notes.append(opts.metric_wait_note(cluster))
        return [n for n in notes if n]

    def cpu_seconds(self) -> float:
        self._require_started()
        if self.rest_url:  # every JVM of the cluster, a TaskManager gone included
            if self._remote_cpu is None or self._remote_cpu.rest is not self.rest:
                self._remote_cpu = cpu.RemoteCpu(self.rest)
            return self._remote_cpu.seconds()
        gateway = process_tree_cpu_seconds(self.gateway.process.pid)
        return gateway + (self._local.cpu_seconds() if self._local is not None else 0.0)

    def job_setup(self, spec: JobSpec) -> JobSetup:
        """What a job of `spec` is submitted with: resolved once, recorded with the result."""
        return opts.job_setup(self.settings, spec)

    def job_options(self, spec: JobSpec) -> dict[str, str]:
        """Every Flink option of one job, the cluster's address included."""
        url = self.rest_url or self.rest.base_url
        job = opts.job_options(self.settings, spec)
        if isinstance(spec.source, KafkaSource):
            job.update(kafka.job_options(job, restored=spec.restore is not None))
        if self._failover:
            job.update(opts.failover_job_options(self.settings.flink_options()))
        return {**job, **opts.remote_options(url)}

    def submit(self, spec: JobSpec) -> FlinkJob:
        name = spec.query if spec.source_only else queries.get(spec.query).name
        self._unsupported.refuse_known(name)
        setup = self.job_setup(spec)
        topic, part, file_format = self._checked_source(spec, setup.parallelism)
        collect_dir, stamps_dir = self._sink_dirs(spec)
        options = self.job_options(spec)
        staged = None
        if part is not None and keeps_source_open(spec):  # linked in once every task runs
            into = store.feed_into(part, spec.feed_dir, spec.work_dir)
            staged = Feed(PartFeed.of(part), into)
        source_dir = staged.dir if staged else part or topic
        job_id, collect_dir, columns = self._insert(
            name, spec, options, source_dir, file_format, collect_dir, stamps_dir
        )
        job = FlinkJob(
            self.rest,
            job_id,
            self._on_unreachable,
            collect_dir,
            columns,
            source_dir=part and source_dir,  # (None for a topic: no files to count)
            staged=staged,
            rate_fed=spec.rate_fed,
            stamps_dir=stamps_dir,
            restartable=self._failover,
            kill_worker=self._kill_worker if self._local is not None else None,
            reads_kafka=topic is not None,
        )
        # Exactly as submitted, but an s3.secret-key given with --set (never recorded).
        job.setup = dataclasses.replace(setup, options=redacted(options))
        self._jobs.append(job)
        return job

    def _checked_source(
        self, spec: JobSpec, parallelism: int
    ) -> tuple[KafkaSource | None, Path | S3Url | None, str]:
        """(topic, part, format) of what the job reads, checked against its readers, the
        cluster's formats and the embedded cluster's slots."""
        topic = spec.source if isinstance(spec.source, KafkaSource) else None
        if topic is not None:  # a load's topic (kafka.py), its records CSV lines
            kafka.check_topic(topic, parallelism, spec.rate_fed)
            part, file_format = None, "csv"
        else:
            part = file_part(spec.source, "Flink", self._s3 is not None)  # or a prefix
            file_format = self._check_dataset(part, parallelism, spec.rate_fed, spec.source.format)
        self._require_started()
        if topic is None:
            self._check_cluster_reads(file_format, spec.work_dir)
        if self.rest_url is None and parallelism > self._slots:
            raise EngineError(
                f"parallelism {parallelism} exceeds the embedded cluster's "
                f"{self._slots} slots (set flink.taskmanager.numberOfTaskSlots)"
            )
        return topic, part, file_format

    def _sink_dirs(self, spec: JobSpec) -> tuple[Path | None, Path | None]:
        """(collect_dir, stamps_dir): where COLLECT writes and where the latency stamps go."""
        collect_dir, stamps_dir = None, None
        if spec.latency is not None:
            stamps_dir = spec.work_dir / "latency-stamps"
            # Every stamping job starts from an empty folder: no snapshot names a stamp file
            # (a warm-up writes none, `stamps_written`), and each repeat reads its own.
            shutil.rmtree(stamps_dir, ignore_errors=True)
        if spec.sink == SinkKind.COLLECT:
            collect_dir = spec.collect_dir or spec.work_dir / "collect"
        if spec.restore is not None and collect_dir is not None:  # a repeat's restore finds
            self._sink_folders.as_snapshot_left_them(spec.restore, [collect_dir])  # its files
        return collect_dir, stamps_dir

    def _insert(
        self,
        name: str,
        spec: JobSpec,
        options: dict[str, str],
        source_dir: Path | S3Url | KafkaSource,
        file_format: str,
        collect_dir: Path | None,
        stamps_dir: Path | None,
    ) -> tuple[str, Path | None, list[str] | None]:
        """The job planned (its source reading `source_dir`: a folder, a prefix or a topic) and
        submitted: its id, where COLLECT writes (None: an own-sink query) and the collected
        rows' columns."""
        # A repeat submits the job before it again: the same statements over the same staged
        # directory, restored from the same checkpoint. Its planned table is inserted again
        # rather than planned afresh (0.2-0.45 s of each repeat's fixed cost, inside none of
        # the scored figures but in the repeat's; docs/engines.md).
        key = (name, spec.source_only, tuple(sorted(options.items())), source_dir, file_format,
               keeps_source_open(spec), tuple(sorted(self.source_options.items())),
               collect_dir, spec.sink, repr(spec.latency))  # fmt: skip
        planned = self._planned if self._planned and self._planned[0] == key else None
        self._planned = None
        if planned is not None:
            _, t_env, last, table, columns = planned
            if not spec.source_only:  # (its side table or output directory, as planned)
                queries.prepare_query_dirs(spec.query, spec.work_dir)
        else:
            t_env, last = self._plan(spec, options, source_dir, file_format)
            table, columns = None, None
        try:
            if is_query(last):
                if table is None:  # (a planned table is the sink's output already)
                    table = t_env.sql_query(last)
                    output = planning.sink_output(table, spec)
                    columns = result_columns(output) if collect_dir else None
                    t_env.create_temporary_table(SINK_TABLE, sink_descriptor(collect_dir, output))
                else:
                    output = table
                if spec.latency is not None and stamps_dir is not None:
                    result = planning.insert_with_stamps(t_env, table, output, spec, stamps_dir)
                else:
                    result = output.execute_insert(SINK_TABLE)
                    self._planned = (key, t_env, last, output, columns)
            else:  # an own-sink query (q10): its INSERT writes where its SQL says
                collect_dir = None
                result = t_env.execute_sql(last)
            return str(result.get_job_client().get_job_id()), collect_dir, columns
        except Exception as exc:  # noqa: BLE001 - planner and submission errors from Java
            # A JVM killed mid-call breaks the call before the process is reaped: wait a moment
            # so the error says the JVM died rather than that Flink refused the query.
            self.gateway.check_alive(grace_s=JVM_DEATH_GRACE_S)
            raise EngineError(f"Flink refused {name}: {flink_message(exc)}") from None

    # One file per source reader (a part's files against the job's readers).
    _check_dataset = staticmethod(store.check_part)

    def _check_cluster_reads(self, file_format: str, work_dir: Path) -> None:
        """Before a remote cluster's first job of a format: can its processes read it (on a
        store, from the store: `remote_checks`)? Each format once. The embedded and local
        clusters have the jars on their class paths (we put them there)."""
        if file_format in self._formats_checked:
            return
        if self.rest_url is not None:
            store_at = self._reach if self._s3 is not None else []
            remote_checks.check_reads(
                self.rest_url, file_format, work_dir, self._run_probe, store_at
            )
        self._formats_checked.add(file_format)

    def _run_probe(self, part: Path | S3Url, file_format: str, work_dir: Path) -> None:
        """A bounded source-only job over `part` on the cluster, waited for; its failure
        raised as it came (the JVM's death as the engine's error)."""
        spec = JobSpec(SOURCE_ONLY, part, Path(work_dir), parallelism=1, source_only=True)
        options = self.job_options(spec)
        # A bounded probe takes no checkpoint: its job names no folder of this runner's,
        # which a cluster on other machines cannot reach (its own configuration decides).
        del options["execution.checkpointing.dir"]
        t_env, last = self._plan(spec, options, part, file_format)
        try:
            result = t_env.sql_query(last).execute_insert(sink_descriptor(None))
            result.wait(remote_checks.FORMAT_CHECK_TIMEOUT_S * 1000)
        except Exception:
            self.gateway.check_alive(grace_s=JVM_DEATH_GRACE_S)
            raise

    def _plan(
        self,
        spec: JobSpec,
        options: dict[str, str],
        source_dir: Path | S3Url | None = None,
        file_format: str = "csv",
    ) -> tuple[Any, str]:
        """A table environment with the inputs and the query's setup statements; the last one
        (`planning.plan`, with the engine's source options)."""
        return planning.plan(
            self.gateway, spec, options, self.source_options, source_dir, file_format
        )

    def unsupported_reason(self, query: str) -> str | None:
        name = queries.get(query).name
        if (reason := super().unsupported_reason(name)) is not None:
            return reason
        return self._unsupported.reason(name)

    def _explain(self, name: str) -> str | None:
        """Ask the planner for the whole job (sink included); its error is the reason."""
        self._require_started()
        with tempfile.TemporaryDirectory(prefix="nexmark-explain-") as tmp:
            part = Path(tmp) / "part"
            part.mkdir()
            spec = JobSpec(name, part, Path(tmp), keep_source_open=True)
            t_env, last = self._plan(spec, self.job_options(spec))
            return planning.planner_reason(self.gateway, t_env, last)
