"""The figures of a query's phases, from what they observed (`observe`) and the sampler's
samples: time series, live state, checkpoints, state growth, the rate feed and its lag,
latency, the failover. `record` assembles them into a `QueryResult`; the rate search
(`sustainable`) judges its trials by some of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from nexmark.engines.base import CheckpointInfo, CheckpointStatus
from nexmark.metrics import derive
from nexmark.metrics import latency as lat
from nexmark.metrics.sampler import SCORED_PHASE, Sampler
from nexmark.metrics.sampler import Sample as RawSample
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query.failover import outage_metrics
from nexmark.protocol.query.observe import Measured
from nexmark.results import operators
from nexmark.results.figures import (
    CHECKPOINT_MEASURE,
    LIVE_BYTES_MEASURE,
    LIVE_KEYS_MEASURE,
    LOGICAL_MEASURE,
    CheckpointStats,
    Failover,
    Latency,
    PhaseCheckpoint,
    RateFeed,
)
from nexmark.results.query_result import QueryResult
from nexmark.results.timeline import CheckpointEvent, LivePoint, Sample, Timestamps
from nexmark.workload.feed import ReleaseLog, delivered_eps, max_rate_error, released_at
from nexmark.workload.schema import WATERMARK_DELAY_MS


def _benchmark_reads(r: QueryResult) -> list[tuple[float, tuple]]:
    """The benchmark phase's refreshed live-state reads (`derive.refreshed`)."""
    return derive.refreshed([(p.t, p.reading) for p in r.live_state if p.phase == "benchmark"])


def phase_reads(r: QueryResult) -> list[tuple[float, tuple]]:
    """The benchmark phase's refreshed live-state reads, timed from the phase's job running:
    repeats, each restored from the same checkpoint and reading the same events, line up."""
    ts = r.timestamps
    if ts.t_running is None:
        return []
    running = ts.t_running - ts.query_start
    return [(t - running, values) for t, values in _benchmark_reads(r)]


def pooled_reads(results: list[QueryResult]) -> list[list[tuple[float, tuple]]]:
    """Every repeat's phase reads on one clock (`phase_reads`), one list per repeat. Each
    repeat meets the engine's refreshes at other moments of the phase, so together they draw
    its trend where one short phase gets two reads (Flink refreshes its gauges every 5 s)."""
    return [phase_reads(r) for r in results]


def _merged(jobs: list[list[tuple[float, tuple]]]) -> list[tuple[float, tuple]]:
    """Every job's reads in one list, in time order."""
    return sorted((x for reads in jobs for x in reads), key=lambda x: x[0])


def _trend(live: list[tuple[float, tuple]], index: int) -> derive.LiveGrowth | None:
    """The trend of one measure of the reads (0: live bytes, 1: entries)."""
    return derive.live_growth([(t, v[index]) for t, v in live if v[index] is not None])


def state_growth(r: QueryResult, jobs: list[list[tuple[float, tuple]]] | None = None) -> None:
    """The state's growth over the benchmark phase: the trend of its live size where the
    engine measures one (bytes, else entries), else the ratio of its logical sizes at the cut
    and at the end (`Job.logical_state_bytes`), else of the two checkpoints' full sizes
    (docs/protocol.md, "State growth"), as where the reads showed the store's write buffers
    rather than its state (`derive.only_buffered`). `jobs`: the live reads to judge
    it on, one list per job (default the phase's own, `r.live_state`; with repeats, every
    repeat's, `pooled_reads`)."""
    own = _benchmark_reads(r)
    if own:
        r.state_live_bytes_end, r.state_live_keys_end = own[-1][1][:2]
    jobs = [own] if jobs is None else jobs
    live = _merged(jobs)
    r.state_measure = r.state_growth = None
    r.state_live_start = r.state_live_end = r.state_trend_per_s = None
    r.state_live_unflushed = derive.only_buffered(jobs)
    # Reads that are mostly memtables, or saw no flush, follow the write buffers: no trend.
    measures = () if r.state_live_unflushed else ((LIVE_BYTES_MEASURE, 0), (LIVE_KEYS_MEASURE, 1))
    for measure, index in measures:
        trend = _trend(live, index)
        if trend is not None:
            r.state_measure, r.state_growth = measure, trend.growth
            r.state_live_start, r.state_live_end = trend.start, trend.end
            r.state_trend_per_s = trend.trend_per_s
            r.state_reads = trend.points
            return
    r.state_reads = len(live)
    # No live trend: the state written once at the cut and at the end, else the checkpoints.
    logical = derive.state_growth(r.state_logical_bytes_start, r.state_logical_bytes_end)
    if logical is not None:
        r.state_measure, r.state_growth = LOGICAL_MEASURE, logical
    elif r.checkpoint_growth is not None:
        r.state_measure, r.state_growth = CHECKPOINT_MEASURE, r.checkpoint_growth


