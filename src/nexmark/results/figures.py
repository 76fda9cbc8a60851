"""What a query run measured, part by part: the phase checkpoint, the checkpoints, the source
ceiling, a failover's outage, a rate feed, latency, the repeats and their statistics, a rate
search. Each is a nested object of `QueryResult` (docs/results.md); every field is nullable."""

from __future__ import annotations

from dataclasses import dataclass, field

# What `state_growth` was judged on (`QueryResult.state_measure`).
LIVE_BYTES_MEASURE = "live bytes"  # the backend's estimate of the live data, sampled
LIVE_KEYS_MEASURE = "live keys"  # the entries (rows) held, sampled
LOGICAL_MEASURE = "logical size"  # no live trend: the state written once, at the cut and end
CHECKPOINT_MEASURE = "checkpoint size"  # neither: the two checkpoints' full sizes
# How the table marks a growth from two points, not a live trend.
TWO_POINT_MARKS = {CHECKPOINT_MEASURE: "ckpt", LOGICAL_MEASURE: "logical"}


@dataclass
class PhaseCheckpoint:
    """The checkpoint taken after the last warm-up event, which the benchmark phase restores.

    Attributes:
        id: The engine's checkpoint id.
        duration_s: Trigger to completion, seconds.
        checkpointed_bytes: Bytes this checkpoint wrote (incremental size).
        state_bytes: Full state size, bytes.
    """

    id: int | None = None
    duration_s: float | None = None
    checkpointed_bytes: int | None = None
    state_bytes: int | None = None


@dataclass
class CheckpointStats:
    """The periodic checkpoints of the benchmark phase.

    Attributes:
        count: Completed checkpoints.
        failed: Failed checkpoints.
        duration_median_s: Median duration of the completed ones, seconds.
        duration_max_s: Longest duration, seconds.
        checkpointed_bytes_median: Median incremental size, bytes.
        state_bytes_last: Full state size of the last completed one, bytes.
    """

    count: int | None = None
    failed: int | None = None
    duration_median_s: float | None = None
    duration_max_s: float | None = None
    checkpointed_bytes_median: int | None = None
    state_bytes_last: int | None = None


@dataclass
class SourceCalibration:
    """The data path's ceiling in the sitting a result was measured in: one job that reads the
    benchmark part through the queries' source (every line, its kind, time and watermark) at
    the queries' parallelism and discards it, run once per `nexmark run` before the queries.

    Attributes:
        status: "ok", "failed", "timeout" or "unsupported" (the engine cannot run it).
        reason: Why it is not "ok".
        events: Events it read (the benchmark part).
        parallelism: Its source readers.
        time_s: From every task running to the job's end, seconds.
        throughput_eps: events / time_s.
        cores: Engine CPU seconds during time_s / time_s.
        throughput_per_core: throughput_eps / cores.
        warm_reads: Unscored reads of the part before the timed one (0 or null: measured cold).
        cold_throughput_eps: The first (unscored) read's throughput, for comparison.
        too_short: Why the timed read was too short to resolve (under 5 s, the scored
            phases' bound): its throughput is then no ceiling to give a query's share of.
    """

    status: str | None = None
    reason: str | None = None
    events: int | None = None
    parallelism: int | None = None
    time_s: float | None = None
    throughput_eps: float | None = None
    cores: float | None = None
    throughput_per_core: float | None = None
    warm_reads: int | None = None
    cold_throughput_eps: float | None = None
    too_short: str | None = None


