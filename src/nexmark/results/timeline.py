"""A query run over time: its timestamps, the 1 s samples, the live-state reads and the
checkpoints as they completed (the report's charts read these)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Timestamps:
    """Wall-clock instants of the query run, unix seconds.

    Attributes:
        query_start: The query began (time 0 of the time series).
        warmup_start: The warm-up job was submitted.
        warmup_end: The warm-up source had emitted its last event (the cut).
        t_submit: The restored job was submitted.
        t_running: Every task of the restored job was running (state restored).
        t_first: The first benchmark event was read.
        t_end: The last benchmark event was fully processed.
    """

    query_start: float | None = None
    warmup_start: float | None = None
    warmup_end: float | None = None
    t_submit: float | None = None
    t_running: float | None = None
    t_first: float | None = None
    t_end: float | None = None


@dataclass
class Sample:
    """One point of the time series, about every second.

    Attributes:
        t: Seconds since the query started (`timestamps.query_start`).
        phase: "warmup", "restore" or "benchmark".
        events: Events read so far by the phase's job (cumulative within the phase).
        throughput_eps: Events per second over the interval ending at `t`.
        cores: CPU seconds per second used by the engine over that interval.
        watermark_lag_s: Event time the data had reached when the watermark was read (that of
            the part's event the count had reached then) minus the job's watermark, seconds;
            None where the job has no watermark.
        released: In a rate-fed benchmark phase, events released by the feed by `t` (the lag
            is `released - events`); None otherwise.
        count_age_s: How long before the poll that read it `events` was true: `t` is the
            engine's own time of the count (its metric time), this much before the poll; None
            where the engine gives none (`t` is the poll's time).
    """

    t: float
    phase: str
    events: int | None = None
    throughput_eps: float | None = None
    cores: float | None = None
    watermark_lag_s: float | None = None
    released: int | None = None  # a rate-fed phase: events the feed had released by then
    count_age_s: float | None = None  # the poll's time minus `t` (None: `t` is the poll's)


@dataclass
class LivePoint:
    """One read of the job's live state (`engines.base.LiveState`), about every second.

    Attributes:
        t: Seconds since the query started, at the poll that read it.
        phase: "warmup" or "benchmark" (the restored job).
        bytes: The live data by the state backend's estimate; None where it gives none.
        keys: Entries held.
        files_bytes: The store's files (dead entries included).
        memory_bytes: State held in memory (memtables; Spark's `memoryUsedBytes`).
    """

    t: float
    phase: str
    bytes: int | None = None
    keys: int | None = None
    files_bytes: int | None = None
    memory_bytes: int | None = None

    @property
    def reading(self) -> tuple[int | None, ...]:
        """What was read, without when: equal readings are one refresh of the engine's."""
        return (self.bytes, self.keys, self.files_bytes, self.memory_bytes)


@dataclass
class CheckpointEvent:
    """One checkpoint of either phase, for the charts.

    Attributes:
        phase: "warmup" or "benchmark".
        id: The engine's checkpoint id.
        t: Trigger time, seconds since the query started.
        status: "completed" or "failed".
        duration_s: Trigger to completion, seconds (None if failed).
        checkpointed_bytes: Incremental size, bytes.
        state_bytes: Full state size, bytes.
        kind: "periodic", "phase" (the phase checkpoint) or "end" (proves the last event).
        t_completed: When it completed (the last acknowledgement), seconds since the query
            started; None if it did not (or the engine does not say).
    """

    phase: str
    id: int
    t: float
    status: str = "completed"
    duration_s: float | None = None
    checkpointed_bytes: int | None = None
    state_bytes: int | None = None
    kind: str = "periodic"
    t_completed: float | None = None
