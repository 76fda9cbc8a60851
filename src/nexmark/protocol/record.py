"""Turn what a query run observed into its `QueryResult` (the formulas are in metrics.derive)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from nexmark import __version__
from nexmark.engines.base import CheckpointInfo, CheckpointStatus, EngineInfo
from nexmark.metrics import derive
from nexmark.metrics import latency as lat
from nexmark.metrics.sampler import Sample as RawSample
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.failover import outage_metrics
from nexmark.protocol.observe import Measured, RepeatMeasured
from nexmark.protocol.parts import PhaseParts
from nexmark.protocol.steady import steady_reason
from nexmark.results import stats
from nexmark.results.model import (
    CHECKPOINT_MEASURE,
    LIVE_BYTES_MEASURE,
    LIVE_KEYS_MEASURE,
    STATE_GROWTH_LIMIT,
    CheckpointEvent,
    CheckpointStats,
    Failover,
    Latency,
    LivePoint,
    Machine,
    PhaseCheckpoint,
    QueryResult,
    RateFeed,
    RepeatSample,
    Sample,
    Setup,
    SourceCalibration,
    SystemCheck,
    ThroughputStats,
    Timestamps,
)
from nexmark.workload.dataset import Dataset
from nexmark.workload.feed import ReleaseLog, delivered_eps, max_rate_error, released_at
from nexmark.workload.schema import WATERMARK_DELAY_MS


@dataclass
class RunContext:
    """What every result of one run shares: identity, dataset, engine and machine."""

    run_id: str
    dataset: Dataset
    engine: EngineInfo
    machine: Machine
    options: dict[str, Any] = field(default_factory=dict)
    source: SourceCalibration | None = None  # the run's source-only calibration, if run
    system_check: SystemCheck | None = None  # the machine's load before the run

    def setup(self) -> Setup:
        return Setup(
            engine_target=self.engine.target,
            engine_config=dict(self.engine.config),
            options=dict(self.options),
            versions={self.engine.name: self.engine.version, "nexmark": __version__},
            machine=self.machine,
            system_check=self.system_check or SystemCheck(),
        )

    def identity(self, query: str, status: str, started_at: float | None) -> dict[str, Any]:
        ds = self.dataset
        warmup = ds.part_range("warmup")
        bench = ds.part_range("benchmark")
        when = dt.datetime.fromtimestamp(started_at or 0, dt.timezone.utc)
        return dict(
            run_id=self.run_id,
            engine=self.engine.name,
            engine_version=self.engine.version,
            query=query,
            status=status,
            started_at=when.isoformat(timespec="seconds") if started_at else None,
            dataset_id=ds.id,
            events_id=ds.params.events_id,
            events_total=ds.events,
            events_warmup=warmup[1] - warmup[0],
            events_benchmark=bench[1] - bench[0],
            setup=self.setup(),
            source=dataclasses.replace(self.source) if self.source else SourceCalibration(),
        )


def status_result(
    ctx: RunContext,
    query: str,
    status: str,
    reason: str,
    measured: Measured | None = None,
    sampler: Sampler | None = None,
    parts: PhaseParts | None = None,
) -> QueryResult:
    """A result that was not scored (unsupported, failed, timeout), with what was seen."""
    result = QueryResult(**ctx.identity(query, status, measured and measured.started_at))
    result.reason = reason
    if measured is not None:
        result.timestamps = _timestamps(measured)
        result.checkpoint_events = _checkpoint_events(measured)
        if measured.phase_checkpoint is not None:
            result.phase_checkpoint = _phase_checkpoint(measured.phase_checkpoint)
    if measured is not None and sampler is not None:
        result.timeseries = _timeseries(sampler.samples, measured.started_at, parts)
        result.live_state = _live_points(sampler.samples, measured.started_at)
    if measured is not None:
        result.job_options = dict(measured.job_options)
        result.state_bound = measured.state_bound
        result.failover = _failover(measured, sampler, parts)
        result.repeats = [_unscored_repeat(rep) for rep in measured.repeats]
        result.throughput_stats = ThroughputStats(n=0) if measured.repeats else ThroughputStats()
    return result


class _Samples:
    """A sampler's samples, or a selection of them (the warm-up's and one repeat's)."""

    def __init__(self, samples: list[RawSample]) -> None:
        self.samples = samples