def live_keys_growth(
    r: QueryResult, jobs: list[list[tuple[float, tuple]]] | None = None
) -> float | None:
    """The growth of the live entries' trend over the benchmark phase (None: no trend)."""
    trend = _trend(_benchmark_reads(r) if jobs is None else _merged(jobs), 1)
    return None if trend is None else trend.growth


def failover(m: Measured, sampler: Sampler | None, parts: PhaseParts | None) -> Failover:
    """The outage of a failover run as recorded (all null without one)."""
    outage = m.outage
    if outage is None:
        return Failover()
    recovery = outage.recovery
    result = Failover(
        mode=outage.support.value,
        killed=outage.killed,
        kill_events=outage.events_at_kill,
        t_kill=None if outage.t_kill is None else round(outage.t_kill - m.started_at, 3),
        restored_checkpoint=recovery.restored_checkpoint if recovery else None,
        events_at_restore=recovery.events_at_restore if recovery else None,
        restarts=recovery.restarts if recovery else None,
        cause=recovery.cause if recovery else None,
    )
    if sampler is None or parts is None or None in (m.t_running, m.t_end):
        # Not through the phase: only how far the recovery got.
        origin = outage.origin
        if origin is not None:
            result.detect_s = _since(outage.t_detected, origin) if outage.t_kill else None
            result.restore_s = _since(outage.t_restored, origin)
        return result
    metrics = outage_metrics(outage, sampler.samples, m.t_running, m.t_end, parts.benchmark_events)
    return dataclasses.replace(result, **dataclasses.asdict(metrics))


def _since(t: float | None, origin: float) -> float | None:
    return None if t is None else round(t - origin, 3)


def phase_checkpoint(cp: CheckpointInfo) -> PhaseCheckpoint:
    return PhaseCheckpoint(cp.id, cp.duration_s, cp.checkpointed_bytes, cp.state_bytes)


def periodic_stats(cps: list[CheckpointInfo]) -> CheckpointStats:
    done = [c for c in cps if c.status is CheckpointStatus.COMPLETED]
    durations = [c.duration_s for c in done if c.duration_s is not None]
    sizes = [c.checkpointed_bytes for c in done if c.checkpointed_bytes is not None]
    med_size = derive.median_or_none(sizes)
    return CheckpointStats(
        count=len(done),
        failed=sum(c.status is CheckpointStatus.FAILED for c in cps),
        duration_median_s=derive.median_or_none(durations),
        duration_max_s=max(durations) if durations else None,
        checkpointed_bytes_median=int(med_size) if med_size is not None else None,
        state_bytes_last=done[-1].state_bytes if done else None,
    )


def timestamps(m: Measured) -> Timestamps:
    return Timestamps(
        query_start=m.started_at,
        warmup_start=m.phases.get("warmup"),
        warmup_end=m.phases.get("phase-checkpoint"),
        t_submit=m.t_submit,
        t_running=m.t_running,
        t_first=m.t_first,
        t_end=m.t_end,
    )


