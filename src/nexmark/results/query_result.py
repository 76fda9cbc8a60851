"""The result of one query run: the record every engine writes and every report reads.

One `QueryResult` per (run, engine, query). Every metric is nullable: a failed, timed-out or
unsupported query keeps its identity, status and reason, and whatever was measured before it
stopped. docs/results.md documents every field, its unit and its meaning; its parts are in
figures.py, setup.py and timeline.py, the codec in codec.py, the file format in document.py;
`problems()` checks each derived metric against its inputs (docs/protocol.md's formulas).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

from nexmark.results.codec import NESTED, ResultsError, build, fields_of, nested
from nexmark.results.figures import (
    CHECKPOINT_MEASURE,
    LOGICAL_MEASURE,
    CheckpointStats,
    Failover,
    Latency,
    PhaseCheckpoint,
    RateFeed,
    RepeatSample,
    SourceCalibration,
    Sustainable,
    ThroughputStats,
)
from nexmark.results.operators import BusySeries, OperatorLoad, bottleneck_of
from nexmark.results.profile import Profile
from nexmark.results.setup import Setup, SystemCheck
from nexmark.results.steady import STATE_GROWTH_LIMIT
from nexmark.results.timeline import CheckpointEvent, LivePoint, Sample, Timestamps


class Status(str, enum.Enum):
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    UNSUPPORTED = "unsupported"


@dataclass
class QueryResult:
    """Everything known about one query of one run on one engine (see docs/results.md)."""

    run_id: str
    engine: str
    query: str
    status: Status
    started_at: str | None = None  # ISO 8601 UTC, when the query started
    engine_version: str | None = None
    reason: str | None = None
    dataset_id: str | None = None
    events_id: str | None = None  # the same for every layout of the same events
    events_total: int | None = None
    events_warmup: int | None = None
    events_benchmark: int | None = None
    time_s: float | None = None
    throughput_eps: float | None = None
    cores: float | None = None
    throughput_per_core: float | None = None
    cost_core_s_per_million: float | None = None
    recovery_time_s: float | None = None
    # Why the scored phase was too short for its figures to resolve (a few samples, or mostly
    # its end checkpoint; results/steady.py); None: long enough. Scored, and flagged.
    phase_too_short: str | None = None
    time_to_first_event_s: float | None = None
    time_to_steady_s: float | None = None
    first_read_gap_s: float | None = None
    # The processing-time clock from the cut to the first benchmark read: how old the restored
    # state was to a processing-time TTL (steady.expired_at_restore).
    restored_state_age_s: float | None = None
    watermark_lag_max_s: float | None = None
    watermark_lag_warmup_end_s: float | None = None
    phase_checkpoint: PhaseCheckpoint = field(default_factory=PhaseCheckpoint)
    checkpoints: CheckpointStats = field(default_factory=CheckpointStats)
    state_bytes_start: int | None = None  # the phase checkpoint's full size
    state_bytes_end: int | None = None  # the end checkpoint's full size
    checkpoint_growth: float | None = None  # state_bytes_end / state_bytes_start
    # The state written once in the engine's canonical format (Job.logical_state_bytes) after
    # the phase checkpoint and after the end checkpoint (None: not measured).
    state_logical_bytes_start: int | None = None
    state_logical_bytes_end: int | None = None
    state_growth: float | None = None  # over the benchmark phase, on `state_measure`
    # LIVE_BYTES_MEASURE, LIVE_KEYS_MEASURE, LOGICAL_MEASURE or CHECKPOINT_MEASURE
    state_measure: str | None = None
    state_live_start: float | None = None  # the live measure's fitted line at the phase's start
    state_live_end: float | None = None  # ... and at its end: state_growth = end / start
    state_trend_per_s: float | None = None  # the line's slope over its mean, per second
    # The refreshed live reads the trend rests on, and from how many repeats' phases (None:
    # the scored phase's own; with repeats, every repeat's reads on one clock).
    state_reads: int | None = None
    state_pooled_repeats: int | None = None
    # True: the reads showed the store's write buffers (memtables: most of the live bytes, or
    # never freed by a flush), not its state, so no live trend was drawn (`only_buffered`).
    state_live_unflushed: bool | None = None
    state_live_bytes_end: int | None = None  # the last live bytes read in the benchmark phase
    state_live_keys_end: int | None = None  # the last entries count read in the benchmark phase
    source_ratio: float | None = None  # throughput_eps / source.throughput_eps
    source_invalid: str | None = None  # why the source-only job was no ceiling for this query
    state_steady: bool | None = None
    steady_reason: str | None = None
    state_bound: str | None = None  # what bounds the state on this engine (JobSetup.state_bound)
    restored_from: str | None = None
    handoff: str | None = None  # how the state crossed the cut: "resubmit" or "in-place"
    # --source kafka: the embedded broker's CPU over the scored phase / Time, beside (never in)
    # `cores`; None from files or a user's cluster (not measurable: absent, never 0).
    source_cores: float | None = None
    # --source kafka: the restore proof on offsets ("proved: ...", "not proven: ..."); None
    # from files.
    source_offsets: str | None = None
    # Processes other than the run's (and its engine's): their CPU over the scored phase and
    # over the warm-up / each phase's time, and the busiest in the scored phase ("python3 (pid
    # 40) 0.61"). Over a quarter of a core, the phase shared the machine. None: not measured.
    other_cores: float | None = None
    other_cores_warmup: float | None = None
    other_processes: str | None = None
    # Where the scored phase's time went, per operator (results/operators.py), and the busiest
    # one with its share of time busy (0-1). None: the engine reports no operators.
    operators: list[OperatorLoad] | None = None
    bottleneck: str | None = None
    bottleneck_busy: float | None = None
    # Each operator's share of time busy through the scored phase, about once a second (at most
    # `operators.MAX_BUSY_POINTS` points each). None: not recorded (no operators, older results).
    operator_busy: list[BusySeries] | None = None
    # The scored phases' CPU profile (`--profile`, results/profile.py): its flame graph, its
    # samples by kind of work; or why there is none. None: not asked.
    profile: Profile | None = None
    setup: Setup = field(default_factory=Setup)
    source: SourceCalibration = field(default_factory=SourceCalibration)
    failover: Failover = field(default_factory=Failover)
    rate: RateFeed = field(default_factory=RateFeed)
    latency: Latency = field(default_factory=Latency)
    throughput_stats: ThroughputStats = field(default_factory=ThroughputStats)
    sustainable: Sustainable = field(default_factory=Sustainable)
    repeats: list[RepeatSample] = field(default_factory=list)
    job_options: dict[str, dict[str, str]] = field(default_factory=dict)
    timestamps: Timestamps = field(default_factory=Timestamps)
    system_check: SystemCheck = field(default_factory=SystemCheck)  # just before the query
    timeseries: list[Sample] = field(default_factory=list)
    live_state: list[LivePoint] = field(default_factory=list)  # the live state, both phases
    checkpoint_events: list[CheckpointEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.status = Status(self.status)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def state_end_bytes(self) -> int | None:
        """What the state holds at the phase's end: its logical size where measured (every
        entry once), else the backend's live estimate, which on an LSM store counts the write
        buffers' overwrites and deletes too (q5 on 10M: 202 MiB live, 8.6 MB logical)."""
        if self.state_logical_bytes_end is not None:
            return self.state_logical_bytes_end
        return self.state_live_bytes_end

    @property
    def key(self) -> tuple[str, str]:
        """(engine, query): a results directory holds one record per key."""
        return (self.engine, self.query)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (no schema version: that belongs to the file)."""
        data = dataclasses.asdict(self)
        data["status"] = self.status.value
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueryResult:
        """Build from a dict of the current schema version; unknown fields are an error."""
        where = f"result {data.get('query', '?')!r}" if isinstance(data, dict) else "result"
        values = fields_of(cls, data, where)
        for name, kind in NESTED.items():
            # null stands for "nothing measured": the same as an object of nulls
            value = values.pop(name, None)
            if value is not None:
                values[name] = nested(kind, value, f"{where}.{name}")
        for name, kind in (
            ("timeseries", Sample),
            ("live_state", LivePoint),
            ("checkpoint_events", CheckpointEvent),
            ("repeats", RepeatSample),
        ):
            items = values.get(name) or []
            values[name] = [build(kind, d, f"{where}.{name}[{i}]") for i, d in enumerate(items)]
        if values.get("operators") is not None:  # null: none reported, unlike an empty list
            values["operators"] = [
                build(OperatorLoad, d, f"{where}.operators[{i}]")
                for i, d in enumerate(values["operators"])
            ]
        if values.get("operator_busy") is not None:
            values["operator_busy"] = [
                build(BusySeries, d, f"{where}.operator_busy[{i}]")
                for i, d in enumerate(values["operator_busy"])
            ]
        for name in ("run_id", "engine", "query", "status"):
            if values.get(name) is None:
                raise ResultsError(f"{where}: missing required field {name!r}")
        try:
            return cls(**values)
        except ValueError as exc:  # an unknown status
            raise ResultsError(f"{where}: {exc}") from exc

    def problems(self) -> list[str]:
        """Inconsistencies between derived metrics and their inputs (empty when coherent)."""
        return _consistency(self)


def _close(a: float | None, b: float | None, rel: float = 1e-6) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def _consistency(r: QueryResult) -> list[str]:
    """Check each derived metric against the formula of docs/protocol.md."""
    out: list[str] = []

    def ratio(num: float | None, den: float | None) -> float | None:
        return None if num is None or not den else num / den

    if r.ok:
        checks = [
            ("throughput_eps", r.throughput_eps, ratio(r.events_benchmark, r.time_s)),
            ("throughput_per_core", r.throughput_per_core, ratio(r.throughput_eps, r.cores)),
            (
                "checkpoint_growth",
                r.checkpoint_growth,
                ratio(r.state_bytes_end, r.state_bytes_start),
            ),
            (
                "state_growth",
                r.state_growth,
                None  # not judged: two sizes at different points of a window cycle
                if r.state_measure is None and r.state_steady is None and r.steady_reason
                else r.checkpoint_growth
                if r.state_measure in (None, CHECKPOINT_MEASURE)
                else ratio(r.state_logical_bytes_end, r.state_logical_bytes_start)
                if r.state_measure == LOGICAL_MEASURE
                else ratio(r.state_live_end, r.state_live_start),
            ),
            ("source_ratio", r.source_ratio, ratio(r.throughput_eps, r.source.throughput_eps)),
        ]
        if r.cores is not None and r.time_s is not None and r.events_benchmark:
            cost = r.cores * r.time_s / (r.events_benchmark / 1e6)
            checks.append(("cost_core_s_per_million", r.cost_core_s_per_million, cost))
        out += [f"{n} is {a!r}, expected {b!r}" for n, a, b in checks if not _close(a, b)]
        ts = r.timestamps
        for name, value, start, end in (
            ("recovery_time_s", r.recovery_time_s, ts.t_submit, ts.t_running),
            ("time_s", r.time_s, ts.t_running, ts.t_end),
        ):
            if None not in (value, start, end) and abs(value - (end - start)) > 1e-3:
                out.append(f"{name} is {value!r}, timestamps say {end - start!r}")
        # Not steady within the bound only with a reason (a restored state a TTL had expired);
        # not judged (no growth) only with a reason.
        if r.state_growth is None and r.state_steady is None and r.state_measure is not None:
            out.append(f"state_measure is {r.state_measure!r} without a growth")
        grew = r.state_growth is not None and r.state_growth > STATE_GROWTH_LIMIT
        if r.state_growth is not None and (
            r.state_steady is None
            or (r.state_steady and grew)
            or (not r.state_steady and not grew and not r.steady_reason)
        ):
            out.append(f"state_steady is {r.state_steady!r} with growth {r.state_growth:.3f}")
    elif r.reason is None:
        out.append(f"status {r.status.value} without a reason")
    if None not in (r.events_total, r.events_warmup, r.events_benchmark) and (
        r.events_warmup + r.events_benchmark != r.events_total
    ):
        out.append("events_warmup + events_benchmark != events_total")
    return out + _bottleneck_problems(r)


def _bottleneck_problems(r: QueryResult) -> list[str]:
    """The bottleneck recorded must be its operators' busiest (`operators.bottleneck_of`)."""
    top = bottleneck_of(r.operators)
    if (r.bottleneck, r.bottleneck_busy) == top:
        return []
    return [f"bottleneck is {r.bottleneck!r}, its operators' busiest {top[0]!r}"]