def build_result(ctx: RunContext, m: Measured, sampler: Sampler, parts: PhaseParts) -> QueryResult:
    """The scored result of a query: with repeats (`--repeat N`), the median repeat's
    metrics at the top level, every repeat's sample in `repeats` and the throughput's
    statistics in `throughput_stats`."""
    reps = m.repeats or [RepeatMeasured(0, m, (len(sampler.samples), len(sampler.samples)))]
    if not m.repeats:  # one benchmark phase, measured without the repeat loop (tests)
        return _with_repeats(_scored(ctx, m, sampler, parts), [(reps[0], None)])
    scored: list[tuple[RepeatMeasured, QueryResult | None]] = []
    for rep in reps:
        if rep.status != "ok":
            scored.append((rep, None))
            continue
        w0, w1 = rep.warmup_samples or (0, reps[0].samples[0])
        warmup = sampler.samples[w0:w1]
        a, b = rep.samples
        scored.append(
            (rep, _scored(ctx, rep.measured, _Samples(warmup + sampler.samples[a:b]), parts))
        )
    ok = [r for _, r in scored if r is not None]
    if m.search is not None:  # trials at different rates: no median of one measurement
        return _with_trials(m, scored)
    middle = stats.median([r.throughput_eps or 0.0 for r in ok])
    headline = next(r for r in ok if (r.throughput_eps or 0.0) == middle)
    return _with_repeats(headline, scored)


def _with_trials(
    m: Measured, scored: list[tuple[RepeatMeasured, QueryResult | None]]
) -> QueryResult:
    """A rate search's result: the headline is its highest sustained trial (its throughput is
    then the sustained rate as read), else its lowest-rate one; every trial in `repeats`."""
    assert m.search is not None
    ok = [(rep, r) for rep, r in scored if r is not None]
    sustained = [(rep, r) for rep, r in ok if rep.sustained]

    def rate(pair: tuple[RepeatMeasured, QueryResult | None]) -> float:
        return pair[0].rate or 0.0

    _, headline = max(sustained, key=rate) if sustained else min(ok, key=rate)
    assert headline is not None
    result = _with_repeats(headline, scored, counted=[headline])
    result.sustainable = m.search.summary()
    return result


def _with_repeats(
    headline: QueryResult,
    scored: list[tuple[RepeatMeasured, QueryResult | None]],
    counted: list[QueryResult] | None = None,
) -> QueryResult:
    """`headline` with every repeat's sample and the statistics of the `counted` ones (by
    default every scored repeat)."""
    headline.repeats = [
        _repeat_sample(rep, r) if r is not None else _unscored_repeat(rep) for rep, r in scored
    ]
    keep = [(rep, r) for rep, r in scored if r is not None and r.throughput_eps]
    if counted is not None:
        keep = [(rep, r) for rep, r in keep if any(r is c for c in counted)]
    values = [r.throughput_eps for _, r in keep]
    index = next(rep.index for rep, r in scored if r is headline)
    runs = {rep.run for rep, _ in keep}
    headline.throughput_stats = throughput_stats(values, index, len(runs))
    return headline


def throughput_stats(
    values: list[float], median_repeat: int | None, runs: int | None = None
) -> ThroughputStats:
    """The statistics of the repeats' throughputs (nexmark.results.stats)."""
    if not values:
        return ThroughputStats(n=0)
    ci = stats.bootstrap_ci(values)
    return ThroughputStats(
        n=len(values),
        median=stats.median(values),
        min=min(values),
        max=max(values),
        stdev=stats.statistics.stdev(values) if len(values) > 1 else None,
        rel_spread=stats.relative_spread(values),
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        ci_method=stats.CI_METHOD if ci else None,
        median_repeat=median_repeat,
        runs=runs,
    )


def _repeat_sample(rep: RepeatMeasured, r: QueryResult) -> RepeatSample:
    m = rep.measured
    return RepeatSample(
        index=rep.index,
        run=rep.run,
        status="ok",
        time_s=r.time_s,
        throughput_eps=r.throughput_eps,
        cores=r.cores,
        throughput_per_core=r.throughput_per_core,
        recovery_time_s=r.recovery_time_s,
        time_to_first_event_s=r.time_to_first_event_s,
        first_read_gap_s=r.first_read_gap_s,
        state_bytes_end=r.state_bytes_end,
        state_growth=r.state_growth,
        state_measure=r.state_measure,
        end_checkpoint_id=m.end_checkpoint.id if m.end_checkpoint else None,
        checkpoints_count=r.checkpoints.count,
        restored_from=m.restored_from,
        restored_checkpoint_id=m.restored_id,
        t_submit=m.t_submit,
        t_running=m.t_running,
        t_end=m.t_end,
        latency_p50_s=r.latency.p50_s,
        latency_p99_s=r.latency.p99_s,
        rate_asked_eps=r.rate.asked_eps,
        rate_delivered_eps=r.rate.delivered_eps,
        # A search trial's: the trend it was judged by (after the release's first fifth), as
        # its verdict says; else the whole release's.
        lag_trend_eps=rep.lag_trend_eps if rep.lag_trend_eps is not None else r.rate.lag_trend_eps,
        lag_max_events=r.rate.lag_max_events,
        rate_steps=r.rate.steps,
        sustained=rep.sustained,
        verdict=rep.verdict,
    )