def rate_feed(m: Measured, samples: list[RawSample]) -> RateFeed:
    """What a rate-fed benchmark phase released and how far the job's reading lagged it: the
    lag is events released by a sample minus the events the job had read then (its own count),
    its trend the least-squares slope over the samples taken while the feed still released."""
    log = m.release_log
    if m.rate_asked is None or not log:
        return RateFeed()
    lags = lag_points(log, samples, log[0][0])
    releasing = [(t, lag) for t, lag in lags if t <= log[-1][0]]
    span = (m.t_end or log[-1][0]) - log[0][0]
    return RateFeed(
        asked_eps=m.rate_asked,
        delivered_eps=delivered_eps(log),
        max_error_5s=max_rate_error(log, m.rate_asked),
        steps=len(log),
        lag_max_events=max((lag for _, lag in lags), default=None),
        lag_end_events=lags[-1][1] if lags else None,
        lag_trend_eps=slope(releasing),
        releaser_cpu_s=m.releaser_cpu_s,
        releaser_cores=derive.safe_div(m.releaser_cpu_s, span if span > 0 else None),
    )


def lag_points(log: ReleaseLog, samples: list[RawSample], since: float) -> list[tuple[float, int]]:
    """(wall, events released by then minus the events the job had read) of each benchmark
    sample taken at `since` or later."""
    return [
        (s.wall, released_at(log, s.wall) - s.events)
        for s in samples
        if s.phase == "benchmark" and since <= s.wall
    ]


def latency_result(m: Measured) -> Latency:
    """The phase's latency percentiles and series (`metrics.latency`); empty when its rows
    were not stamped or no stamped row depended on an event the phase released."""
    rule = lat.rule(m.query)
    if m.latency is None or rule is None:
        return Latency()
    values = sorted(v for _, v in m.latency)
    out = Latency(
        rows=len(values),
        left_out=m.latency_left_out,
        sample=m.latency_sample or rule.sample,
        depends=rule.describe(),
        watermark_delay_s=WATERMARK_DELAY_MS / 1000,
    )
    if values:
        out.p50_s, out.p95_s, out.p99_s = (lat.percentile(values, p) for p in (50, 95, 99))
        out.max_s = values[-1]
        out.series = lat.series(m.latency, m.releases[0][2] if m.releases else m.latency[0][0])
    return out


def slope(points: list[tuple[float, float]]) -> float | None:
    """The least-squares slope of y over x (None with fewer than two distinct x)."""
    if len(points) < 2:
        return None
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx <= 0:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def timeseries(
    samples: list[RawSample],
    t0: float,
    parts: PhaseParts | None = None,
    release_log: list[tuple[float, int]] | None = None,
) -> list[Sample]:
    """The time series: each phase's first sample, then one point per interval rate, each at
    the time its count was true (`metrics.sampler.Sample.wall`)."""
    first = [s for i, s in enumerate(samples) if i == 0 or samples[i - 1].phase != s.phase]
    rates = derive.rates(samples)
    count_at = _counts(samples)
    ends = [r.end for r in rates if r.end is not None]

    def point(s: RawSample, r: derive.Rate | None) -> Sample:
        age = None if s.polled is None else round(s.polled - s.wall, 3)
        eps, cores = (None, None) if r is None else (r.throughput_eps, r.cores)
        return Sample(
            round(s.wall - t0, 3),
            s.phase,
            s.events,
            eps,
            cores,
            _lag_s(s, parts, count_at),
            count_age_s=age,
        )

    points = [point(s, None) for s in first]
    points += [point(s, r) for r, s in zip(rates, ends, strict=True)]
    if release_log:
        for p, s in zip(points, [*first, *ends], strict=True):
            if s.phase == "benchmark" and s.wall >= release_log[0][0]:
                p.released = released_at(release_log, s.wall)
    return sorted(points, key=lambda p: p.t)


