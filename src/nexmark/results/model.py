"""The result of one query run: the record every engine writes and every report reads.

One `QueryResult` per (run, engine, query). Every metric is nullable: a failed, timed-out or
unsupported query keeps its identity, status and reason, and whatever was measured before it
stopped. docs/results.md documents every field, its unit and its meaning.

Files carry an integer schema version (asv's habit). Loading rejects versions newer than this
code knows and upgrades older ones one step at a time through `UPGRADES[n]` (`upgrade_to_n`).

Schema history:
    1: first version (nexmark 0.1.0).
    2: event-time progress (samples' `watermark_lag_s`, `watermark_lag_max_s`,
       `watermark_lag_warmup_end_s`), `first_read_gap_s`, `steady_reason`, `job_options`.
       Every new field is nullable, so a version-1 document reads as is.
    3: the data path's ceiling: `source` (the run's source-only calibration job: throughput,
       cores, time) and `source_ratio` (the query's throughput / the source's); `events_id`
       (the events' identity whatever the file layout, so runs of two engines on datasets
       sliced differently are known to hold the same events); `state_bound` (what bounds the
       query's state on its engine: a TTL, the watermark, nothing). New nullable fields again: a
       version-2 document reads as is (nothing was calibrated).
    4: failover runs: `failover` (the outage of a worker killed in the benchmark phase: what,
       when, detect / restore / catch-up times, events replayed, throughput with and without
       the outage). A nullable object: a version-3 document reads as is (no failover run).
    5: the ceiling measured warm: `source.warm_reads` (unscored reads before the timed one),
       `source.cold_throughput_eps` (the first read's), and `source_invalid` (why a query's
       `source_ratio` is no ratio to a ceiling: the query ran faster than the source-only job).
       New nullable fields: a version-4 document reads as is (its ceilings were cold).
    6: repeated benchmark phases (`nexmark run --repeat N`, each restored from the same phase
       checkpoint): `repeats` (one sample per benchmark phase: its status, Time, throughput,
       cores, recovery, end checkpoint, growth and restore proof) and `throughput_stats`
       (median, min, max, standard deviation, 95% interval, count); the top-level metrics
       are those of the median repeat, so `throughput_eps` is the median. A version-5
       document reads as is: no repeats, null statistics (one value: `throughput_eps`).
    7: whole cycles repeated (`nexmark run --runs M`): `repeats[].run` (the cycle, 0 first)
       and `throughput_stats.runs` (the cycles the values come from). A version-6 document
       reads as is: one run.
    8: the system check (`setup.system_check` before the run, `system_check` before each
       query: load average, CPU count, governor, boost, other processes' CPU); the rate
       search (`sustainable.*`, and per trial `repeats[].rate_asked_eps`,
       `.rate_delivered_eps`, `.lag_trend_eps`, `.lag_max_events`, `.sustained`, `.verdict`);
       event-time latency (`latency.*`); `handoff`; the timeline's count times
       (`timeseries[].count_age_s`, `checkpoint_events[].t_completed`). All optional with
       defaults: a version-7 document reads as is (null figures, handoff unknown).
    9: live state: `state_growth` is judged on the live state sampled through the benchmark
       phase (`state_measure`: "live bytes", "live keys", or "checkpoint size" where the engine
       gives no live measure), `state_live_start`/`state_live_end` (the fitted line at the
       phase's start and end), `state_trend_per_s`, `state_live_bytes_end`,
       `state_live_keys_end`, `repeats[].state_measure`; `checkpoint_growth` (the ratio of the
       two checkpoints' full sizes, which `state_growth` was up to version 8); `live_state`
       (every read, both phases). A version-8 document's growth was the checkpoints' ratio:
       the upgrade moves it to `checkpoint_growth` and says so in `state_measure`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nexmark.errors import NexmarkError

SCHEMA_VERSION = 9
STATE_GROWTH_LIMIT = 1.2  # the proposal's bound: above it the state is "not steady"
# What `state_growth` was judged on (`QueryResult.state_measure`).
LIVE_BYTES_MEASURE = "live bytes"  # the backend's estimate of the live data, sampled
LIVE_KEYS_MEASURE = "live keys"  # the entries (rows) held, sampled
CHECKPOINT_MEASURE = "checkpoint size"  # no live measure: the two checkpoints' full sizes

# UPGRADES[n] turns a document of version n-1 into version n (whole document, not one record).
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    2: lambda doc: doc,  # only new nullable fields
    3: lambda doc: doc,  # only new nullable fields
    4: lambda doc: doc,  # only a new nullable object
    5: lambda doc: doc,  # only new nullable fields
    6: lambda doc: doc,  # a new list and a new nullable object: no repeats were measured
    7: lambda doc: doc,  # new fields with defaults: one run (run 0)
    8: lambda doc: doc,  # new optional fields: no system check, search, latency or handoff
    9: lambda doc: _growth_was_checkpoints(doc),
}


def _growth_was_checkpoints(doc: dict[str, Any]) -> dict[str, Any]:
    """Up to version 8 the growth was the ratio of two checkpoints' full sizes."""
    for rec in doc.get("results") or []:
        if isinstance(rec, dict) and rec.get("state_growth") is not None:
            rec["checkpoint_growth"] = rec["state_growth"]
            rec["state_measure"] = CHECKPOINT_MEASURE
    return doc