def _unscored_repeat(rep: RepeatMeasured) -> RepeatSample:
    m = rep.measured
    return RepeatSample(
        index=rep.index,
        run=rep.run,
        status=rep.status,
        reason=rep.reason,
        restored_from=m.restored_from,
        restored_checkpoint_id=m.restored_id,
        recovery_time_s=m.t_running - m.t_submit if m.t_running and m.t_submit else None,
        t_submit=m.t_submit,
        t_running=m.t_running,
        rate_asked_eps=rep.rate,
        sustained=rep.sustained,
        verdict=rep.verdict,
    )


def _scored(
    ctx: RunContext, m: Measured, sampler: Sampler | _Samples, parts: PhaseParts
) -> QueryResult:
    """The scored result of one benchmark phase that went through every step."""
    assert m.t_submit and m.t_running and m.t_end and m.phase_checkpoint and m.end_checkpoint
    r = QueryResult(**ctx.identity(m.query, "ok", m.started_at))
    r.time_s = m.t_end - m.t_running
    r.throughput_eps = derive.safe_div(parts.benchmark_events, r.time_s)
    if m.cpu_at_end is not None and m.cpu_at_running is not None:
        r.cores = derive.safe_div(m.cpu_at_end - m.cpu_at_running, r.time_s)
    r.throughput_per_core = derive.safe_div(r.throughput_eps, r.cores)
    _source_ratio(r)
    r.cost_core_s_per_million = derive.cost_core_s_per_million(
        r.cores, r.time_s, parts.benchmark_events
    )
    r.recovery_time_s = m.t_running - m.t_submit
    r.time_to_first_event_s = m.t_first - m.t_submit if m.t_first else None
    # Negative when sources read before the last downstream task ran (Time starts later).
    r.first_read_gap_s = m.t_first - m.t_running if m.t_first else None
    all_rates = derive.rates(sampler.samples)
    bench_rates = [x for x in all_rates if x.phase == "benchmark"]
    r.time_to_steady_s = derive.time_to_steady(m.t_submit, bench_rates)
    r.phase_checkpoint = _phase_checkpoint(m.phase_checkpoint)
    r.checkpoints = _periodic_stats(m.benchmark_checkpoints)
    r.state_bytes_start = m.phase_checkpoint.state_bytes
    r.state_bytes_end = m.end_checkpoint.state_bytes
    r.checkpoint_growth = derive.state_growth(r.state_bytes_start, r.state_bytes_end)
    r.restored_from = m.restored_from
    r.handoff = m.handoff.value
    r.timestamps = _timestamps(m)
    r.timeseries = _timeseries(sampler.samples, m.started_at, parts, m.release_log)
    r.live_state = _live_points(sampler.samples, m.started_at)
    _state_growth(r)
    if r.state_growth is not None:
        r.state_steady = r.state_growth <= STATE_GROWTH_LIMIT
    r.rate = rate_feed(m, sampler.samples)
    r.latency = latency_result(m)
    lags = [(s.phase, s.watermark_lag_s) for s in r.timeseries if s.watermark_lag_s is not None]
    bench = [lag for phase, lag in lags if phase == "benchmark"]
    r.watermark_lag_max_s = max(bench) if bench else None
    warm = [lag for phase, lag in lags if phase == "warmup"]
    r.watermark_lag_warmup_end_s = warm[-1] if warm else None
    r.checkpoint_events = _checkpoint_events(m)
    r.job_options = dict(m.job_options)
    r.state_bound = m.state_bound
    r.failover = _failover(m, sampler, parts)
    warmup = m.phases.get("warmup")
    cut = m.phases.get("phase-checkpoint")
    medians = {
        phase: derive.median_or_none([x.throughput_eps for x in all_rates if x.phase == phase])
        for phase in ("warmup", "benchmark")
    }
    r.steady_reason = steady_reason(
        m.query,
        r.state_growth,
        r.state_measure,
        STATE_GROWTH_LIMIT,
        cut - warmup if warmup is not None and cut is not None else None,
        m.state_ttl_s,
        r.watermark_lag_max_s,
        medians["warmup"],
        medians["benchmark"],
    )
    if r.steady_reason and r.state_measure == CHECKPOINT_MEASURE:
        read = any(p.phase == "benchmark" for p in r.live_state)
        r.steady_reason += (
            f" (the live state's reads in {r.time_s:.0f} s drew no trend: under "
            f"{derive.LIVE_MIN_POINTS} refreshed values)"
            if read
            else " (the engine measured no live state)"
        )
    return r