@dataclass
class Failover:
    """The outage of a failover run (docs/failover.md); all null in other runs. Durations are
    seconds from the kill (or, when the failure was only observed, from the engine's failure
    time); instants are seconds since the query started, as the time series'.

    Attributes:
        mode: "inject" (the runner killed a worker) or "observe" (someone else did).
        killed: What was killed, as the engine names it.
        kill_events: Benchmark events read when it was killed (the last count before it).
        t_kill: The kill, seconds since the query started.
        detect_s: Until the engine noticed (its failure time, else the job leaving ready).
        restore_s: Until every task ran again.
        catch_up_rate_s: Until a 1 s rate reached 90% of the phase's rate before the kill.
        catch_up_kill_point_s: Until the events read passed `kill_events` again.
        restored_checkpoint: The checkpoint the restart restored.
        events_at_restore: Benchmark events that checkpoint covered (the source's position).
        events_replayed: kill_events - events_at_restore: events read twice.
        restarts: Restarts the engine counted.
        cause: The failure as the engine reported it.
        rate_before_eps: Benchmark events read before the kill / time from t_running to it.
        throughput_with_outage_eps: Benchmark events / Time: the phase, outage included
            (equal to `throughput_eps` of a failover run).
        throughput_without_outage_eps: Benchmark events / (Time - catch_up_kill_point_s): the
            time lost to the outage taken out.
    """

    mode: str | None = None
    killed: str | None = None
    kill_events: int | None = None
    t_kill: float | None = None
    detect_s: float | None = None
    restore_s: float | None = None
    catch_up_rate_s: float | None = None
    catch_up_kill_point_s: float | None = None
    restored_checkpoint: int | None = None
    events_at_restore: int | None = None
    events_replayed: int | None = None
    restarts: int | None = None
    cause: str | None = None
    rate_before_eps: float | None = None
    throughput_with_outage_eps: float | None = None
    throughput_without_outage_eps: float | None = None


@dataclass
class RateFeed:
    """A benchmark phase fed at a set rate (`nexmark run --rate`; docs/protocol.md).

    Attributes:
        asked_eps: The rate asked, events/s.
        delivered_eps: Events released before the last step over the time from the first
            step to the last: the rate the feed really released at.
        max_error_5s: The largest relative difference from the rate asked over a 5 s window
            starting at a step (None for a release shorter than 5 s).
        steps: Time slices released.
        lag_max_events: The most events released and not yet read at a sample.
        lag_end_events: Events released and not yet read at the last sample of the phase.
        lag_trend_eps: The least-squares slope of that lag over the phase's samples, events/s
            (sustained: under 1% of the rate).
        releaser_cpu_s: CPU time of the releaser's own thread (the harness's cost).
        releaser_cores: That over the phase's time (a share of one core).
    """

    asked_eps: float | None = None
    delivered_eps: float | None = None
    max_error_5s: float | None = None
    steps: int | None = None
    lag_max_events: int | None = None
    lag_end_events: int | None = None
    lag_trend_eps: float | None = None
    releaser_cpu_s: float | None = None
    releaser_cores: float | None = None


@dataclass
class Latency:
    """Event-time latency of a rate-fed benchmark phase (docs/protocol.md, "Event-time
    latency"): for each stamped output row, the wall time it reached the sink minus the wall
    time the feed released the last event it depends on. Optional: a document without it
    (an older one, or a run at full speed) reads as is.

    Attributes:
        p50_s, p95_s, p99_s, max_s: Nearest-rank percentiles and the largest, seconds.
        rows: Stamped rows measured.
        left_out: Stamped rows not measured: the warm-up job's, or ones depending on an event
            before the phase (a window the warm-up opened).
        sample: The share of output rows stamped.
        depends: What a row's latency is measured from, by the query's rule.
        watermark_delay_s: The source's watermark delay, which every window row waits for.
        series: Latency over the phase: [seconds since the first release, p50 s, max s, rows]
            per interval of sink time (1 s, or wider for long phases).
    """

    p50_s: float | None = None
    p95_s: float | None = None
    p99_s: float | None = None
    max_s: float | None = None
    rows: int | None = None
    left_out: int | None = None
    sample: float | None = None
    depends: str | None = None
    watermark_delay_s: float | None = None
    series: list[list[float]] = field(default_factory=list)