class ResultsError(NexmarkError):
    """A results file is missing, unreadable, malformed or of an unknown schema version."""


class Status(str, enum.Enum):
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    UNSUPPORTED = "unsupported"


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
        status: "ok", "failed" or "timeout".
        reason: Why it is not "ok" (a run whose warm-up failed: each of its repeats, "warm-up
            failed: ...").
        run: The whole cycle (fresh warm-up, `--runs M`) it belongs to, 0 for the first.
        time_s, throughput_eps, cores, throughput_per_core, recovery_time_s,
        time_to_first_event_s, first_read_gap_s, state_bytes_end, state_growth: as the
            record's fields of the same names, for this repeat.
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
    throughput_per_core: float | None = None
    recovery_time_s: float | None = None
    time_to_first_event_s: float | None = None
    first_read_gap_s: float | None = None
    state_bytes_end: int | None = None
    state_growth: float | None = None
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


@dataclass
class Machine:
    """The machine a result was measured on.

    Attributes:
        cores: Logical CPUs.
        physical_cores: Physical cores, when known.
        memory_bytes: Total memory, bytes.
        os: Operating system and kernel, e.g. "Linux-6.1.0-x86_64-with-glibc2.36".
        cpu_model: CPU model name.
        python: Python version.
        java: Java runtime version, when the engine runs on one.
    """

    cores: int | None = None
    physical_cores: int | None = None
    memory_bytes: int | None = None
    os: str | None = None
    cpu_model: str | None = None
    python: str | None = None
    java: str | None = None


@dataclass
class OtherProcess:
    """A process, not of this run, that used CPU in a system check's window.

    Attributes:
        pid: Its process id.
        name: Its name, as the process table shows it.
        cores: Its CPU seconds in the window / the window.
    """

    pid: int
    name: str | None = None
    cores: float | None = None


@dataclass
class SystemCheck:
    """The state of the machine at one instant (nexmark.metrics.system), before the run or
    before one query: what else the machine was doing.

    Attributes:
        at: When the check ended, unix seconds.
        load_avg: The load average over 1, 5 and 15 minutes (null: unreadable).
        cpus: Logical CPUs.
        governor: The CPU frequency scaling governor(s), or "unreadable".
        boost: "on" or "off" (frequency boost / turbo), or "unreadable".
        window_s: Seconds over which other processes' CPU was measured.
        other_cores: CPU seconds of other processes in the window / the window (processes
            other than this one and its descendants, which include the engine's).
        other_processes: The busiest of them (up to three).
        warn_cores: The bound above which the run warned (a quarter of a core by default).
        note: Why a figure is missing (a window too short, an unreadable process table).
    """

    at: float | None = None
    load_avg: list[float] | None = None
    cpus: int | None = None
    governor: str | None = None
    boost: str | None = None
    window_s: float | None = None
    other_cores: float | None = None
    other_processes: list[OtherProcess] = field(default_factory=list)
    warn_cores: float | None = None
    note: str | None = None


@dataclass
class Setup:
    """What a result means: the effective engine configuration, the run options, the machine.

    Attributes:
        engine_target: Where the engine ran: "embedded", "remote http://host:8081", ...
        engine_config: The engine's full effective configuration (string keys and values).
        options: The run's protocol options (events, warm-up fraction, checkpoint interval, ...).
        versions: Component versions: engine, its client library, nexmark.
        machine: The machine.
        system_check: What else the machine was doing before the run (load, other
            processes' CPU, frequency governor and boost); context, not setup: `compare`
            does not count it as a setup difference.
    """

    engine_target: str | None = None
    engine_config: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    machine: Machine = field(default_factory=Machine)
    system_check: SystemCheck = field(default_factory=SystemCheck)


@dataclass
class Timestamps:
    """Wall-clock instants of the query run, unix seconds.

    Attributes:
        query_start: The query began (time 0 of the time series).
        warmup_start: The warm-up job was submitted.
        warmup_end: The warm-up source had emitted its last event (the cut).
        t_submit: The restored job was submitted.
        t_running: Every task of the restored job was running (state restored).
        t_first: The first benchmark event was read.
        t_end: The last benchmark event was fully processed.
    """

    query_start: float | None = None
    warmup_start: float | None = None
    warmup_end: float | None = None
    t_submit: float | None = None
    t_running: float | None = None
    t_first: float | None = None
    t_end: float | None = None


@dataclass
class Sample:
    """One point of the time series, about every second.

    Attributes:
        t: Seconds since the query started (`timestamps.query_start`).
        phase: "warmup", "restore" or "benchmark".
        events: Events read so far by the phase's job (cumulative within the phase).
        throughput_eps: Events per second over the interval ending at `t`.
        cores: CPU seconds per second used by the engine over that interval.
        watermark_lag_s: Event time the data has reached (that of the `events`-th event of the
            part) minus the job's watermark, seconds; None where the job has no watermark.
        released: In a rate-fed benchmark phase, events released by the feed by `t` (the lag
            is `released - events`); None otherwise.
        count_age_s: How long before the poll that read it `events` was true: `t` is the
            engine's own time of the count (its metric time), this much before the poll; None
            where the engine gives none (`t` is the poll's time).
    """

    t: float
    phase: str
    events: int | None = None
    throughput_eps: float | None = None
    cores: float | None = None
    watermark_lag_s: float | None = None
    released: int | None = None  # a rate-fed phase: events the feed had released by then
    count_age_s: float | None = None  # the poll's time minus `t` (None: `t` is the poll's)


@dataclass
class LivePoint:
    """One read of the job's live state (`engines.base.LiveState`), about every second.

    Attributes:
        t: Seconds since the query started, at the poll that read it.
        phase: "warmup" or "benchmark" (the restored job).
        bytes: The live data by the state backend's estimate; None where it gives none.
        keys: Entries held.
        files_bytes: The store's files (dead entries included).
        memory_bytes: State held in memory (memtables; Spark's `memoryUsedBytes`).
    """

    t: float
    phase: str
    bytes: int | None = None
    keys: int | None = None
    files_bytes: int | None = None
    memory_bytes: int | None = None

    @property
    def reading(self) -> tuple[int | None, ...]:
        """What was read, without when: equal readings are one refresh of the engine's."""
        return (self.bytes, self.keys, self.files_bytes, self.memory_bytes)


@dataclass
class CheckpointEvent:
    """One checkpoint of either phase, for the charts.

    Attributes:
        phase: "warmup" or "benchmark".
        id: The engine's checkpoint id.
        t: Trigger time, seconds since the query started.
        status: "completed" or "failed".
        duration_s: Trigger to completion, seconds (None if failed).
        checkpointed_bytes: Incremental size, bytes.
        state_bytes: Full state size, bytes.
        kind: "periodic", "phase" (the phase checkpoint) or "end" (proves the last event).
        t_completed: When it completed (the last acknowledgement), seconds since the query
            started; None if it did not (or the engine does not say).
    """

    phase: str
    id: int
    t: float
    status: str = "completed"
    duration_s: float | None = None
    checkpointed_bytes: int | None = None
    state_bytes: int | None = None
    kind: str = "periodic"
    t_completed: float | None = None


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
    time_to_first_event_s: float | None = None
    time_to_steady_s: float | None = None
    first_read_gap_s: float | None = None
    watermark_lag_max_s: float | None = None
    watermark_lag_warmup_end_s: float | None = None
    phase_checkpoint: PhaseCheckpoint = field(default_factory=PhaseCheckpoint)
    checkpoints: CheckpointStats = field(default_factory=CheckpointStats)
    state_bytes_start: int | None = None  # the phase checkpoint's full size
    state_bytes_end: int | None = None  # the end checkpoint's full size
    checkpoint_growth: float | None = None  # state_bytes_end / state_bytes_start
    state_growth: float | None = None  # over the benchmark phase, on `state_measure`
    state_measure: str | None = None  # LIVE_BYTES_MEASURE, LIVE_KEYS_MEASURE or CHECKPOINT_MEASURE
    state_live_start: float | None = None  # the live measure's fitted line at the phase's start
    state_live_end: float | None = None  # ... and at its end: state_growth = end / start
    state_trend_per_s: float | None = None  # the line's slope over its mean, per second
    state_live_bytes_end: int | None = None  # the last live bytes read in the benchmark phase
    state_live_keys_end: int | None = None  # the last entries count read in the benchmark phase
    source_ratio: float | None = None  # throughput_eps / source.throughput_eps
    source_invalid: str | None = None  # why the source-only job was no ceiling for this query
    state_steady: bool | None = None
    steady_reason: str | None = None
    state_bound: str | None = None  # what bounds the state on this engine (JobSetup.state_bound)
    restored_from: str | None = None
    handoff: str | None = None  # how the state crossed the cut: "resubmit" or "in-place"
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
        values = _fields(cls, data, where)
        for name, kind in _NESTED.items():
            # null stands for "nothing measured": the same as an object of nulls
            value = values.pop(name, None)
            if value is not None:
                values[name] = _nested(kind, value, f"{where}.{name}")
        for name, kind in (
            ("timeseries", Sample),
            ("live_state", LivePoint),
            ("checkpoint_events", CheckpointEvent),
            ("repeats", RepeatSample),
        ):
            items = values.get(name) or []
            values[name] = [_build(kind, d, f"{where}.{name}[{i}]") for i, d in enumerate(items)]
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


_NESTED: dict[str, type] = {
    "phase_checkpoint": PhaseCheckpoint,
    "checkpoints": CheckpointStats,
    "timestamps": Timestamps,
    "setup": Setup,
    "source": SourceCalibration,
    "failover": Failover,
    "rate": RateFeed,
    "latency": Latency,
    "throughput_stats": ThroughputStats,
    "sustainable": Sustainable,
    "system_check": SystemCheck,
}


def _fields(cls: type, data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ResultsError(f"{where}: expected an object, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ResultsError(f"{where}: unknown field(s) {', '.join(unknown)}")
    return dict(data)


def _build(cls: type, data: Any, where: str) -> Any:
    try:
        return cls(**_fields(cls, data, where))
    except TypeError as exc:  # a required field is missing
        raise ResultsError(f"{where}: {exc}") from exc


def _nested(cls: type, data: Any, where: str) -> Any:
    if cls is Setup:
        values = _fields(Setup, data, where)
        values["machine"] = _build(Machine, values.get("machine") or {}, f"{where}.machine")
        check = values.get("system_check") or {}
        values["system_check"] = _nested(SystemCheck, check, f"{where}.system_check")
        return Setup(**values)
    if cls is SystemCheck:
        values = _fields(SystemCheck, data, where)
        values["other_processes"] = [
            _build(OtherProcess, d, f"{where}.other_processes[{i}]")
            for i, d in enumerate(values.get("other_processes") or [])
        ]
        return SystemCheck(**values)
    return _build(cls, data, where)


def load_document(doc: Any, source: str = "results") -> list[QueryResult]:
    """Parse a results document `{"schema_version": N, "results": [...]}`, upgrading old ones.

    Args:
        doc: The parsed JSON.
        source: What to name in error messages (usually the file path).

    Raises:
        ResultsError: on a newer or unknown schema version, or a malformed record.
    """
    if not isinstance(doc, dict) or "schema_version" not in doc or "results" not in doc:
        raise ResultsError(f"{source}: not a nexmark results file (no schema_version/results)")
    version = doc["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ResultsError(f"{source}: invalid schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: schema version {version} is newer than this nexmark understands "
            f"(up to {SCHEMA_VERSION}); upgrade nexmark to read it"
        )
    doc = upgrade(doc)
    if not isinstance(doc["results"], list):
        raise ResultsError(f"{source}: 'results' must be a list")
    return [QueryResult.from_dict(r) for r in doc["results"]]


def upgrade(doc: dict[str, Any]) -> dict[str, Any]:
    """Apply `UPGRADES[v+1]`, `UPGRADES[v+2]`, ... until the document is current."""
    version = doc["schema_version"]
    while version < SCHEMA_VERSION:
        step = UPGRADES.get(version + 1)
        if step is None:
            raise ResultsError(f"no upgrade from schema version {version} to {version + 1}")
        doc = step(doc)
        version += 1
        doc["schema_version"] = version
    return doc


def dump_document(results: list[QueryResult]) -> dict[str, Any]:
    """The results document for `results.json`."""
    return {"schema_version": SCHEMA_VERSION, "results": [r.to_dict() for r in results]}


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
                r.checkpoint_growth
                if r.state_measure in (None, CHECKPOINT_MEASURE)
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
        if r.state_growth is not None and r.state_steady != (r.state_growth <= STATE_GROWTH_LIMIT):
            out.append(f"state_steady is {r.state_steady!r} with growth {r.state_growth:.3f}")
    elif r.reason is None:
        out.append(f"status {r.status.value} without a reason")
    if None not in (r.events_total, r.events_warmup, r.events_benchmark) and (
        r.events_warmup + r.events_benchmark != r.events_total
    ):
        out.append("events_warmup + events_benchmark != events_total")
    return out
