"""What a running job reports when polled: its state, its event count (and when it was true),
its live state, and what it says about failures and restarts (`Job` returns these)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple


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


@dataclass
class JobStatus:
    state: JobState
    failure: str | None = None  # the engine's root cause, when FAILED


class EventCount(NamedTuple):
    """Events a job's source has emitted, and when that count was true (`Job.events_emitted_at`).

    Attributes:
        events: As `Job.events_emitted`.
        at: Unix seconds by the engine's clock at which the count was true; None: now (the
            engine cannot tell, or its count is live).
    """

    events: int
    at: float | None = None


class WatermarkRead(NamedTuple):
    """A job's watermark and when it was true (`Job.watermark_at`).

    Attributes:
        ms: As `Job.watermark_ms`.
        at: Unix seconds by the engine's clock at which it was true; None: at the count's time
            (both come from one answer, or the engine cannot tell).
    """

    ms: int | None
    at: float | None = None


@dataclass(frozen=True)
class LiveState:
    """A job's state as its state backend sees it now (`Job.live_state`), summed over every
    operator and subtask. Unlike a checkpoint's size (the files of an LSM store: live data plus
    whatever compaction has not removed yet), it follows the state itself.

    Attributes:
        bytes: The live data in bytes by the backend's own estimate (Flink on RocksDB/ForSt:
            `estimate-live-data-size` of the files plus the unflushed memtables), None where
            the engine gives no such estimate. Where given, it counts the writes held in
            memory until a flush (`memory_bytes`) as written, overwrites and deletes included,
            and `keys` counts them likewise (`derive.only_buffered`).
        keys: Entries held (Flink: `estimate-num-keys`; Spark: the state stores' rows).
        files_bytes: The store's files on disk (RocksDB's `total-sst-files-size`), dead
            entries included: what a checkpoint copies.
        memory_bytes: State held in memory (memtables; Spark's `memoryUsedBytes`).
    """

    bytes: int | None
    keys: int | None
    files_bytes: int | None = None
    memory_bytes: int | None = None


@dataclass(frozen=True)
class VertexLoad:
    """One read of a unit of a job's work (`Job.operator_load`; on Flink a job vertex: the
    operators chained into one task; on Spark a part of the micro-batch or a state operator),
    as counters since its tasks started, so that two reads give exact figures over the time
    between them, whatever window the engine's own rates use.

    Attributes:
        id: The engine's id of the vertex (the same in every read of one job).
        name: Its name as the engine shows it (Flink: the chained operators, `A -> B`).
        parallelism: Its subtasks.
        ran_ms: How long its tasks have run (mean over its subtasks, ms; Spark: the wall time
            its micro-batches spanned): the clock the other counters are read against; None
            where the engine cannot tell.
        busy_ms: Of that, the time busy (mean over its subtasks, ms).
        backpressured_ms: The time blocked by its outputs (back-pressured).
        idle_ms: The time waiting for input.
        records_in: Records its tasks received, summed over its subtasks.
        records_out: Records its tasks emitted, summed over its subtasks.
    """

    id: str
    name: str
    parallelism: int | None = None
    ran_ms: float | None = None
    busy_ms: float | None = None
    backpressured_ms: float | None = None
    idle_ms: float | None = None
    records_in: float | None = None
    records_out: float | None = None


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
