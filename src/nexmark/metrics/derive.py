"""Pure functions from raw measurements to the protocol's metrics (see docs/protocol.md)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nexmark.metrics.sampler import Sample

STEADY_FRACTION = 0.9  # "steady speed" = a 1 s sample at 90% of the phase's median throughput
# Shorter than the protocol's fastest sampling poll (50 ms): only two metric dumps taken that
# close (a delayed fetch followed by a prompt one) make such an interval, too short for a rate.
MIN_INTERVAL_S = 0.04


@dataclass(frozen=True)
class Rate:
    """Throughput and cores between two samples of one phase."""

    wall: float  # end of the interval: when the end sample's count was true
    phase: str
    events: int
    throughput_eps: float
    cores: float
    end: Sample | None = None  # the sample the interval ends at


def rates(samples: Sequence[Sample]) -> list[Rate]:
    """Interval rates between the samples of the same phase (the time series).

    Throughput is events over the time between the samples' counts being true (`Sample.wall`),
    cores the engine's CPU over the time between its readings (`Sample.cpu_time`). A sample whose
    count is no newer than the last one's (the engine had not refreshed it: the same metric
    time) ends no interval: it would show a rate of zero while the engine kept reading; the
    next refreshed one spans both polls; so does one whose count is under `MIN_INTERVAL_S`
    newer. A count that went back (a job restarted from a
    checkpoint, docs/failover.md) gives no rate and starts a new interval.
    """
    out: list[Rate] = []
    prev: Sample | None = None
    for b in samples:
        a, prev = prev, b
        if a is None or b.phase != a.phase or b.events < a.events:
            continue
        dt = b.wall - a.wall
        if dt < MIN_INTERVAL_S:
            prev = a  # not refreshed (or barely): the interval goes on from `a`
            continue
        cpu = cores(a.cpu_s, b.cpu_s, span(a.cpu_time, b.cpu_time)) or 0.0
        out.append(Rate(b.wall, b.phase, b.events, (b.events - a.events) / dt, cpu, b))
    return out


def phase_pace(samples: Sequence[Sample], phase: str) -> float | None:
    """A phase's events per second from its samples: from the last one before its count
    moved to the first that read its final count, stalls included (a back-pressured source
    does stand still) and the start-up and the wait after its last event left out. Unlike the
    median of the interval rates, which reads 0 where half the intervals met a count the
    engine had not refreshed, it is the phase's own throughput, comparable between phases."""
    own = [s for s in samples if s.phase == phase]
    if len(own) < 2 or own[-1].events <= own[0].events:
        return None
    start = next(i for i, s in enumerate(own) if s.events > own[0].events) - 1
    end = next(i for i, s in enumerate(own) if s.events == own[-1].events)
    dt = own[end].wall - own[start].wall
    return (own[end].events - own[start].events) / dt if dt > 0 else None


def time_to_steady(t_submit: float, phase_rates: Sequence[Rate]) -> float | None:
    """Seconds from the restore's submission to the first sample at 90% of the median rate."""
    moving = [r.throughput_eps for r in phase_rates if r.throughput_eps > 0]
    if not moving:
        return None
    target = STEADY_FRACTION * statistics.median(moving)
    for r in phase_rates:
        if r.throughput_eps >= target:
            return r.wall - t_submit
    return None