def _state_growth(r: QueryResult) -> None:
    """The state's growth over the benchmark phase (`r.live_state`): the trend of its live
    size where the engine measures one (bytes, else entries), else the ratio of the two
    checkpoints' full sizes (docs/protocol.md, "State growth")."""
    live = derive.refreshed([(p.t, p.reading) for p in r.live_state if p.phase == "benchmark"])
    if live:
        r.state_live_bytes_end, r.state_live_keys_end = live[-1][1][:2]
    for measure, index in ((LIVE_BYTES_MEASURE, 0), (LIVE_KEYS_MEASURE, 1)):
        points = [(t, values[index]) for t, values in live if values[index] is not None]
        trend = derive.live_growth(points)
        if trend is not None:
            r.state_measure, r.state_growth = measure, trend.growth
            r.state_live_start, r.state_live_end = trend.start, trend.end
            r.state_trend_per_s = trend.trend_per_s
            return
    if r.checkpoint_growth is not None:
        r.state_measure, r.state_growth = CHECKPOINT_MEASURE, r.checkpoint_growth


def _failover(m: Measured, sampler: Sampler | None, parts: PhaseParts | None) -> Failover:
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


def _phase_checkpoint(cp: CheckpointInfo) -> PhaseCheckpoint:
    return PhaseCheckpoint(cp.id, cp.duration_s, cp.checkpointed_bytes, cp.state_bytes)


def _periodic_stats(cps: list[CheckpointInfo]) -> CheckpointStats:
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


def _timestamps(m: Measured) -> Timestamps:
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


def _timeseries(
    samples: list[RawSample],
    t0: float,
    parts: PhaseParts | None = None,
    release_log: list[tuple[float, int]] | None = None,
) -> list[Sample]:
    """The time series: each phase's first sample, then one point per interval rate, each at
    the time its count was true (`metrics.sampler.Sample.wall`)."""
    first = [s for i, s in enumerate(samples) if i == 0 or samples[i - 1].phase != s.phase]
    rates = derive.rates(samples)
    ends = [r.end for r in rates if r.end is not None]

    def point(s: RawSample, r: derive.Rate | None) -> Sample:
        age = None if s.polled is None else round(s.polled - s.wall, 3)
        eps, cores = (None, None) if r is None else (r.throughput_eps, r.cores)
        return Sample(
            round(s.wall - t0, 3), s.phase, s.events, eps, cores, _lag_s(s, parts), count_age_s=age
        )

    points = [point(s, None) for s in first]
    points += [point(s, r) for r, s in zip(rates, ends, strict=True)]
    if release_log:
        for p, s in zip(points, [*first, *ends], strict=True):
            if s.phase == "benchmark" and s.wall >= release_log[0][0]:
                p.released = released_at(release_log, s.wall)
    return sorted(points, key=lambda p: p.t)


def _live_points(samples: list[RawSample], t0: float) -> list[LivePoint]:
    """Every live-state read, at the time of the poll that made it."""
    return [
        LivePoint(
            round(s.poll_time - t0, 3), s.phase, x.bytes, x.keys, x.files_bytes, x.memory_bytes
        )
        for s in samples
        if (x := s.live) is not None
    ]


def _lag_s(s: RawSample, parts: PhaseParts | None) -> float | None:
    """Event time the data has reached minus the job's watermark, seconds."""
    if s.watermark_ms is None or parts is None or parts.time_read_ms is None:
        return None
    read = parts.time_read_ms(s.phase, s.events)
    return None if read is None else round((read - s.watermark_ms) / 1000, 3)


def _checkpoint_events(m: Measured) -> list[CheckpointEvent]:
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


def _source_ratio(r: QueryResult) -> None:
    """The query's throughput / the source ceiling's; a query that ran faster than the
    source-only job shows that read was no ceiling (`source_invalid` says so)."""
    r.source_ratio = derive.safe_div(r.throughput_eps, r.source.throughput_eps)
    if r.source_ratio is not None and r.source_ratio > 1.0:
        r.source_invalid = (
            f"the query ran at {r.source_ratio:.0%} of the source-only job "
            f"({r.throughput_eps:,.0f} vs {r.source.throughput_eps:,.0f} events/s): that read "
            "was no ceiling"
        )