@dataclass
class RepeatSample:
    """One benchmark phase of a query, restored from the phase checkpoint (`--repeat N`).

    Attributes:
        index: 0 for the first repeat, counted over every run (`--runs M`): run r's repeat k
            is r * N + k.
        status: "ok", "failed", "timeout" or "skipped" (not run: a processing-time state TTL
            would have expired too much of the restored state, `QueryRun`).
        reason: Why it is not "ok" (a run whose warm-up failed: each of its repeats, "warm-up
            failed: ...").
        run: The whole cycle (fresh warm-up, `--runs M`) it belongs to, 0 for the first.
        time_s, throughput_eps, cores, throughput_per_core, recovery_time_s,
        time_to_first_event_s, first_read_gap_s, restored_state_age_s, state_bytes_end,
            state_growth, state_steady, phase_too_short, other_cores: as the record's fields
            of the same names, for this repeat.
        end_checkpoint_id: The checkpoint that proved its last event.
        checkpoints_count: Its completed periodic checkpoints.
        restored_from: The snapshot it restored, as its engine shows it.
        restored_checkpoint_id: The checkpoint id it restored: the phase checkpoint's.
        t_submit, t_running, t_end: Its timestamps, unix seconds.
        latency_p50_s, latency_p99_s: Its event-time latency (`Latency`), in a rate-fed run.
        rate_asked_eps, rate_delivered_eps, lag_trend_eps, lag_max_events, rate_steps: A phase
            fed at a set rate (a trial of `nexmark sustainable`): as `rate`'s fields of those
            names (`rate_steps`: `steps`, the released steps of the layout it read).
        sustained: A trial of `nexmark sustainable`: whether it kept up with its rate.
        verdict: Why (or why not), e.g. "lag grew 5,200 ev/s (limit 9,000)".
    """

    index: int
    status: str = "ok"
    reason: str | None = None
    run: int = 0
    time_s: float | None = None
    throughput_eps: float | None = None
    cores: float | None = None
    source_cores: float | None = None  # --source kafka: the embedded broker's (QueryResult's)
    throughput_per_core: float | None = None
    recovery_time_s: float | None = None
    phase_too_short: str | None = None
    other_cores: float | None = None  # other processes' cores in this phase (QueryResult's)
    time_to_first_event_s: float | None = None
    first_read_gap_s: float | None = None
    restored_state_age_s: float | None = None
    state_bytes_end: int | None = None
    state_growth: float | None = None
    state_steady: bool | None = None
    state_measure: str | None = None  # what this phase's growth was judged on
    end_checkpoint_id: int | None = None
    checkpoints_count: int | None = None
    restored_from: str | None = None
    restored_checkpoint_id: int | None = None
    t_submit: float | None = None
    t_running: float | None = None
    t_end: float | None = None
    latency_p50_s: float | None = None
    latency_p99_s: float | None = None
    rate_asked_eps: float | None = None
    rate_delivered_eps: float | None = None
    lag_trend_eps: float | None = None
    lag_max_events: int | None = None
    rate_steps: int | None = None
    sustained: bool | None = None
    verdict: str | None = None


@dataclass
class Sustainable:
    """The highest rate a query kept up with (`nexmark sustainable`, docs/protocol.md).

    Attributes:
        rate_eps: The highest rate of a sustained trial (None: none was).
        upper_eps: The search's upper bound: the source ceiling of the sitting.
        trials: Benchmark phases the search ran, each in `repeats` with its rate and verdict.
        stopped: Why the search stopped.
        min_rate, max_trials, lag_tolerance, p99_bound_s, precision: Its criteria, as asked.
    """

    rate_eps: float | None = None
    upper_eps: float | None = None
    trials: int | None = None
    stopped: str | None = None
    min_rate: float | None = None
    max_trials: int | None = None
    lag_tolerance: float | None = None
    p99_bound_s: float | None = None
    precision: float | None = None


@dataclass
class ThroughputStats:
    """The throughput of a query's successful repeats (nexmark.results.stats).

    Attributes:
        n: Values (successful repeats) the statistics rest on.
        median: The low median (= `throughput_eps`: the median repeat's).
        min, max: The slowest and the fastest repeat.
        stdev: Sample standard deviation (n >= 2).
        rel_spread: Median absolute deviation / median (n >= 2).
        ci_low, ci_high: 95% confidence interval of the median (n >= 2).
        ci_method: How the interval was computed.
        median_repeat: The index of the repeat the top-level metrics come from.
        runs: The whole cycles (warm-ups) the values come from (`--runs M`).
    """

    n: int | None = None
    median: float | None = None
    min: float | None = None
    max: float | None = None
    stdev: float | None = None
    rel_spread: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    median_repeat: int | None = None
    runs: int | None = None
