"""`nexmark sustainable`: the highest rate a query keeps up with, found by a search over rates,
each trial a benchmark phase restored from the same warm-up checkpoint (docs/protocol.md).

The search's upper bound U is the source ceiling (the benchmark part read and discarded by a
source-only job, protocol/suite/calibrate.py): no query reads faster than its source. Each trial is
fed at a set rate (`workload.feed.Releaser`) and judged: sustained when the job read
every event and its lag (events released and not yet read) grew by less than `lag_tolerance`
of the rate per second over the release (ShuffleBench's criterion), the feed delivered the rate
(else the trial says nothing about the engine) and, where the engine measures latency, its p99
stayed under `p99_bound_s`. The search descends from `START_FRACTION` x U by `DESCENT` until a
rate is sustained, then bisects between the highest sustained and the lowest unsustained rate
until they are within `precision` of each other, in at most `max_trials` trials in all.

The protocol runs the trials (`QueryRun` asks `RateSearch.next_rate` before each benchmark
phase and tells it each outcome); this module only decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nexmark.metrics.sampler import Sample
from nexmark.protocol.preparation.options import DEFAULT_MAX_TRIALS as DEFAULT_MAX_TRIALS
from nexmark.protocol.preparation.options import DEFAULT_MIN_RATE as DEFAULT_MIN_RATE
from nexmark.protocol.preparation.options import DEFAULT_P99_BOUND_S as DEFAULT_P99_BOUND_S
from nexmark.protocol.preparation.options import SearchOptions as SearchOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query.observe import Measured, RepeatMeasured
from nexmark.protocol.scoring.figures import lag_points, latency_result, rate_feed, slope
from nexmark.results.figures import Sustainable
from nexmark.workload.feed import RATE_TOLERANCE

# The search's defaults (docs/protocol.md says why) live with its options (preparation/options.py).
START_FRACTION = 0.9  # the first trial, a share of the upper bound (the source ceiling)
DESCENT = 0.5  # until one is sustained, each next rate is this share of the last
# The lag's trend is judged over the release after its first fifth: the restored job's first
# reads (its operators warming up, the first file listings) lift the lag once at the start,
# which is no trend.
SETTLE_FRACTION = 0.2
# The samples a trend is read from must span this long: two samples a moment apart (a phase's
# fast polls near its end, or a count the engine had not refreshed in between) give any slope,
# 0 included, and a release of ~1 s at a rate far above the query's was once judged sustained.
MIN_TREND_SPAN_S = 2.0
# A release too short for a lag trend still shows a job reading well under the rate (a read
# rate counts the restore's first moments too: a sustained trial reads 1-3% under it).
SHORT_READ_SHARE = 0.9


@dataclass(frozen=True)
class TrialOutcome:
    """What one trial showed, as the search needs it."""

    rate: float
    ok: bool  # the phase went through every step
    throughput_eps: float | None = None
    delivered_eps: float | None = None
    lag_trend_eps: float | None = None
    latency_p99_s: float | None = None


@dataclass(frozen=True)
class Verdict:
    sustained: bool
    reason: str  # why, in a few words (shown in the trials table)


def judge(outcome: TrialOutcome, options: SearchOptions) -> Verdict:
    """Whether a fed trial kept up with its rate (see the module's docstring)."""
    rate = outcome.rate
    if not outcome.ok:
        return Verdict(False, "the phase failed")
    delivered = outcome.delivered_eps
    if delivered is None or abs(delivered - rate) > RATE_TOLERANCE * rate:
        shown = "unknown" if delivered is None else f"{delivered:,.0f}/s"
        return Verdict(False, f"the feed delivered {shown}, not the rate: no verdict")
    trend = outcome.lag_trend_eps
    read = outcome.throughput_eps
    if trend is None and read is not None and read < SHORT_READ_SHARE * rate:
        return Verdict(False, f"read {read:,.0f}/s: fell behind (too short for a lag trend)")
    if trend is None:
        return Verdict(False, "the release was too short to measure the lag's trend")
    bound = options.lag_tolerance * rate
    if trend >= bound:
        return Verdict(False, f"lag grew {trend:,.0f} ev/s (limit {bound:,.0f})")
    p99 = outcome.latency_p99_s
    if p99 is not None and p99 > options.p99_bound_s:
        return Verdict(False, f"p99 latency {p99:.2f} s > {options.p99_bound_s:g} s")
    return Verdict(True, f"lag trend {trend:,.0f} ev/s (limit {bound:,.0f})")


def settled_lag_trend(m: Measured, samples: list[Sample]) -> float | None:
    """The least-squares slope of the lag (events released minus read, by the job's count)
    over the benchmark samples taken while the feed released, after its first
    SETTLE_FRACTION; None when those samples span less than MIN_TREND_SPAN_S."""
    log = m.release_log
    if not log:
        return None
    start, end = log[0][0], log[-1][0]
    settled = start + SETTLE_FRACTION * (end - start)
    # (one point per count: samples with the same `wall` saw the same, unrefreshed count)
    counts = {t: lag for t, lag in reversed(lag_points(log, samples, settled)) if t <= end}
    points = sorted(counts.items())
    if not points or points[-1][0] - points[0][0] < MIN_TREND_SPAN_S:
        return None
    return slope(points)


def _round(rate: float) -> float:
    """Three significant digits: rates people can read and type again."""
    return float(f"{rate:.3g}")


@dataclass
class RateSearch:
    """The search over rates below `upper_eps` for one warm-up: `next_rate` before each trial,
    `observe` after it; `done` once it has found the rate or run out of trials."""

    options: SearchOptions
    upper_eps: float  # the source ceiling
    trials: list[tuple[TrialOutcome, Verdict]] = field(default_factory=list)
    sustained_eps: float | None = None  # the highest rate sustained so far
    unsustained_eps: float | None = None  # the lowest rate not sustained so far
    done: bool = False
    reason: str | None = None  # why the search stopped

    def __post_init__(self) -> None:
        if self.upper_eps <= self.options.min_rate:
            self._stop(
                f"the source ceiling {self.upper_eps:,.0f} ev/s is not above --min-rate "
                f"{self.options.min_rate:,.0f}"
            )

    @property
    def max_trials(self) -> int:
        return self.options.max_trials

    def observe_repeat(
        self, repeat: RepeatMeasured, samples: list[Sample], parts: PhaseParts
    ) -> None:
        """Take a finished benchmark phase as a trial (`QueryRun` calls this after each one),
        noting its verdict on `repeat`."""
        m, ok = repeat.measured, repeat.status == "ok"
        assert repeat.rate is not None
        throughput = None
        if ok and m.t_end is not None and m.t_running is not None and m.t_end > m.t_running:
            throughput = parts.benchmark_events / (m.t_end - m.t_running)
        outcome = TrialOutcome(
            rate=repeat.rate,
            ok=ok,
            throughput_eps=throughput,
            delivered_eps=rate_feed(m, samples).delivered_eps,
            lag_trend_eps=settled_lag_trend(m, samples),
            latency_p99_s=latency_result(m).p99_s if ok else None,
        )
        verdict = self.observe(outcome)
        repeat.sustained, repeat.verdict = verdict.sustained, verdict.reason
        repeat.lag_trend_eps = outcome.lag_trend_eps

    def summary(self) -> Sustainable:
        """What the results record of this search."""
        o = self.options
        return Sustainable(
            rate_eps=self.sustained_eps,
            upper_eps=self.upper_eps,
            trials=len(self.trials),
            stopped=self.reason,
            min_rate=o.min_rate,
            max_trials=o.max_trials,
            lag_tolerance=o.lag_tolerance,
            p99_bound_s=o.p99_bound_s,
            precision=o.precision,
        )

    def next_rate(self) -> float:
        """The rate of the next trial. Call only while not `done`."""
        assert not self.done
        low, high = self.sustained_eps, self.unsustained_eps
        if low is None and high is None:
            rate = START_FRACTION * self.upper_eps
        elif low is None:
            rate = DESCENT * high
        elif high is None:
            rate = min(self.upper_eps, low / DESCENT)
        else:
            rate = (low + high) / 2
        return max(self.options.min_rate, _round(rate))

    def observe(self, outcome: TrialOutcome) -> Verdict:
        """Take a trial's outcome; returns its verdict."""
        verdict = judge(outcome, self.options)
        self.trials.append((outcome, verdict))
        rate = outcome.rate
        if verdict.sustained:
            self.sustained_eps = max(self.sustained_eps or 0.0, rate)
        else:
            self.unsustained_eps = min(self.unsustained_eps or rate, rate)
        self._check_done()
        return verdict

    def _check_done(self) -> None:
        low, high, options = self.sustained_eps, self.unsustained_eps, self.options
        top = high if high is not None else self.upper_eps
        if low is not None and (top - low) <= options.precision * top:
            self._stop(f"bracketed within {options.precision:.0%}")
        elif low is None and high is not None and high <= options.min_rate:
            self._stop(f"not sustained down to --min-rate {options.min_rate:,.0f} ev/s")
        elif len(self.trials) >= options.max_trials:
            self._stop(f"{options.max_trials} trials done")
        elif self.next_rate() in {o.rate for o, _ in self.trials}:
            self._stop("the next rate was tried already")

    def _stop(self, reason: str) -> None:
        self.done, self.reason = True, reason
