"""The engine interface the protocol runner and the verifier drive.

The runner never asks which engine it has: everything it needs (start a query on a dataset part,
possibly restored from a snapshot; watch progress; checkpoint on demand; cancel; CPU used)
is here, and so is what an engine declares about itself as data: what it can run
(`Capabilities`), how its results are to be read (`ResultSemantics`) and which command-line
options select its target (`TargetOption`). An engine lives in its own package and is found
through the `nexmark.engines` entry point group (see `registry.py`), so its libraries are
imported only when it is used.

The interface is `Job` and `Engine` here; the values they take and return live in modules of
one idea each (spec.py: what to run; source.py: what a job reads; checkpoints.py; status.py:
what a polled job reports; capabilities.py: what an engine declares; semantics.py: how its
results are read), re-exported here so that `from nexmark.engines.base import ...` names any
of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from nexmark.engines.capabilities import (
    Capabilities,
    EngineInfo,
    FailoverSupport,
    Handoff,
    StateTtlSupport,
    TargetOption,
)
from nexmark.engines.checkpoints import (
    CheckpointInfo,
    CheckpointStatus,
    Snapshot,
)
from nexmark.engines.semantics import (
    Change,
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    RowKind,
    SideLookup,
    WindowFiring,
)
from nexmark.engines.source import (
    FileSource,
    Source,
    as_source,
)
from nexmark.engines.spec import (
    NO_TTL,
    SOURCE_ONLY,
    JobSetup,
    JobSpec,
    LatencyStamps,
    SinkKind,
    StateTtl,
)
from nexmark.engines.status import (
    EventCount,
    InjectedFailure,
    JobState,
    JobStatus,
    LiveState,
    Recovery,
    VertexLoad,
    WatermarkRead,
)
from nexmark.errors import EngineError, UsageError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from nexmark.engines.profiling import InJvmProfiler
    from nexmark.storage.s3 import S3Settings, S3Url
    from nexmark.workload.feed import Feed

__all__ = [
    "NO_TTL",
    "SOURCE_ONLY",
    "Capabilities",
    "Change",
    "CheckpointInfo",
    "CheckpointStatus",
    "Emission",
    "Engine",
    "EngineInfo",
    "EventCount",
    "FailoverSupport",
    "FileSource",
    "FinalWatermark",
    "Handoff",
    "InjectedFailure",
    "IntegerAverage",
    "Job",
    "JobSetup",
    "JobSpec",
    "JobState",
    "JobStatus",
    "LatencyStamps",
    "LiveState",
    "Recovery",
    "ResultSemantics",
    "RowKind",
    "SideLookup",
    "SinkKind",
    "Snapshot",
    "Source",
    "StateTtl",
    "StateTtlSupport",
    "TargetOption",
    "VertexLoad",
    "WatermarkRead",
    "WindowFiring",
    "as_source",
]


class Job(ABC):
    """A running query. Every call is cheap enough to poll about every second."""

    id: str
    setup: JobSetup | None = None  # what it was submitted with

    @abstractmethod
    def status(self) -> JobStatus: ...

    @abstractmethod
    def events_emitted(self) -> int:
        """Events the source has emitted so far (all subtasks summed). After a restart, the
        restored checkpoint's position plus what was read since (`Recovery.events_at_restore`):
        events read again after a failure are counted once."""

    def events_emitted_at(self) -> EventCount:
        """`events_emitted` with the unix time that count was true by the engine's own clock
        (its metric time), for an engine whose count is published late: a metric store
        refreshed on an interval, a count that moves only when a micro-batch commits. Two
        calls may then return the same count at the same time (nothing was refreshed between
        them), which is no sign of a stalled job. The default: the count, with `at` None
        (true now, when it was asked)."""
        return EventCount(self.events_emitted())

    def running_since(self) -> float | None:
        """Unix time at which the engine itself saw every task running (its own clock), or
        None where it cannot tell: then the protocol's poll that saw RUNNING stands."""
        return None

    def events_per_reader(self) -> list[int] | None:
        """Events each source reader has emitted so far, or None where the engine cannot tell.
        The protocol checks that each reader read exactly one file of the part."""
        return None

    def watermark_ms(self) -> int | None:
        """The job's event-time watermark (epoch ms): the minimum over its operators' input
        watermarks. None while no operator has one yet, or where the engine cannot tell."""
        return None

    def watermark_at(self) -> WatermarkRead:
        """The watermark and the time it was true, where the engine reads it apart from the
        count (`events_emitted_at`): the lag behind the data compares the two at one time."""
        return WatermarkRead(self.watermark_ms())

    def awaits_watermark(self) -> bool:
        """Whether an event-time operator of the job has not received its first watermark yet
        (a None `watermark_ms` that will become a value), as opposed to a job without event
        time. Right after a restore the first watermark may trail the data by seconds."""
        return False

    @abstractmethod
    def trigger_checkpoint(self, timeout_s: float) -> CheckpointInfo:
        """Take a checkpoint now and wait until it completes; raise EngineError if it fails.

        It must cover every event emitted so far. A job that FINISHED by itself at the end of
        its input returns its last (final) checkpoint."""

    def trigger_phase_checkpoint(self, timeout_s: float, stop: bool = False) -> CheckpointInfo:
        """The phase checkpoint: as `trigger_checkpoint`, and its snapshot must outlive every
        later checkpoint of this job (the restores read it after the stop). By default the
        checkpoint itself: an engine that may delete it as later ones complete takes a
        snapshot it never deletes (Flink: a native savepoint).

        `stop`: nothing more is asked of the job after the cut, so it may end at it. An engine
        whose later work could change what the snapshot names (Flink: a file sink's later
        checkpoints commit rows past the cut and delete files it names) stops the job there;
        by default it runs on until the protocol cancels it."""
        return self.trigger_checkpoint(timeout_s)

    @abstractmethod
    def checkpoints(self) -> list[CheckpointInfo]:
        """Every checkpoint of this job so far (periodic and triggered), oldest first."""

    @abstractmethod
    def restored_from(self) -> Snapshot | None:
        """The snapshot this job restored its state from, once it says so; None otherwise."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop without draining; retained checkpoints stay. Returns when the job is terminal."""

    def collected_rows(self) -> list[Change]:
        """Rows committed to a COLLECT sink so far, as the engine's `ResultSemantics.emission`
        says."""
        raise NotImplementedError

    def feed(self) -> Feed | None:
        """The job's unreleased feed when its spec is `rate_fed` (None otherwise)."""
        return None

    def latency_stamps(self) -> list[tuple[int, float]]:
        """When its spec asks for `latency`: (the stamped column's time in epoch ms, the wall
        time in unix s the row reached the sink) of each sampled row committed so far, in no
        particular order. Called after the phase's end checkpoint."""
        raise NotImplementedError

    def continue_with(self, source: Source) -> None:
        """An IN_PLACE engine's handoff (`Capabilities.handoff`): after the phase checkpoint,
        read `source` (the benchmark part; a part folder's path is its FileSource: read it
        with `as_source`) next, keeping the state; from then on `events_emitted` and
        `events_per_reader` count that part's events only."""
        raise EngineError(f"job {self.id} cannot continue in place on another part")

    def inject_failure(self) -> InjectedFailure:
        """Kill, without warning, the process running this job's tasks (and let the engine
        replace it as its deployment would). Only where `Capabilities.failover` is INJECT."""
        raise NotImplementedError

    def recovery(self) -> Recovery | None:
        """The job's restarts after failures so far; None where the engine cannot tell."""
        return None

    def source_offsets(self) -> dict[str, list[int]] | None:
        """A Kafka-reading job's read positions: per topic, the next offset of each partition
        (index = partition) its source has read up to, as of its latest checkpoint where the
        engine can tell, else now. The restore proof compares them with the load's counts: the
        warm-up's phase checkpoint must hold the warm-up topic's end offsets. None: not a
        Kafka source, or the engine cannot tell."""
        return None

    def late_records_dropped(self) -> int | None:
        """Records the job's event-time operators dropped for coming behind the watermark
        (windows, window joins, OVER, row-time dedup), summed since its tasks started; None
        where the engine cannot tell or the job has no such operator. A valid phase drops
        none: its readers advance event time together."""
        return None

    def live_state(self) -> LiveState | None:
        """The job's live state now, from its state backend's own metrics; None where the
        engine cannot tell (no such metrics, a backend without them, a job without state
        yet). Cheap enough to call once a second."""
        return None

    def operator_load(self) -> list[VertexLoad] | None:
        """Where the job's time goes: each vertex's (unit of work's) time busy, back-pressured
        and idle and its records in and out, as counters since its tasks started (the protocol
        reads them through the scored phase and takes the differences). None where the engine
        reports none; a figure it does not report is None, never 0. Cheap enough to call once a
        second."""
        return None

    def logical_state_bytes(self, timeout_s: float) -> int | None:
        """The size of the job's state written once in the engine's canonical format: every
        live entry once, none of a store's dead entries, write buffers or compaction layout
        (Flink: a canonical savepoint, beside the job's checkpoints). It waits for the
        snapshot, so the protocol calls it only outside a scored phase, after a checkpoint;
        None where the engine has none."""
        return None


