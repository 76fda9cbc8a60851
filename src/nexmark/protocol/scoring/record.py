"""Turn what a query run observed into its `QueryResult` (the formulas are in metrics.derive)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from nexmark import __version__
from nexmark.engines.base import EngineInfo
from nexmark.metrics import derive
from nexmark.metrics.sampler import Sample as RawSample
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query import proofs
from nexmark.protocol.query.observe import Measured, RepeatMeasured
from nexmark.protocol.scoring import figures
from nexmark.results import stats, steady
from nexmark.results.figures import RepeatSample, SourceCalibration, ThroughputStats
from nexmark.results.query_result import QueryResult
from nexmark.results.setup import Machine, Setup, SystemCheck
from nexmark.workload.dataset import Dataset


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
            workers=[dataclasses.replace(w) for w in self.engine.workers],
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
        result.timestamps = figures.timestamps(measured)
        result.checkpoint_events = figures.checkpoint_events(measured)
        if measured.phase_checkpoint is not None:
            result.phase_checkpoint = figures.phase_checkpoint(measured.phase_checkpoint)
    if measured is not None and sampler is not None:
        result.timeseries = figures.timeseries(sampler.samples, measured.started_at, parts)
        result.live_state = figures.live_points(sampler.samples, measured.started_at)
    if measured is not None:
        result.job_options = dict(measured.job_options)
        result.state_bound = measured.state_bound
        result.failover = figures.failover(measured, sampler, parts)
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
    statistics in `throughput_stats`; the profile of all its scored phases (`--profile`)."""
    result = _scored_result(ctx, m, sampler, parts)
    result.profile = m.profile
    return result


def _scored_result(
    ctx: RunContext, m: Measured, sampler: Sampler, parts: PhaseParts
) -> QueryResult:
    reps = m.repeats or [RepeatMeasured(0, m, (len(sampler.samples), len(sampler.samples)))]
    if not m.repeats:  # one benchmark phase, measured without the repeat loop (tests)
        return _with_repeats(_scored(ctx, m, sampler, parts), [(reps[0], None)])

    def samples_of(rep: RepeatMeasured) -> list[RawSample]:
        """A repeat's samples: its warm-up's, then its own phase's."""
        w0, w1 = rep.warmup_samples or (0, reps[0].samples[0])
        a, b = rep.samples
        return sampler.samples[w0:w1] + sampler.samples[a:b]

    scored: list[tuple[RepeatMeasured, QueryResult | None]] = []
    for rep in reps:
        if rep.status != "ok":
            scored.append((rep, None))
            continue
        scored.append((rep, _scored(ctx, rep.measured, _Samples(samples_of(rep)), parts)))
    ok = [r for _, r in scored if r is not None]
    if m.search is not None:  # trials at different rates: no median of one measurement
        return _with_trials(m, scored)
    middle = stats.median([r.throughput_eps or 0.0 for r in ok])
    pick, headline = next(
        (rep, r) for rep, r in scored if r is not None and (r.throughput_eps or 0.0) == middle
    )
    result = _with_repeats(headline, scored)  # each repeat keeps its own phase's verdict
    if len(ok) > 1:
        # Every repeat restores the same state and reads the same events: the headline's state
        # is judged on all their live reads, which meet the engine's refreshes at other moments.
        result.state_pooled_repeats = len(ok)
        paces = _phase_paces(samples_of(pick))
        judge_state(result, pick.measured, paces, parts, figures.pooled_reads(ok))
    return result


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


# A repeat's figures that its scored result holds under the same name (time, rates, state);
# the others are named for the repeat (below).
_SAME_NAMED = tuple(
    f.name
    for f in dataclasses.fields(RepeatSample)
    if f.name in {g.name for g in dataclasses.fields(QueryResult)} - {"status", "reason"}
)