def live_points(samples: list[RawSample], t0: float) -> list[LivePoint]:
    """Every live-state read, at the time of the poll that made it."""
    return [
        LivePoint(
            round(s.poll_time - t0, 3), s.phase, x.bytes, x.keys, x.files_bytes, x.memory_bytes
        )
        for s in samples
        if (x := s.live) is not None
    ]


def operator_loads(r: QueryResult, samples: list[RawSample], t0: float = 0.0) -> None:
    """Where the scored phase's time went, per operator, its busiest (`results.operators`) and
    each one's busy share through the phase, at seconds since `t0` (the query's start), from the
    phase's reads of the vertices' counters."""
    reads = [
        (s.poll_time - t0, s.operators)
        for s in samples
        if s.phase == SCORED_PHASE and s.operators is not None
    ]
    r.operators = operators.summarise([read for _, read in reads])
    r.bottleneck, r.bottleneck_busy = operators.bottleneck_of(r.operators)
    r.operator_busy = operators.busy_over_time(reads)


def _counts(samples: list[RawSample]) -> Callable[[RawSample], float]:
    """The events a sample's job had read when its watermark was true: its own count where
    both are of one time, else the phase's counts interpolated at the watermark's time (past
    the last count, extended at the phase's last rate)."""
    by_phase: dict[str, tuple[list[float], list[int]]] = {}
    for s in samples:
        walls, events = by_phase.setdefault(s.phase, ([], []))
        if walls and s.wall <= walls[-1]:
            continue  # the same unrefreshed count
        walls.append(s.wall)
        events.append(s.events)

    def count_at(s: RawSample) -> float:
        walls, events = by_phase.get(s.phase, ([], []))
        at = s.watermark_at
        if at is None or at == s.wall or len(walls) < 2:
            return s.events
        if at <= walls[-1]:
            return float(np.interp(at, walls, events))
        rate = (events[-1] - events[-2]) / (walls[-1] - walls[-2])
        return events[-1] + rate * (at - walls[-1])

    return count_at


def _lag_s(
    s: RawSample, parts: PhaseParts | None, count_at: Callable[[RawSample], float]
) -> float | None:
    """Event time the data had reached when the job's watermark was read, minus that watermark,
    seconds."""
    if s.watermark_ms is None or parts is None or parts.time_read_ms is None:
        return None
    read = parts.time_read_ms(s.phase, round(count_at(s)))
    return None if read is None else round((read - s.watermark_ms) / 1000, 3)


def checkpoint_events(m: Measured) -> list[CheckpointEvent]:
    special = {
        ("warmup", m.phase_checkpoint.id if m.phase_checkpoint else None): "phase",
        ("benchmark", m.end_checkpoint.id if m.end_checkpoint else None): "end",
    }
    events = []
    for phase, cps in (
        ("warmup", _with(m.warmup_checkpoints, m.phase_checkpoint)),
        ("benchmark", _with(m.benchmark_checkpoints, m.end_checkpoint)),
    ):
        for cp in cps:
            if cp.status is CheckpointStatus.IN_PROGRESS:
                continue
            events.append(
                CheckpointEvent(
                    phase=phase,
                    id=cp.id,
                    t=round(cp.trigger_ts - m.started_at, 3),
                    status=cp.status.value,  # the results file keeps the plain value
                    duration_s=cp.duration_s,
                    checkpointed_bytes=cp.checkpointed_bytes,
                    state_bytes=cp.state_bytes,
                    kind=special.get((phase, cp.id), "periodic"),
                    t_completed=None if cp.ack_ts is None else round(cp.ack_ts - m.started_at, 3),
                )
            )
    return events


def _with(cps: list[CheckpointInfo], extra: CheckpointInfo | None) -> list[CheckpointInfo]:
    """The phase's checkpoints, including the triggered one if the history missed it."""
    if extra is None or any(c.id == extra.id for c in cps):
        return list(cps)
    return [*cps, extra]