def safe_div(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def span(start: float | None, end: float | None) -> float | None:
    """end - start when both are known and end is later; else None."""
    if start is None or end is None or end <= start:
        return None
    return end - start


def cores(cpu_start: float | None, cpu_end: float | None, span_s: float | None) -> float | None:
    """The CPU seconds used between two readings over the wall time between the readings. The
    span must be the readings' own: a shorter one (the phase's engine-side instants, read a
    moment before the CPU) would count CPU used outside it, and read more cores than exist."""
    if cpu_start is None or cpu_end is None:
        return None
    return safe_div(max(0.0, cpu_end - cpu_start), span_s)


def cost_core_s_per_million(cores: float | None, time_s: float | None, events: int) -> float | None:
    """Core-seconds spent per million events: what a result costs, whatever the machine."""
    if cores is None or time_s is None or events <= 0:
        return None
    return cores * time_s / (events / 1e6)


def state_growth(start_bytes: int | None, end_bytes: int | None) -> float | None:
    """A state size at the end of the benchmark phase over the same size at the cut: the
    checkpoints' full sizes (`checkpoint_growth`: files, dead entries included) or the
    logical sizes (`state_logical_bytes_*`)."""
    if not start_bytes or end_bytes is None:
        return None
    return end_bytes / start_bytes


# A live-state trend needs this many points over this long: fewer, or a shorter phase, and the
# checkpoint sizes are the only measure left.
LIVE_MIN_POINTS = 3
LIVE_MIN_SPAN_S = 2.0


@dataclass(frozen=True)
class LiveGrowth:
    """How a live state measure moved over the benchmark phase (`live_growth`).

    Attributes:
        start, end: The Theil-Sen line through the phase's points, at its first and last
            point (the measure's unit: bytes or keys).
        growth: end / start: above 1.2 the state is "not steady".
        trend_per_s: The line's slope over the points' mean: the share the state grows by
            per second (0.01 = 1%/s).
        points: How many points it rests on.
    """

    start: float
    end: float
    growth: float
    trend_per_s: float
    points: int


def refreshed(reads: Sequence[tuple[float, tuple]]) -> list[tuple[float, tuple]]:
    """A restored job's live-state reads (time, values), one per refresh: an engine may
    refresh them less often than they are read (Flink's state gauges every 5 s), and a read
    that repeats the last one is no new point. Reads before the first one above zero are left
    out too: the restored job holds the phase checkpoint's state, so a zero is a gauge not
    refreshed yet."""
    out: list[tuple[float, tuple]] = []
    for t, values in reads:
        if out and values == out[-1][1]:
            continue
        if not out and not any(values):
            continue
        out.append((t, values))
    return out


# Above this share of the live bytes held in memory (at the median read), the reads show the
# store's write buffers, not its state (`only_buffered`).
BUFFERED_SHARE_LIMIT = 0.5


def only_buffered(jobs: Sequence[Sequence[tuple[float, tuple]]]) -> bool | None:
    """Whether a phase's live reads (time; bytes, keys, files, memory), one list per job, show
    the store's write buffers rather than its state: the writes it held in memory were most of
    its live bytes at the median read, or they never fell between two reads of one job (a
    flush moves them to the files and frees them, so none was seen).

    Where an engine gives live bytes, they count the writes it holds in memory until a flush
    (an LSM store's memtables) as written, overwrites and deletes included, and so do its
    entries. A restored store opens with empty memtables, and a small state under a heavy
    write stream is mostly memtables that fill and flush: a line through such reads follows
    that sawtooth, not the state. (The files' size cannot tell a flush: a compaction changes
    it too.) None: the reads cannot tell (no live bytes or no memory measure).
    """
    held = [
        [(v[0], v[3]) for _, v in reads if v[0] is not None and v[3] is not None] for reads in jobs
    ]
    every = [x for reads in held for x in reads]
    if not any(memory for _, memory in every):
        return None if not every else False
    shares = [memory / size for size, memory in every if size > 0]
    mostly = bool(shares) and statistics.median(shares) > BUFFERED_SHARE_LIMIT
    flushed = any(b[1] < a[1] for reads in held for a, b in zip(reads, reads[1:], strict=False))
    return mostly or not flushed


def live_growth(points: Sequence[tuple[float, float]]) -> LiveGrowth | None:
    """The trend of a live state measure over a phase, from (seconds, value) points.

    A line through every point, not the ratio of two of them: a single read swings with the
    store's flushes and compactions, the line with the state. The line is Theil-Sen's (the
    median of the slopes between every two points, through the median of the values less
    that slope), which a sawtooth or a few outlying reads do not tilt as least squares would.
    None with fewer than `LIVE_MIN_POINTS` points, a span under `LIVE_MIN_SPAN_S`, or a line
    not above zero at the start (no state to grow from).
    """
    if len(points) < LIVE_MIN_POINTS:
        return None
    ts = np.array([float(t) for t, _ in points])
    vs = np.array([float(v) for _, v in points])
    if ts[-1] - ts[0] < LIVE_MIN_SPAN_S:
        return None
    i, j = np.triu_indices(len(ts), k=1)
    apart = ts[j] - ts[i]
    keep = apart > 0
    slope = float(np.median((vs[j] - vs[i])[keep] / apart[keep]))
    intercept = float(np.median(vs - slope * ts))
    start = float(intercept + slope * ts[0])
    end = max(0.0, float(intercept + slope * ts[-1]))  # a line may overshoot an emptied state
    mean = float(vs.mean())
    if start <= 0 or mean <= 0:
        return None
    return LiveGrowth(start, end, end / start, slope / mean, len(points))


def median_or_none(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