class Engine(ABC):
    """A stream processor that runs Nexmark queries.

    Besides the methods, an engine declares as data: `target_options` (class attribute: the
    command-line options that choose its target), `capabilities()` and `semantics()` (both
    answer without starting the engine).
    """

    name: str = ""
    target_options: ClassVar[tuple[TargetOption, ...]] = ()
    # The modules the engine needs to run (its pip extra's packages, imported when it starts),
    # and the command that installs them: `registry.load` refuses to create an engine whose
    # modules are missing, in one line naming the command.
    requires: ClassVar[tuple[str, ...]] = ()
    install_command: ClassVar[str] = ""

    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    @abstractmethod
    def semantics(self) -> ResultSemantics: ...

    @abstractmethod
    def start(self) -> None:
        """Bring the engine up (or connect to it). Raise EngineError with a one-line reason."""

    @abstractmethod
    def close(self) -> None:
        """Stop jobs and processes this engine started. Safe to call twice and after a failure."""

    @abstractmethod
    def info(self) -> EngineInfo: ...

    def target_notes(self) -> list[str]:
        """After `start`: what the target's own setup, which the runner cannot change, does to
        the measurements (one line each, printed before the queries). Default: nothing."""
        return []

    @classmethod
    def sql_dir(cls) -> Traversable:
        """The directory of the engine's own SQL: a `qN.sql` only where its dialect differs
        from the shared one in workload/sql/ (`workload.queries.sql_file` looks here first),
        usually `resources.files(<its package>) / "sql"`.
        Answers without an instance. The default: the engine runs no Nexmark SQL."""
        raise UsageError(f"engine {cls.name!r} has no SQL files")

    def unsupported_reason(self, query: str) -> str | None:
        """None if the engine can run the query, else the engine's reason why not.

        The default refuses queries outside `capabilities().queries`; an engine that asks its
        planner extends it."""
        if query not in self.capabilities().queries:
            return f"{self.name} has no implementation of {query}"
        return None

    def use_object_store(self, settings: S3Settings, reach: list[S3Url]) -> None:
        """Read datasets from, and checkpoint to, an S3 store (docs/object-store.md), before
        `start`: with the store's `settings`, and checking at start that the engine's workers
        reach each of `reach` (a manifest: read; a checkpoint prefix: listed or written). The
        default: the engine cannot (UsageError)."""
        raise UsageError(f"{self.name} cannot read from or checkpoint to an object store")

    def enable_failover(self) -> FailoverSupport:
        """Set the engine up for failover runs, before `start`: failed jobs restart from their
        latest checkpoint, and (INJECT) workers it can kill. Returns what it can do on this
        target. Raise EngineError when it cannot (the default: FailoverSupport.NONE)."""
        raise EngineError(f"{self.name} does not support failover runs")

    def enable_profiling(self) -> str | None:
        """Load a CPU profiler (async-profiler, `engines.profiling`) into the JVM that does the
        jobs' work, before `start`. None when it will be there; else why it cannot on this
        target, in one line (the run then records that, and runs unprofiled). The default: a
        reason."""
        return f"{self.name} has no profiler"

    def profiler(self) -> InJvmProfiler | None:
        """After `start`, on an engine whose `enable_profiling` answered None: the profiler in
        the JVM doing the work. The default: None."""
        return None

    @abstractmethod
    def job_setup(self, spec: JobSpec) -> JobSetup:
        """What a job of `spec` would be submitted with (no engine start needed)."""

    @abstractmethod
    def submit(self, spec: JobSpec) -> Job:
        """Start the job; its `setup` is what it was submitted with (`job_setup(spec)`)."""

    @abstractmethod
    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the engine's processes (user + system, all of them)."""

    def dataset_slices(self, part_events: int) -> int:
        """Time slices per dataset part the runner should generate, for a smaller part of
        `part_events` events. 1 (each file spans its part) suits an engine that streams files;
        an engine that reads whole slices per micro-batch asks for more."""
        return 1

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