def _repeat_sample(rep: RepeatMeasured, r: QueryResult) -> RepeatSample:
    """One scored repeat in `repeats`: its result's figures and its phase's identity."""
    return RepeatSample(
        **{name: getattr(r, name) for name in _SAME_NAMED},
        **_repeat_identity(rep),
        status="ok",
        t_end=rep.measured.t_end,
        end_checkpoint_id=rep.measured.end_checkpoint.id if rep.measured.end_checkpoint else None,
        checkpoints_count=r.checkpoints.count,
        latency_p50_s=r.latency.p50_s,
        latency_p99_s=r.latency.p99_s,
        rate_asked_eps=r.rate.asked_eps,
        rate_delivered_eps=r.rate.delivered_eps,
        # A search trial's: the trend it was judged by (after the release's first fifth), as
        # its verdict says; else the whole release's.
        lag_trend_eps=rep.lag_trend_eps if rep.lag_trend_eps is not None else r.rate.lag_trend_eps,
        lag_max_events=r.rate.lag_max_events,
        rate_steps=r.rate.steps,
    )


def _unscored_repeat(rep: RepeatMeasured) -> RepeatSample:
    """A repeat that failed or timed out: why, and how far its phase got."""
    m = rep.measured
    return RepeatSample(
        **_repeat_identity(rep),
        status=rep.status,
        reason=rep.reason,
        restored_from=m.restored_from,
        recovery_time_s=m.t_running - m.t_submit if m.t_running and m.t_submit else None,
        rate_asked_eps=rep.rate,
    )


