"""What to run and with what: a job's spec (the query, its source, its sink, the engine-neutral
knobs) and the setup it resolves to (`Engine.job_setup`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from nexmark.durations import format_seconds, parse_seconds
from nexmark.engines.checkpoints import Snapshot
from nexmark.engines.source import Source, as_source
from nexmark.storage.s3 import S3Url

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


@dataclass
class JobSpec:
    """What to run: one query on one dataset part."""

    query: str  # "q0".."q23"
    # What the job reads (engines/source.py): a dataset part (warm-up or benchmark). A part
    # folder's path is taken as its FileSource.
    source: Source
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
    # On an object store (docs/object-store.md): where the job's checkpoints go (a prefix of
    # its own; None: under `work_dir`), and the prefix its source watches when the part is on
    # a store (`workload.feed.Feed` copies the part's objects in there): both under the run's
    # prefix (`ProtocolOptions.store_dir`), typed as the protocol made them, never parsed again.
    checkpoint_dir: S3Url | None = None
    feed_dir: S3Url | None = None

    def __post_init__(self) -> None:
        self.source = as_source(self.source)


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
