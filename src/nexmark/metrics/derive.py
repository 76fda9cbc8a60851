"""Pure functions from raw measurements to the protocol's metrics (see docs/protocol.md)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

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
    cores the engine's CPU over the time between the polls (`Sample.polled`). A sample whose
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
        cpu_dt = b.poll_time - a.poll_time
        cores = (b.cpu_s - a.cpu_s) / cpu_dt if cpu_dt > 0 else 0.0
        out.append(Rate(b.wall, b.phase, b.events, (b.events - a.events) / dt, cores, b))
    return out


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


def cost_core_s_per_million(cores: float | None, time_s: float | None, events: int) -> float | None:
    """Core-seconds spent per million events: what a result costs, whatever the machine."""
    if cores is None or time_s is None or events <= 0:
        return None
    return cores * time_s / (events / 1e6)


def state_growth(start_bytes: int | None, end_bytes: int | None) -> float | None:
    """Full state size at the end of the benchmark phase over its size at the phase checkpoint."""
    if not start_bytes or end_bytes is None:
        return None
    return end_bytes / start_bytes


def median_or_none(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None