def _repeat_identity(rep: RepeatMeasured) -> dict[str, Any]:
    """Which repeat it was, what it restored and when, and a trial's verdict."""
    m = rep.measured
    return dict(
        index=rep.index,
        run=rep.run,
        restored_checkpoint_id=m.restored_id,
        t_submit=m.t_submit,
        t_running=m.t_running,
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
    cpu_span = derive.span(m.cpu_running_read_at, m.cpu_end_read_at) or r.time_s
    r.cores = derive.cores(m.cpu_at_running, m.cpu_at_end, cpu_span)
    r.throughput_per_core = derive.safe_div(r.throughput_eps, r.cores)
    _source_ratio(r)
    r.cost_core_s_per_million = derive.cost_core_s_per_million(
        r.cores, r.time_s, parts.benchmark_events
    )
    r.recovery_time_s = m.t_running - m.t_submit
    r.phase_too_short = steady.short_phase_reason(r.time_s, m.end_checkpoint.duration_s)
    r.time_to_first_event_s = m.t_first - m.t_submit if m.t_first else None
    # Negative when sources read before the last downstream task ran (Time starts later).
    r.first_read_gap_s = m.t_first - m.t_running if m.t_first else None
    bench_rates = [x for x in derive.rates(sampler.samples) if x.phase == "benchmark"]
    r.time_to_steady_s = derive.time_to_steady(m.t_submit, bench_rates)
    r.phase_checkpoint = figures.phase_checkpoint(m.phase_checkpoint)
    r.checkpoints = figures.periodic_stats(m.benchmark_checkpoints)
    r.state_bytes_start = m.phase_checkpoint.state_bytes
    r.state_bytes_end = m.end_checkpoint.state_bytes
    r.checkpoint_growth = derive.state_growth(r.state_bytes_start, r.state_bytes_end)
    r.state_logical_bytes_start = m.logical_bytes_at_cut
    r.state_logical_bytes_end = m.logical_bytes_at_end
    r.restored_from = m.restored_from
    r.handoff = m.handoff.value
    r.source_cores = derive.cores(m.source_cpu_at_running, m.source_cpu_at_end, cpu_span)
    r.source_offsets = proofs.offsets_verdict(m.offsets_proved, m.benchmark_offsets_proved)
    _other_processes(r, m)
    figures.operator_loads(r, sampler.samples, m.started_at)
    r.timestamps = figures.timestamps(m)
    r.timeseries = figures.timeseries(sampler.samples, m.started_at, parts, m.release_log)
    r.live_state = figures.live_points(sampler.samples, m.started_at)
    r.rate = figures.rate_feed(m, sampler.samples)
    r.latency = figures.latency_result(m)
    lags = [(s.phase, s.watermark_lag_s) for s in r.timeseries if s.watermark_lag_s is not None]
    bench = [lag for phase, lag in lags if phase == "benchmark"]
    r.watermark_lag_max_s = max(bench) if bench else None
    warm = [lag for phase, lag in lags if phase == "warmup"]
    r.watermark_lag_warmup_end_s = warm[-1] if warm else None
    r.checkpoint_events = figures.checkpoint_events(m)
    r.job_options = dict(m.job_options)
    r.state_bound = m.state_bound
    r.failover = figures.failover(m, sampler, parts)
    _restored_state_age(r, m)
    judge_state(r, m, _phase_paces(sampler.samples), parts)
    return r


def _other_processes(r: QueryResult, m: Measured) -> None:
    """What processes other than the run's used through the scored phase and the warm-up."""
    scored, warm = m.benchmark_others, m.warmup_others
    r.other_cores = scored.cores if scored else None
    r.other_cores_warmup = warm.cores if warm else None
    r.other_processes = scored.busiest_line() or None if scored else None


def judge_state(
    r: QueryResult,
    m: Measured,
    paces: dict[str, float | None],
    parts: PhaseParts,
    jobs: list[list[tuple[float, tuple]]] | None = None,
) -> None:
    """The state's growth on the phase's own live reads or on `jobs` (every repeat's,
    `figures.pooled_reads`), and its verdict and reason (`steady.judge`)."""
    figures.state_growth(r, jobs)
    verdict = steady.judge(
        m.query,
        r.state_growth,
        r.state_measure,
        lambda: _steady_reason(r, m, paces, parts.event_rate, jobs),
        parts.benchmark_span_s(),
        parts.event_rate,
        r.restored_state_age_s,
        m.state_ttl_s,
    )
    if not verdict.judged:  # the two sizes stay recorded (logical, checkpoint_growth)
        r.state_growth, r.state_measure = None, None
    r.state_steady, r.steady_reason = verdict.steady, verdict.reason


def _phase_paces(samples: list[RawSample]) -> dict[str, float | None]:
    """Each phase's events per second from its samples (`derive.phase_pace`)."""
    return {phase: derive.phase_pace(samples, phase) for phase in ("warmup", "benchmark")}


def _restored_state_age(r: QueryResult, m: Measured) -> None:
    """How old the restored state was at the first benchmark read (the processing-time clock
    from the cut), which `judge_state` weighs against a processing-time TTL."""
    cut = m.phases.get("phase-checkpoint")
    r.restored_state_age_s = round(m.t_first - cut, 3) if m.t_first and cut else None


def _steady_reason(
    r: QueryResult,
    m: Measured,
    paces: dict[str, float | None],
    event_rate: float | None,
    jobs: list[list[tuple[float, tuple]]] | None,
) -> str | None:
    """Why the phase's state did not steady (`steady.steady_reason`), and what it was judged on
    (`steady.reads_note`)."""
    warmup = m.phases.get("warmup")
    cut = m.phases.get("phase-checkpoint")
    reason = steady.steady_reason(
        m.query,
        r.state_growth,
        r.state_measure,
        steady.STATE_GROWTH_LIMIT,
        cut - warmup if warmup is not None and cut is not None else None,
        m.state_ttl_s,
        r.watermark_lag_max_s,
        paces["warmup"],
        paces["benchmark"],
        # The phase's own throughput: interval rates read 0 between two refreshes of a count.
        derive.safe_div(r.throughput_eps, event_rate),
    )
    if not reason:
        return reason
    return reason + steady.reads_note(
        r.state_measure,
        figures.live_keys_growth(r, jobs),
        any(p.phase == "benchmark" for p in r.live_state),
        r.state_live_unflushed,
        r.state_pooled_repeats,
        r.time_s,
        derive.LIVE_MIN_POINTS,
    )


def _source_ratio(r: QueryResult) -> None:
    """The query's throughput / the source ceiling's; a query that ran faster than the
    source-only job shows that read was no ceiling (`source_invalid` says so)."""
    r.source_ratio = derive.safe_div(r.throughput_eps, r.source.throughput_eps)
    if r.source.too_short:  # no ceiling to judge by: the table says so instead of a share
        return
    if r.source_ratio is not None and r.source_ratio > 1.0:
        r.source_invalid = (
            f"the query ran at {r.source_ratio:.0%} of the source-only job "
            f"({r.throughput_eps:,.0f} vs {r.source.throughput_eps:,.0f} events/s): that read "
            "was no ceiling"
        )
