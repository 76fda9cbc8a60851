"""The engine interface the protocol runner drives.

The runner never asks which engine it has: everything it needs (start a query on a dataset part,
possibly restored from a checkpoint; watch progress; checkpoint on demand; cancel; CPU used)
is here. An engine lives in its own package and is found through the `nexmark.engines` entry
point group (see `registry.py`), so its libraries are imported only when it is used.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path


class JobState(str, enum.Enum):
    """Lifecycle of a job, engine-neutral."""

    STARTING = "starting"  # submitted, not every task running yet (e.g. restoring state)
    RUNNING = "running"  # every task running
    FINISHED = "finished"
    FAILED = "failed"
    CANCELED = "canceled"

    @property
    def terminal(self) -> bool:
        return self in (JobState.FINISHED, JobState.FAILED, JobState.CANCELED)


class SinkKind(str, enum.Enum):
    DISCARD = "discard"  # benchmark runs: rows are produced and dropped
    COLLECT = "collect"  # verification runs: rows (with their changelog kind) can be read back


@dataclass
class JobSpec:
    """What to run: one query on one dataset part."""

    query: str  # "q0".."q23"
    source_dir: Path  # a dataset part directory (warm-up or benchmark)
    work_dir: Path  # per-run scratch: checkpoints, q10 files, side tables (runner removes it)
    sink: SinkKind = SinkKind.DISCARD
    collect_dir: Path | None = None  # where COLLECT writes, read back with `Job.collected_rows`
    restore_from: str | None = None  # a checkpoint location returned by `trigger_checkpoint`
    state_ttl: str | None = None  # e.g. "10 min"; None = the configured default, "0" = no TTL
    parallelism: int | None = None  # None = the engine's configured default
    checkpoint_interval_s: float | None = None  # None = the engine's configured interval
    # The source stays open after its last event: no end of input, no final watermark (warm-up).
    # False: the source ends after the part, the job drains and finishes (benchmark phase).
    keep_source_open: bool = False


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


@dataclass
class CheckpointInfo:
    """One completed (or failed) checkpoint."""

    id: int
    status: str  # "completed" | "failed" | "in_progress"
    trigger_ts: float  # unix seconds
    ack_ts: float | None  # unix seconds when the last task acknowledged; None if not completed
    duration_s: float | None
    checkpointed_bytes: int | None  # what this checkpoint wrote (incremental size)
    state_bytes: int | None  # full state size
    location: str | None = None  # where it can be restored from
    is_savepoint: bool = False


@dataclass
class RestoreInfo:
    checkpoint_id: int | None
    location: str | None


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


class Job(ABC):
    """A running query. Every call is cheap enough to poll about every second."""

    id: str
    setup: JobSetup | None = None  # what it was submitted with

    @abstractmethod
    def status(self) -> JobStatus: ...

    @abstractmethod
    def events_emitted(self) -> int:
        """Events the source has emitted so far (all subtasks summed)."""

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

    @abstractmethod
    def trigger_checkpoint(self, timeout_s: float) -> CheckpointInfo:
        """Take a checkpoint now and wait until it completes; raise EngineError if it fails."""

    @abstractmethod
    def checkpoints(self) -> list[CheckpointInfo]:
        """Every checkpoint of this job so far (periodic and triggered), oldest first."""

    @abstractmethod
    def restored_from(self) -> RestoreInfo | None:
        """Whether, and from what, this job restored its state."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop without draining; retained checkpoints stay. Returns when the job is terminal."""

    def collected_rows(self) -> list[tuple[str, tuple]]:
        """Rows committed to a COLLECT sink so far: (changelog kind '+I'/'-U'/'+U'/'-D', row)."""
        raise NotImplementedError


class Engine(ABC):
    """A stream processor that runs Nexmark queries."""

    name: str = ""

    @abstractmethod
    def start(self) -> None:
        """Bring the engine up (or connect to it). Raise EngineError with a one-line reason."""

    @abstractmethod
    def close(self) -> None:
        """Stop jobs and processes this engine started. Safe to call twice and after a failure."""

    @abstractmethod
    def info(self) -> EngineInfo: ...

    @abstractmethod
    def unsupported_reason(self, query: str) -> str | None:
        """None if the engine can run the query, else the engine's reason why not."""

    @abstractmethod
    def job_setup(self, spec: JobSpec) -> JobSetup:
        """What a job of `spec` would be submitted with (no engine start needed)."""

    @abstractmethod
    def submit(self, spec: JobSpec) -> Job:
        """Start the job; its `setup` is what it was submitted with (`job_setup(spec)`)."""

    @abstractmethod
    def cpu_seconds(self) -> float:
        """CPU seconds used so far by the engine's processes (user + system, all of them)."""

    def __enter__(self) -> Engine:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
