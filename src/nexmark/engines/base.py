"""The engine interface the protocol runner and the verifier drive.

The runner never asks which engine it has: everything it needs (start a query on a dataset part,
possibly restored from a snapshot; watch progress; checkpoint on demand; cancel; CPU used)
is here, and so is what an engine declares about itself as data: what it can run
(`Capabilities`), how its results are to be read (`ResultSemantics`) and which command-line
options select its target (`TargetOption`). An engine lives in its own package and is found
through the `nexmark.engines` entry point group (see `registry.py`), so its libraries are
imported only when it is used.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from nexmark.durations import format_seconds, parse_seconds
from nexmark.errors import EngineError, UsageError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    from nexmark.workload.feed import Feed


class JobState(str, enum.Enum):
    """Lifecycle of a job, engine-neutral."""

    STARTING = "starting"  # submitted, not ready yet (e.g. still loading restored state)
    # Ready: the engine's own definition (`Capabilities.ready`), e.g. on Flink every task
    # running. The protocol's recovery time ends at the first poll that sees it.
    READY = "ready"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELED = "canceled"

    @property
    def terminal(self) -> bool:
        return self in (JobState.FINISHED, JobState.FAILED, JobState.CANCELED)


# The name a source-only job goes by (JobSpec.source_only): it is no query of the workload.
SOURCE_ONLY = "source"


class SinkKind(str, enum.Enum):
    DISCARD = "discard"  # benchmark runs: rows are produced and dropped
    COLLECT = "collect"  # verification runs: rows (as `Change`s) can be read back


@dataclass(frozen=True)
class StateTtl:
    """A state TTL: state not accessed for `seconds` (processing time) may be dropped; None:
    state never expires (`NO_TTL`)."""

    seconds: float | None

    @classmethod
    def parse(cls, text: str, what: str = "state TTL") -> StateTtl:
        """'10 min', '3 s', '500 ms'; '0' (any unit) means no TTL.

        Raises:
            UsageError: naming `what` when the text is not a duration.
        """
        seconds = parse_seconds(text, what) if str(text).strip() else 0.0
        return cls(seconds or None)

    def __str__(self) -> str:
        return "none" if self.seconds is None else format_seconds(self.seconds)


NO_TTL = StateTtl(None)


@dataclass(frozen=True)
class Snapshot:
    """An opaque handle from a phase checkpoint to the restore.

    Only the engine that made it reads `ref` (Flink: the retained checkpoint's path; Spark:
    the query's checkpoint directory). The protocol passes it back unchanged in
    `JobSpec.restore` and compares it with `Job.restored_from()`; `id` is the engine's
    checkpoint id (None where the engine has none), `str()` is what results show.

    Where the engine declares `Capabilities.repeatable_restore`, the same snapshot may be
    passed to several jobs one after the other (the repeats of a benchmark phase), each of
    which must restore exactly the state it holds; `Job.restored_from()` of each must then be
    `same_as` it (a private copy keeps the id).
    """

    id: int | None
    ref: str

    def same_as(self, other: Snapshot | None) -> bool:
        """The same snapshot: the same reference, or the same (known) id."""
        if other is None:
            return False
        return self.ref == other.ref or (self.id is not None and self.id == other.id)

    def __str__(self) -> str:
        return self.ref


@dataclass
class JobSpec:
    """What to run: one query on one dataset part."""

    query: str  # "q0".."q23"
    source_dir: Path  # a dataset part directory (warm-up or benchmark)
    work_dir: Path  # per-run scratch: checkpoints, q10 files, side tables (runner removes it)
    sink: SinkKind = SinkKind.DISCARD
    collect_dir: Path | None = None  # where COLLECT writes, read back with `Job.collected_rows`
    restore: Snapshot | None = None  # a snapshot of a checkpoint returned by `trigger_checkpoint`
    state_ttl: StateTtl | None = None  # None = as the settings say; NO_TTL = state never expires
    parallelism: int | None = None  # None = the engine's configured default
    checkpoint_interval_s: float | None = None  # None = the engine's configured interval
    # The source stays open after its last event: no end of input, no final watermark: windows
    # fire only up to the watermark the data gives (the protocol's phases). An engine whose
    # jobs stop by themselves once they have processed what is there (Spark's availableNow)
    # may FINISH then, with that same watermark. False: the source ends after the part, the
    # job drains, fires every window and finishes.
    keep_source_open: bool = False
    # No query: read every event of the part through the very source the queries read (its
    # kind, its event time and the watermark; the least any query does per event) and discard
    # it. The protocol's calibration of the data path;
    # `query` is then SOURCE_ONLY. An engine that cannot raises UnsupportedQueryError.
    source_only: bool = False
    # The protocol releases the part's files itself, on the wall clock at a set rate
    # (`workload.feed.Releaser`): the engine stages its feed unreleased, never releases it at
    # its own cue, and hands it over with `Job.feed()`. Only where `Capabilities.rate_feed`.
    rate_fed: bool = False
    # Stamp a sample of the output rows at the sink for their event-time latency
    # (`Job.latency_stamps`), besides the sink the rows go to (which stays as it is). Both
    # phases of a query get it, so that the restored job's operators are the warm-up's. Only
    # where `Capabilities.latency_stamps`.
    latency: LatencyStamps | None = None


@dataclass(frozen=True)
class LatencyStamps:
    """Which rows to stamp and with what: `column` (a time column of the query's output) and
    the wall time the row reaches the sink, for a random `sample` share of the rows."""

    column: str
    sample: float


@dataclass
class JobSetup:
    """What one job is submitted with: resolved once from the settings and the JobSpec.

    The protocol reads the engine-neutral fields (the source readers a dataset must have one
    file each for, the checkpoint bound, the TTL a warm-up must outlast); `options` is the
    engine's own configuration exactly as the job gets it, which the result records.
    """

    parallelism: int  # source readers and every operator's parallelism
    checkpoint_interval_s: float | None  # None: no periodic checkpoints
    state_ttl_s: float | None  # None: state never expires
    options: dict[str, str] = field(default_factory=dict)
    # What bounds the job's state on this engine, in words ("no state", "the watermark: windows
    # close", "state TTL 3 s", "nothing: grows"); recorded with the result.
    state_bound: str | None = None


class CheckpointStatus(str, enum.Enum):
    """Where a checkpoint is (str-valued: recorded and shown as its value)."""

    COMPLETED = "completed"
    FAILED = "failed"
    IN_PROGRESS = "in_progress"


@dataclass
class CheckpointInfo:
    """One completed (or failed, or still running) checkpoint."""

    id: int
    status: CheckpointStatus
    trigger_ts: float  # unix seconds
    ack_ts: float | None  # unix seconds when the last task acknowledged; None if not completed
    duration_s: float | None
    checkpointed_bytes: int | None  # what this checkpoint wrote (incremental size)
    state_bytes: int | None  # full state size
    snapshot: Snapshot | None = None  # what a job can be restored from (completed only)


@dataclass
class JobStatus:
    state: JobState
    failure: str | None = None  # the engine's root cause, when FAILED


@dataclass
class EngineInfo:
    """What a result records about the engine."""

    name: str
    version: str
    target: str  # "embedded", "remote <url>", ...
    config: dict[str, str] = field(default_factory=dict)  # the full effective configuration
    # The Java runtime it runs on ("17.0.12"); None: no JVM. The result's machine records it.
    java: str | None = None


class StateTtlSupport(str, enum.Enum):
    """What a state TTL means on an engine."""

    NONE = "none"  # the engine cannot expire state by time: a TTL other than none is refused
    PROCESSING_TIME = "processing time"  # state idle that long (wall clock) may be dropped


class Handoff(str, enum.Enum):
    """How a query's state crosses the cut between the warm-up and the benchmark phase."""

    # The warm-up job is cancelled after the phase checkpoint and the benchmark job is
    # submitted restored from that checkpoint's snapshot (Flink, Spark): the restore is proven
    # by the checkpoint id the restored job reports, and timed as the recovery.
    RESUBMIT = "resubmit"
    # The warm-up job goes on: after the phase checkpoint it is handed the benchmark part
    # (`Job.continue_with`) with its state where it is, as an engine whose state lives in a
    # service reached over a network would; no restore to prove or time.
    IN_PLACE = "in-place"


class FailoverSupport(str, enum.Enum):
    """What an engine can do about a worker that dies during a job (docs/failover.md)."""

    NONE = "none"  # a failure fails the job: no failover run
    # It restarts a failed job from its latest checkpoint and reports it (`Job.recovery`), but
    # something else must cause the failure (e.g. the user kills a worker of a remote cluster).
    OBSERVE = "observe"
    # It also kills, without warning, the process running a job's tasks (`Job.inject_failure`).
    INJECT = "inject"


@dataclass(frozen=True)
class InjectedFailure:
    """A worker killed by `Job.inject_failure`."""

    at: float  # unix time of the kill
    what: str  # what was killed, e.g. "TaskManager tm-1 (pid 1234) running 2 tasks"
    # Events the job had read at the kill, where its count lags the reading (Spark counts a
    # micro-batch once it commits: the batch in flight was read too). None: `events_emitted`.
    events_read: int | None = None


@dataclass(frozen=True)
class Recovery:
    """What an engine reports about a job's restarts after failures (`Job.recovery`).

    Attributes:
        restarts: Times the job restarted after a failure since it was submitted.
        failed_at: The engine's own time of the latest failure (unix seconds), if it has one.
        cause: The latest failure's cause, one line.
        restored_checkpoint: The checkpoint id the latest restart restored, if known.
        events_at_restore: Events of the phase that checkpoint covers (the source's position
            in it), once the engine can tell; `Job.events_emitted` counts on from there.
    """

    restarts: int = 0
    failed_at: float | None = None
    cause: str | None = None
    restored_checkpoint: int | None = None
    events_at_restore: int | None = None


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do, as data (known without starting it).

    Attributes:
        queries: The queries the engine has an implementation of; `unsupported_reason` may
            still refuse one of them (e.g. its planner rejects it).
        state_ttl: What `JobSpec.state_ttl` means on this engine.
        targets: Where it can run, e.g. ("embedded", "remote").
        ready: When a submitted (or restored) job counts as `JobState.READY`, in one line.
        failover: What it can do when a worker dies (`FailoverSupport`); on a target it cannot
            kill processes of, `Engine.enable_failover` may lower INJECT to OBSERVE.
        formats: The dataset file formats its source reads (docs/dataset-format.md); the run
            refuses a `--format` outside them before generating anything.
        files_per_reader: Files of a time slice each source reader reads: the dataset gets
            readers x this many files per slice (1: Flink's file source hands each reader whole
            files, and one each keeps them reading in step).
        repeatable_restore: A snapshot may be restored more than once (`nexmark run
            --repeat N`): restoring it, and everything the restored job does afterwards (its
            own checkpoints, their retention), leaves the snapshot as it was. An engine whose
            restored job writes into what it restored from makes its own private copy first.
            False: the protocol restores each snapshot once.
        rate_feed: Its jobs can leave their feed to the protocol (`JobSpec.rate_fed`,
            `Job.feed`): a benchmark phase fed at a set rate (`nexmark run --rate`).
        latency_stamps: Its jobs can stamp a sample of their output rows at the sink
            (`JobSpec.latency`, `Job.latency_stamps`): a rate-fed phase's event-time latency.
        handoff: How the state crosses the cut between the phases (`Handoff`); IN_PLACE
            engines implement `Job.continue_with`, and run one benchmark phase per warm-up.
    """

    queries: frozenset[str]
    state_ttl: StateTtlSupport
    targets: tuple[str, ...]
    ready: str
    failover: FailoverSupport = FailoverSupport.NONE
    formats: tuple[str, ...] = ("parquet", "csv")
    files_per_reader: int = 1
    repeatable_restore: bool = False
    rate_feed: bool = False
    latency_stamps: bool = False
    handoff: Handoff = Handoff.RESUBMIT


class Emission(str, enum.Enum):
    """How an engine's collected rows describe its result table."""

    CHANGELOG = "changelog"  # ADD / RETRACT changes, folded as a multiset
    UPSERT = "upsert"  # UPSERT changes keyed by the query's key (and ADD for append-only rows)


class WindowFiring(str, enum.Enum):
    """When an event-time window [start, end) fires, given the watermark."""

    LAST_MS = "last ms"  # watermark >= end - 1 ms: it passed the window's last millisecond
    END = "end"  # watermark >= end

    @property
    def lead_ms(self) -> int:
        """How many ms before `end` the watermark fires the window."""
        return 1 if self is WindowFiring.LAST_MS else 0


class FinalWatermark(str, enum.Enum):
    """The last watermark of a job whose source stays open after its last event."""

    MIN_OVER_READERS = "min over readers"  # min over source readers of (last event time - delay)
    MAX_OVER_INPUT = "max over input"  # max event time seen by the whole job - delay


class IntegerAverage(str, enum.Enum):
    """What AVG over an integer column returns."""

    TRUNCATED = "truncated"  # an integer: sum / count, truncated
    FRACTIONAL = "fractional"  # a fraction: sum / count exactly (compared as a decimal)


class SideLookup(str, enum.Enum):
    """How a stream row is joined with a side table (q13)."""

    # An event-time temporal join: a row is joined, against the version valid at its time, once
    # the watermark has passed it; rows after the final watermark are never emitted.
    VERSIONED_AT_WATERMARK = "versioned at watermark"
    # A stream-static join: each row is looked up as it arrives, so every row is emitted.
    ON_ARRIVAL = "on arrival"


@dataclass(frozen=True)
class ResultSemantics:
    """How to read an engine's results; the verifier derives its reference from this.

    Attributes:
        emission: How collected rows are emitted and folded into the final table.
        window_firing: When an event-time window fires.
        final_watermark: The final watermark of a run whose source stays open.
        integer_average: AVG over integers (q4, q17).
        side_lookup: How a stream row is joined with a side table (q13).
        watermark_slack_ms: How far below the computed final watermark the engine's last
            watermark may stay (e.g. batched watermark forwarding); rows it would release are
            optional in the comparison.

    Every field is the engine's to state: none has a default, so no engine is verified by
    another engine's rules because it left one out.
    """

    emission: Emission
    window_firing: WindowFiring
    final_watermark: FinalWatermark
    integer_average: IntegerAverage
    side_lookup: SideLookup
    watermark_slack_ms: int


@dataclass(frozen=True)
class TargetOption:
    """A command-line option an engine owns to choose its target, e.g. `--flink-rest URL`.

    The `run` and `verify` commands offer every engine's target options and pass the ones given
    to the chosen engine's constructor as `param=value`; they never name an engine themselves.
    """

    flag: str  # "--flink-rest"
    param: str  # the engine constructor's keyword argument, "rest_url"
    help: str
    metavar: str = "TEXT"


class RowKind(str, enum.Enum):
    ADD = "+"  # one more occurrence of `row` (an insert, or an update's new row)
    RETRACT = "-"  # one occurrence fewer (a delete, or an update's old row)
    UPSERT = "="  # `row` is now the one row of `key`, replacing any earlier row of that key


class Change(NamedTuple):
    """One collected row: what it does to the result table."""

    kind: RowKind
    row: tuple
    key: tuple | None = None  # UPSERT: the key the row stands for


class EventCount(NamedTuple):
    """Events a job's source has emitted, and when that count was true (`Job.events_emitted_at`).

    Attributes:
        events: As `Job.events_emitted`.
        at: Unix seconds by the engine's clock at which the count was true; None: now (the
            engine cannot tell, or its count is live).
    """

    events: int
    at: float | None = None


@dataclass(frozen=True)
class LiveState:
    """A job's state as its state backend sees it now (`Job.live_state`), summed over every
    operator and subtask. Unlike a checkpoint's size (the files of an LSM store: live data plus
    whatever compaction has not removed yet), it follows the state itself.

    Attributes:
        bytes: The live data in bytes by the backend's own estimate (Flink on RocksDB/ForSt:
            `estimate-live-data-size` of the files plus the unflushed memtables), None where
            the engine gives no such estimate.
        keys: Entries held (Flink: `estimate-num-keys`; Spark: the state stores' rows).
        files_bytes: The store's files on disk (RocksDB's `total-sst-files-size`), dead
            entries included: what a checkpoint copies.
        memory_bytes: State held in memory (memtables; Spark's `memoryUsedBytes`).
    """

    bytes: int | None
    keys: int | None
    files_bytes: int | None = None
    memory_bytes: int | None = None


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

    def continue_with(self, source_dir: Path) -> None:
        """An IN_PLACE engine's handoff (`Capabilities.handoff`): after the phase checkpoint,
        read the part at `source_dir` next, keeping the state; from then on `events_emitted`
        and `events_per_reader` count that part's events only."""
        raise EngineError(f"job {self.id} cannot continue in place on another part")

    def inject_failure(self) -> InjectedFailure:
        """Kill, without warning, the process running this job's tasks (and let the engine
        replace it as its deployment would). Only where `Capabilities.failover` is INJECT."""
        raise NotImplementedError

    def recovery(self) -> Recovery | None:
        """The job's restarts after failures so far; None where the engine cannot tell."""
        return None

    def live_state(self) -> LiveState | None:
        """The job's live state now, from its state backend's own metrics; None where the
        engine cannot tell (no such metrics, a backend without them, a job without state
        yet). Cheap enough to call once a second."""
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
        """The directory of the engine's own SQL, one `qN.sql` per query it implements
        (`workload.queries.sql` reads it), usually `resources.files(<its package>) / "sql"`.
        Answers without an instance. The default: the engine runs no Nexmark SQL."""
        raise UsageError(f"engine {cls.name!r} has no SQL files")

    def unsupported_reason(self, query: str) -> str | None:
        """None if the engine can run the query, else the engine's reason why not.

        The default refuses queries outside `capabilities().queries`; an engine that asks its
        planner extends it."""
        if query not in self.capabilities().queries:
            return f"{self.name} has no implementation of {query}"
        return None

    def enable_failover(self) -> FailoverSupport:
        """Set the engine up for failover runs, before `start`: failed jobs restart from their
        latest checkpoint, and (INJECT) workers it can kill. Returns what it can do on this
        target. Raise EngineError when it cannot (the default: FailoverSupport.NONE)."""
        raise EngineError(f"{self.name} does not support failover runs")

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
