"""One query through the two phases of docs/protocol.md, on any engine behind `Engine`.

warm-up (source alive at the cut) -> phase checkpoint -> cancel -> restore its snapshot on the
benchmark part -> proof of restore -> benchmark phase -> end checkpoint (all events fully
processed) -> cleanup.
Only the benchmark phase is scored. The engine is never asked what it is.
"""

from __future__ import annotations

import copy
import dataclasses
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from nexmark.durations import format_seconds
from nexmark.engines.base import (
    CheckpointInfo,
    CheckpointStatus,
    Engine,
    FailoverSupport,
    Handoff,
    Job,
    JobSetup,
    JobSpec,
    JobState,
    LatencyStamps,
    SinkKind,
    Snapshot,
    StateTtl,
)
from nexmark.errors import EngineError, NexmarkError, QueryTimeoutError, UsageError
from nexmark.metrics import latency as lat
from nexmark.metrics.sampler import Sample, Sampler
from nexmark.protocol import rate_layout
from nexmark.protocol.display import RunDisplay
from nexmark.protocol.failover import (
    OUTAGE_PHASE,
    FailoverTimeout,
    Outage,
    kill_point_reached,
    restarted,
)
from nexmark.protocol.phases import Phase, PhaseTracker
from nexmark.protocol.polling import EndWatch
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import Releaser
from nexmark.workload.generator import event_time_ms

if TYPE_CHECKING:
    from nexmark.protocol.sustainable import SearchOptions

MAX_CHECKPOINT_INTERVAL_S = 30.0  # the proposal: checkpoints every 30 s at most
MAX_REPEAT = 100  # --repeat above this is a typo rather than a plan
MAX_RUNS = 20  # --runs above this (each a full warm-up) is a typo rather than a plan
# After the scored phase, how long a job's operators may still await their first watermark.
EVENT_TIME_GRACE_S = 10.0


class InvalidRunError(EngineError):
    """The run broke a condition the protocol needs for its figures to mean anything (not a
    wrong result of the query): running it again may succeed."""


class ReaderSkewError(InvalidRunError):
    """A phase's source readers did not read one file each (the run is not valid)."""


class EventTimeStalledError(InvalidRunError):
    """An event-time operator of the benchmark job never received a watermark: its windows and
    timers never fire (the run is not valid)."""


@dataclass
class ProtocolOptions:
    """The knobs of the protocol itself (engine options live in the engine's settings).

    checkpoint_interval_s, state_ttl and parallelism are None unless given on the command
    line: None means "as the engine's settings say", and whatever the path, a job's resolved
    setup (`Engine.job_setup`) is what is checked and recorded.
    """

    checkpoint_interval_s: float | None = None
    state_ttl: StateTtl | None = None
    parallelism: int | None = None
    timeout_s: float = 3600.0  # per query, both phases
    keep_checkpoints: bool = False
    sample_interval_s: float = 1.0
    # Verification runs read the rows back; benchmark runs discard them.
    sink: SinkKind = SinkKind.DISCARD
    collect_dir: Path | None = None
    # Wait after the last event of a phase before its checkpoint, so that the source's periodic
    # watermark has left it too (verification needs every window the data closes to fire).
    settle_s: float = 0.0
    # False only to show that verification catches lost state: the benchmark job starts empty.
    restore: bool = True
    # A failover run (docs/failover.md): what the engine can do once `enable_failover` said so
    # (INJECT: the runner kills a worker at the kill point; OBSERVE: it waits for someone to).
    failover: FailoverSupport | None = None
    failover_at: float = 0.5  # the kill point: this share of the benchmark events read
    # Benchmark phases per query, each restored from the same phase checkpoint (one warm-up).
    repeat: int = 1
    # Events/s the benchmark part is released at (`workload.feed.Releaser`); None: all at once,
    # read at full speed. The warm-up is always read at full speed.
    rate: float | None = None
    # Whole cycles per query (`--runs M`): each a fresh warm-up followed by `repeat` phases.
    runs: int = 1
    # `nexmark sustainable`: the benchmark phases are a search's trials, each at its own rate.
    search: SearchOptions | None = None
    # Stamp a sample of the output rows for their event-time latency (`metrics.latency`);
    # None: in a rate-fed run (a search's trials are), where the engine can and the query's
    # rows carry an event time.
    latency: bool | None = None
    # The share of per-event output rows stamped, instead of the rule's (`LatencyRule.sample`,
    # 0.1%); window rows, few, are always all stamped.
    latency_sample: float | None = None

    def latency_stamps(self, query: str) -> LatencyStamps | None:
        """What a job of `query` is asked to stamp, when it stamps (`latency_on`)."""
        rule = lat.rule(query)
        if rule is None:
            return None
        per_event = rule.sample < 1.0
        sample = self.latency_sample if self.latency_sample and per_event else rule.sample
        return LatencyStamps(rule.column, sample)

    def latency_on(self, engine: Engine, query: str) -> bool:
        # A rate search stamps its trials only when asked: the stamps cost the engine CPU
        # (Flink q0: ~6% per event at 0.1% stamped), which would lower the rate found.
        fed = self.rate is not None or (self.search is not None and self.search.latency)
        wanted = fed if self.latency is None else self.latency
        return wanted and engine.capabilities().latency_stamps and lat.rule(query) is not None


class TrialSearch(Protocol):
    """A search that picks each benchmark phase's rate from the outcomes of the ones before
    (`nexmark sustainable`: protocol/sustainable.py). The protocol runs its trials as repeats
    restored from one phase checkpoint, for as long as it is not `done`."""

    done: bool
    max_trials: int

    def next_rate(self) -> float:
        """The next trial's feeding rate in events/s."""
        ...

    def observe_repeat(
        self, repeat: RepeatMeasured, samples: list[Sample], parts: PhaseParts
    ) -> None:
        """Take a finished trial (its samples), noting its verdict on `repeat`."""
        ...

    def summary(self) -> Any:
        """What the results record of the search (results.model.Sustainable)."""
        ...


@dataclass
class PhaseParts:
    """The dataset as the protocol sees it: two part directories and their event counts."""

    warmup_dir: Path
    benchmark_dir: Path
    warmup_events: int
    benchmark_events: int
    # Event time (epoch ms) the data has reached once a phase's job has read `events` events:
    # that of the part's event number first + events - 1. Readers advance together (one stripe
    # each), so the slowest of them is at most a few blocks (10 ms each) behind this.
    time_read_ms: Callable[[str, int], int | None] | None = None
    # Events of each file of a part: each source reader must read exactly one of them.
    file_events: dict[str, list[int]] = field(default_factory=dict)
    # The dataset's parameters: a rate search's trials each read the benchmark part laid out
    # anew for their rate from these (`protocol.rate_layout`; None: the part as it is).
    params: DatasetParams | None = None

    @classmethod
    def of(cls, dataset: Dataset) -> PhaseParts:
        (w0, w1), (b0, b1) = dataset.part_range("warmup"), dataset.part_range("benchmark")
        config = dataset.params.generator_config
        first = {"warmup": w0, "benchmark": b0, "restore": b0}

        def time_read_ms(phase: str, events: int) -> int | None:
            if events <= 0 or phase not in first:
                return None
            last = min(first[phase] + events, w1 if phase == "warmup" else b1) - 1
            return int(event_time_ms(last, config))

        return cls(
            dataset.part_dir("warmup"),
            dataset.part_dir("benchmark"),
            w1 - w0,
            b1 - b0,
            time_read_ms,
            {part: [f.events for f in dataset.files(part)] for part in ("warmup", "benchmark")},
            dataset.params,
        )

    def laid_out_for(self, rate: float, root: Path) -> PhaseParts:
        """These parts with the benchmark part laid out for a release at `rate` (generated
        under `root` when the dataset's own is not: `rate_layout.part_for_rate`)."""
        if self.params is None:
            return self
        laid_out = rate_layout.part_for_rate(self.params, rate, root)
        if laid_out is None:
            return self
        files = [f.events for f in laid_out.files("benchmark")]
        return dataclasses.replace(
            self,
            benchmark_dir=laid_out.part_dir("benchmark"),
            file_events={**self.file_events, "benchmark": files},
        )


@dataclass
class Measured:
    """Raw observations of one query run; `metrics.derive` and `results` turn them into a result."""

    query: str
    started_at: float
    phases: dict[str, float] = field(default_factory=dict)
    phase_checkpoint: CheckpointInfo | None = None
    end_checkpoint: CheckpointInfo | None = None
    warmup_checkpoints: list[CheckpointInfo] = field(default_factory=list)
    benchmark_checkpoints: list[CheckpointInfo] = field(default_factory=list)
    restored_from: str | None = None
    restored_id: int | None = None  # the checkpoint id the benchmark job says it restored
    t_submit: float | None = None
    t_running: float | None = None
    t_first: float | None = None
    t_end: float | None = None
    cpu_at_running: float | None = None
    cpu_at_end: float | None = None
    benchmark_events_seen: int = 0
    job_options: dict[str, dict[str, str]] = field(default_factory=dict)  # phase -> options
    state_bound: str | None = None  # what bounds the job's state (JobSetup.state_bound)
    state_ttl_s: float | None = None  # the benchmark job's state TTL (None: none)
    outage: Outage | None = None  # a failover run's failure, as observed
    repeats: list[RepeatMeasured] = field(default_factory=list)  # each benchmark phase run
    # A rate-fed benchmark phase: the rate asked and the releaser's log of (wall, released).
    rate_asked: float | None = None
    release_log: list[tuple[float, int]] = field(default_factory=list)
    releaser_cpu_s: float | None = None
    # Released time slices: (first event ms, last event ms, release wall time).
    releases: list[lat.Release] = field(default_factory=list)
    # A phase with latency stamps: (sink wall, latency s) per stamped row of the phase, sorted,
    # and the stamps left out (rows of the warm-up, or of events before the phase).
    latency: list[tuple[float, float]] | None = None
    latency_left_out: int = 0
    latency_sample: float | None = None  # the share of rows stamped, as submitted
    search: TrialSearch | None = None  # a rate search's trials ran as the repeats
    handoff: Handoff = Handoff.RESUBMIT  # how the state crossed the cut (the engine's)


@dataclass
class RepeatMeasured:
    """One benchmark phase of a query restored from its phase checkpoint (`--repeat N`).

    `measured` holds the warm-up's observations and this repeat's benchmark ones (what
    `record.build_result` needs for one sample); `samples` is the slice of the sampler's
    samples taken during this repeat (from its restore to its end)."""

    index: int  # over every run's repeats: run r's repeat k is r * repeat + k
    measured: Measured
    samples: tuple[int, int]
    status: str = "ok"  # "ok", "failed" or "timeout"
    reason: str | None = None
    run: int = 0  # the whole cycle (`--runs M`) it belongs to, 0 for the first
    # The slice of the sampler's samples of its run's warm-up (None: all before `samples`).
    warmup_samples: tuple[int, int] | None = None
    rate: float | None = None  # the rate it was fed at (None: read at full speed)
    sustained: bool | None = None  # a trial of a rate search: whether it kept up
    verdict: str | None = None  # why (or why not)
    lag_trend_eps: float | None = None  # the lag's trend the trial was judged by (settled)


# The benchmark-phase fields of `Measured`, reset before each repeat.
_REPEAT_FIELDS = dict(
    end_checkpoint=None, restored_from=None, restored_id=None, t_submit=None, t_running=None,
    t_first=None, t_end=None, cpu_at_running=None, cpu_at_end=None, benchmark_events_seen=0,
    outage=None, releaser_cpu_s=None, rate_asked=None, latency=None, latency_left_out=0,
)  # fmt: skip
_REPEAT_PHASES = ("restore", "benchmark", "end-checkpoint")


def check_rate_feed(rate: float | None, engine: Engine) -> None:
    """UsageError when a rate is asked of an engine whose jobs cannot leave their feed to the
    protocol (`Capabilities.rate_feed`)."""
    if rate is not None and not engine.capabilities().rate_feed:
        raise UsageError(f"--rate: {engine.name} cannot feed a phase at a set rate")


def check_handoff(handoff: Handoff, options: ProtocolOptions) -> None:
    """An engine that keeps its state in place across the cut has no snapshot to restore:
    one benchmark phase per warm-up, at full speed, with its state (UsageError otherwise)."""
    if handoff is not Handoff.IN_PLACE:
        return
    for given, what in (
        (options.repeat != 1, f"--repeat {options.repeat}"),
        (options.search is not None, "a rate search"),
        (options.rate is not None, "--rate"),
        (not options.restore, "a benchmark phase without the warm-up's state"),
    ):
        if given:
            raise UsageError(
                f"{what}: this engine keeps its state in place across the phases (no snapshot "
                "to restore again): one benchmark phase per warm-up"
            )


def check_repeat(repeat: int, repeatable: bool, what: str = "--repeat") -> None:
    """The protocol's bounds on the number of benchmark phases per warm-up.

    Raises:
        UsageError: below 1, above MAX_REPEAT, or more than 1 on an engine that cannot
            restore one snapshot more than once.
    """
    if not 1 <= repeat <= MAX_REPEAT:
        raise UsageError(f"{what} must be between 1 and {MAX_REPEAT}, got {repeat}")
    if repeat > 1 and not repeatable:
        raise UsageError(
            f"{what} {repeat}: this engine cannot restore a checkpoint more than once "
            "(Capabilities.repeatable_restore); use 1"
        )


def check_runs(runs: int, what: str = "--runs") -> None:
    """The bounds on the number of whole cycles per query (UsageError outside 1..MAX_RUNS)."""
    if not 1 <= runs <= MAX_RUNS:
        raise UsageError(f"{what} must be between 1 and {MAX_RUNS}, got {runs}")


def job_spec(
    query: str,
    options: ProtocolOptions,
    source_dir: Path,
    work_dir: Path,
    restore: Snapshot | None = None,
    rate_fed: bool = False,
    latency: bool = False,
) -> JobSpec:
    """The JobSpec of one phase's job of `query` (`rate_fed`: the protocol releases its feed;
    `latency`: its rows are stamped, by the query's `metrics.latency` rule)."""
    return JobSpec(
        query=query,
        source=source_dir,  # a part folder: JobSpec takes it as its FileSource
        work_dir=work_dir,
        restore=restore,
        state_ttl=options.state_ttl,
        parallelism=options.parallelism,
        checkpoint_interval_s=options.checkpoint_interval_s,
        # Both phases read a never-ending source: no final watermark empties the windows,
        # and the phase ends are proved with checkpoints (docs/protocol.md).
        keep_source_open=True,
        sink=options.sink,
        collect_dir=options.collect_dir,
        rate_fed=rate_fed,
        latency=options.latency_stamps(query) if latency else None,
    )


def check_setup(setup: JobSetup) -> None:
    """The protocol's own bounds on a job's resolved setup, whatever path set it."""
    interval = setup.checkpoint_interval_s
    if interval is None or not 0 < interval <= MAX_CHECKPOINT_INTERVAL_S:
        shown = "off" if interval is None else format_seconds(interval)
        raise UsageError(
            f"the checkpoint interval must be above 0 and at most 30 s (the protocol's bound), "
            f"got {shown}"
        )


class QueryRun:
    """Drives one query; raises EngineError/QueryTimeoutError, leaving no job running."""

    def __init__(
        self,
        engine: Engine,
        query: str,
        parts: PhaseParts,
        work_dir: Path,
        options: ProtocolOptions,
        display: RunDisplay,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        search: TrialSearch | None = None,
    ) -> None:
        self.engine, self.query, self.parts = engine, query, parts
        self._parts = parts  # as given (a trial of a search reads its own benchmark layout)
        self.work_dir, self.options, self.display, self.clock = work_dir, options, display, clock
        self._work_root = work_dir  # each run of several works in its own directory under it
        self._sleep_for = sleep
        self.sampler = Sampler(engine, options.sample_interval_s, clock)
        self.tracker = PhaseTracker(clock=clock)
        self.measured = Measured(query=query, started_at=clock())
        self.deadline = self.measured.started_at + options.timeout_s
        self._jobs: list[Job] = []
        self.benchmark_job: Job | None = None  # kept for reading a COLLECT sink afterwards
        self._seen_checkpoints: set[tuple[str, int]] = set()
        self._restore_cpu: list[tuple[float, float]] = []  # (time, engine CPU s) while restoring
        self._kill_prompted = False
        self.releaser: Releaser | None = None
        self.search = search
        self._rate = options.rate  # the current benchmark phase's (a search sets each trial's)
        self._phase_eps: float | None = None  # the last phase's read rate (`EndWatch`)
        self.handoff = engine.capabilities().handoff
        check_handoff(self.handoff, options)
        self.measured.handoff = self.handoff
        self._kept: Job | None = None  # IN_PLACE: the warm-up job, going on into the benchmark
        check_rate_feed(options.rate, engine)
        if options.repeat != 1:
            check_repeat(options.repeat, engine.capabilities().repeatable_restore)
        if options.runs != 1:
            check_runs(options.runs)

    # -- the protocol ------------------------------------------------------------------------

    def execute(self) -> Measured:
        try:
            first_error = None
            for run in range(self.options.runs):
                first_error = self._cycle(run) or first_error
            m = self.measured
            if first_error is not None and not any(r.status == "ok" for r in m.repeats):
                raise first_error
            self._enter(Phase.CLEANUP)
            self._cleanup()
            self._enter(Phase.DONE)
        except BaseException:
            self.tracker.enter(Phase.FAILED)
            self._abort()
            raise
        return self.measured

    def _warmup_phase(self) -> None:
        self._enter(Phase.WARMUP, self.parts.warmup_events)
        job = self._submit(self.parts.warmup_dir, restore=None)
        self._wait_ready(job, Phase.WARMUP)
        self._wait_all_events(job, self.parts.warmup_events, Phase.WARMUP)
        self.settle(job, Phase.WARMUP)
        self._enter(Phase.PHASE_CHECKPOINT)
        cp = job.trigger_checkpoint(self._remaining())
        self._report_checkpoints(job)
        if cp.snapshot is None:
            raise EngineError(f"phase checkpoint {cp.id} has no snapshot to restore from")
        self.measured.phase_checkpoint = cp
        self.measured.warmup_checkpoints = job.checkpoints()
        self._enter(Phase.STOP)
        if self.handoff is Handoff.IN_PLACE:
            self._kept = job  # it goes on: its state crosses the cut where it is
        else:
            job.cancel()

    def _cycle(self, run: int) -> NexmarkError | None:
        """One whole cycle (`--runs M`: the `run`-th): a fresh warm-up in its own work
        directory, then its repeats; the first failure it recorded (None: none). With several
        runs a failed warm-up is recorded as each of its repeats failing, and the next run
        goes on; the query's timeout bounds each run's warm-up and first repeat."""
        m = self.measured
        if run:
            self.deadline = self.clock() + self.options.timeout_s
            self.work_dir = self._work_root / f"run-{run + 1}"
            m.phase_checkpoint, m.warmup_checkpoints = None, []
            self._reset_benchmark_fields()
        elif self.options.runs > 1:
            self.work_dir = self._work_root / "run-1"
        if self.options.runs > 1:
            self.display.message(f"  run {run + 1} of {self.options.runs}: a fresh warm-up")
        warmup_start = len(self.sampler.samples)
        try:
            self._warmup_phase()
        except NexmarkError as exc:
            if self.options.runs == 1:
                raise
            status = "timeout" if isinstance(exc, QueryTimeoutError) else "failed"
            self._cancel_running()
            self.display.message(f"  run {run + 1} warm-up {status}: {exc}")
            self.tracker.resume_at(Phase.END_CHECKPOINT)  # the next run warms up again
            at = len(self.sampler.samples)
            for _ in range(self.options.repeat):
                snapshot = copy.copy(m)
                snapshot.phases, snapshot.repeats = dict(m.phases), []
                m.repeats.append(RepeatMeasured(
                    len(m.repeats), snapshot, (at, at), status, f"warm-up {status}: {exc}",
                    run=run, warmup_samples=(warmup_start, at),
                ))  # fmt: skip
            return exc
        return self._repeats(run, (warmup_start, len(self.sampler.samples)))

    def _repeats(self, run: int = 0, warmup: tuple[int, int] | None = None) -> NexmarkError | None:
        """The benchmark phase `options.repeat` times, each restored from the same phase
        checkpoint. One repeat of one run fails as the query does; of several, a failed or
        timed-out repeat is recorded with its reason (its job cancelled) and the others go on;
        if every one fails, the first failure fails the query (`execute`). The query's timeout
        bounds the warm-up and the first repeat, and each further repeat on its own."""
        m, first_error, search = self.measured, None, self.search
        count = self.options.repeat if search is None else search.max_trials
        several = count * self.options.runs > 1
        for index in range(count):
            if search is not None:
                if search.done:
                    break
                self._rate = search.next_rate()
            if index or run:
                if index:  # a run's first repeat shares the warm-up's deadline
                    self.deadline = self.clock() + self.options.timeout_s
                self._reset_benchmark_fields()
            if search is not None:
                self.display.message(f"  trial {index + 1}: fed at {self._rate:,.0f} events/s")
            elif self.options.repeat > 1:
                self.display.message(f"  repeat {index + 1} of {self.options.repeat}")
            start = len(self.sampler.samples)
            status, reason = "ok", None
            try:
                if search is not None:
                    self._lay_out_for(self._rate)
                self._benchmark_phase()
            except NexmarkError as exc:
                if not several:
                    raise
                first_error = first_error or exc
                status = "timeout" if isinstance(exc, QueryTimeoutError) else "failed"
                reason = str(exc)
                self._cancel_running()
                self.display.message(f"  repeat {index + 1} {status}: {reason}")
                self.tracker.resume_at(Phase.END_CHECKPOINT)  # the next repeat restores again
            snapshot = copy.copy(m)
            snapshot.phases = dict(m.phases)
            snapshot.benchmark_checkpoints = list(m.benchmark_checkpoints)
            snapshot.repeats = []
            repeat = RepeatMeasured(
                len(m.repeats), snapshot, (start, len(self.sampler.samples)), status, reason,
                run=run, warmup_samples=warmup, rate=self._rate,
            )  # fmt: skip
            m.repeats.append(repeat)
            if search is not None:
                search.observe_repeat(repeat, self.sampler.samples[start:], self.parts)
                if repeat.verdict:
                    self.display.message(f"  trial {index + 1}: {repeat.verdict}")
        if search is not None:
            m.search = search
        return first_error

    def _lay_out_for(self, rate: float) -> None:
        """A trial reads the benchmark part laid out for its rate (`protocol.rate_layout`):
        generated before the phase, outside every figure it scores."""
        started = time.perf_counter()
        parts = self._parts.laid_out_for(rate, self._work_root / rate_layout.DIR)
        if parts.benchmark_dir != self.parts.benchmark_dir:
            files = len(parts.file_events["benchmark"])
            self.display.message(
                f"  the benchmark part laid out for it: {files:,} files, each time slice at "
                f"most 100 ms at the rate (generated in {time.perf_counter() - started:.1f} s)"
            )
        self.parts = parts

    def _reset_benchmark_fields(self) -> None:
        """Forget the last benchmark phase's observations (before the next one)."""
        m = self.measured
        for name, value in _REPEAT_FIELDS.items():
            setattr(m, name, value)
        m.benchmark_checkpoints = []
        m.release_log = []
        self._restore_cpu = []
        for phase in _REPEAT_PHASES:
            m.phases.pop(phase, None)

    def _cancel_running(self) -> None:
        for job in self._jobs:
            try:
                if not job.status().state.terminal:
                    job.cancel()
            except Exception:  # noqa: BLE001 - the engine may be gone; the next repeat says so
                pass

    def _benchmark_phase(self) -> None:
        m, cp = self.measured, self.measured.phase_checkpoint
        assert cp is not None and cp.snapshot is not None
        self._enter(Phase.RESTORE)
        m.t_submit = self.clock()
        if self._kept is not None:  # IN_PLACE: the same job reads the benchmark part next
            job, self._kept = self._kept, None
            job.continue_with(self.parts.benchmark_dir)
            m.job_options["benchmark"] = m.job_options.get("warmup", {})
        else:
            restore = cp.snapshot if self.options.restore else None
            job = self._submit(self.parts.benchmark_dir, restore)
        self.benchmark_job = job
        self._wait_ready(job, Phase.RESTORE)
        # The engine's own timestamp when it has one: the poll sees it ready late by its
        # interval and by the engine's status caches.
        seen = self.clock()
        exact = job.running_since()
        m.t_running = exact if exact is not None and m.t_submit <= exact <= seen else seen
        # The scored phase starts when the job is ready: its first sample is stamped "benchmark".
        first = self.sampler.sample(job, Phase.BENCHMARK.value, force=True)
        # CPU at t_running: the last restore poll taken by then (polled every 50 ms), so the
        # CPU spent between t_running and the poll that saw it counts too.
        before = [cpu for t, cpu in self._restore_cpu if t <= m.t_running]
        m.cpu_at_running = before[-1] if before else first.cpu_s
        if self.handoff is Handoff.IN_PLACE:
            self._confirm_in_place(job, cp)
        elif self.options.restore:
            self._confirm_restore(job, cp)
        self._enter(Phase.BENCHMARK, self.parts.benchmark_events)
        try:
            self._start_releaser(job)
            self._wait_first_event(job)
            self._wait_all_events(job, self.parts.benchmark_events, Phase.BENCHMARK)
        finally:
            self._stop_releaser()
        self.settle(job, Phase.BENCHMARK)
        self._enter(Phase.END_CHECKPOINT)
        end = job.trigger_checkpoint(self._remaining())
        m.t_end = end.ack_ts or self.clock()
        m.cpu_at_end = self.engine.cpu_seconds()
        m.end_checkpoint = end
        # (A job that went on from the warm-up also lists the warm-up's checkpoints.)
        m.benchmark_checkpoints = [
            c for c in job.checkpoints() if c.id != end.id and c.trigger_ts >= m.t_submit
        ]
        self._report_checkpoints(job)
        self._check_event_time(job)
        self._read_latency(job)
        self.before_stop(job)
        job.cancel()

    def _start_releaser(self, job: Job) -> None:
        """A rate-fed phase: release the job's feed from now on at the rate asked, on a thread
        of its own (or pumped by `_sleep` when the clock is injected, as in tests)."""
        rate = self._rate
        if rate is None:
            return
        feed = job.feed()
        if feed is None:
            raise EngineError("the rate-fed benchmark job handed over no feed to release")
        self.measured.rate_asked = rate
        self.releaser = Releaser(feed, rate, self.clock)
        if self._sleep_for is time.sleep:
            self.releaser.start()
        else:
            self.releaser.begin()

    def _stop_releaser(self) -> None:
        releaser, self.releaser = self.releaser, None
        if releaser is None:
            return
        releaser.stop()
        self.measured.release_log = list(releaser.log)
        self.measured.releases = lat.releases(releaser.steps, releaser.log)
        self.measured.releaser_cpu_s = releaser.cpu_s
        releaser.check()

    def _read_latency(self, job: Job) -> None:
        """A phase with stamped rows and a release to measure from: each row's latency."""
        m = self.measured
        rule = lat.rule(self.query)
        if not self.options.latency_on(self.engine, self.query) or rule is None:
            return
        stamps = job.latency_stamps()
        if m.releases:
            m.latency, m.latency_left_out = lat.latencies(stamps, rule, m.releases)
            spec = self.options.latency_stamps(self.query)
            m.latency_sample = spec.sample if spec else None

    def _check_event_time(self, job: Job) -> None:
        """After the scored phase (its end is recorded): an event-time operator that has still
        not received a watermark never fired a window or timer, so the phase did not do the
        query's work. Its first watermark may trail the data by a moment: wait a little."""
        until = self.clock() + EVENT_TIME_GRACE_S
        while job.awaits_watermark():
            if self.clock() >= until:
                raise EventTimeStalledError(
                    "no event-time operator of the benchmark job received a watermark: its "
                    "windows never fired, so the phase is not a valid measurement"
                )
            self._check_alive(job)
            self._sleep(0.2)

    def settle(self, job: Job, phase: Phase) -> None:
        """Between a phase's last event and its checkpoint: `settle_s` (0 in benchmark runs)."""
        self._sleep(self.options.settle_s)

    def before_stop(self, job: Job) -> None:
        """Called after the end checkpoint, before the cancel: a subclass reads results here."""

    # -- steps ---------------------------------------------------------------------------------

    def _enter(self, phase: Phase, events_total: int | None = None) -> None:
        self.tracker.enter(phase)
        self.measured.phases[phase.value] = self.tracker.started[phase.value]
        self.display.phase(phase.value, events_total)

    def _submit(self, source_dir: Path, restore: Snapshot | None) -> Job:
        spec = self.job_spec(source_dir, restore)
        check_setup(self.engine.job_setup(spec))
        job = self.engine.submit(spec)
        self._jobs.append(job)
        phase = "benchmark" if restore or source_dir == self.parts.benchmark_dir else "warmup"
        if job.setup is not None:
            self.measured.job_options[phase] = dict(job.setup.options)
            self.measured.state_ttl_s = job.setup.state_ttl_s
            self.measured.state_bound = job.setup.state_bound
        return job

    def job_spec(self, source_dir: Path, restore: Snapshot | None = None) -> JobSpec:
        rate_fed = self._rate is not None and source_dir == self.parts.benchmark_dir
        latency = self.options.latency_on(self.engine, self.query)
        return job_spec(
            self.query, self.options, source_dir, self.work_dir, restore, rate_fed, latency
        )

    def _wait_ready(self, job: Job, phase: Phase) -> None:
        """Poll quickly until the job is ready (the engine's definition, `Capabilities.ready`):
        this bounds the recovery time's resolution. A job that already finished its input was
        ready too. While restoring, each poll also notes the engine's CPU (for CPU at t_running)."""
        while True:
            if phase is Phase.RESTORE:
                self._restore_cpu.append((self.clock(), self.engine.cpu_seconds()))
            state = self._check_alive(job)
            if state in (JobState.READY, JobState.FINISHED):
                return
            self._note_first_event(job, phase)
            self._sleep(0.05)

    def _wait_all_events(self, job: Job, total: int, phase: Phase) -> None:
        """Sample about every second until the source has emitted `total` events, sooner near
        the end (`EndWatch`: the end checkpoint, and so `t_end`, follows the last event seen).
        A job may finish by itself once it has read its whole part (as Spark's availableNow
        queries do); finishing before is a failure."""
        expected = self._phase_eps
        if phase is Phase.BENCHMARK and self._rate is not None:  # fed: no faster than released
            expected = min(expected or self._rate, self._rate)
        watch = EndWatch(self.options.sample_interval_s, expected)
        fresh = False
        while True:
            state = self._check_alive(job)
            s = self.sampler.sample(job, phase.value, force=fresh or state is JobState.FINISHED)
            self._note_first_event(job, phase, s.events)
            self.display.events(s.events, s.cpu_s)
            self._report_checkpoints(job)
            if phase is Phase.BENCHMARK and self._failover_due(job, s.events):
                self._fail_over(job)
                continue
            # (A cached sample never newly shows the total: `s` is this poll's, or older.)
            if s.events >= total and not self._failover_pending(phase):
                self._phase_eps = watch.eps or self._phase_eps  # the next phase's first guess
                if phase is Phase.BENCHMARK:
                    self.measured.benchmark_events_seen = s.events
                self._check_readers(job, phase)
                return
            if state is JobState.FINISHED:
                raise EngineError(
                    f"job finished in phase {phase.value} after {s.events:,} of {total:,} events"
                )
            delay = watch.delay(s.wall, s.events, total - s.events, s.poll_time)
            fresh = watch.fresh(delay)
            self._sleep(delay)

    # -- failover (docs/failover.md) ------------------------------------------------------------

    def _failover_pending(self, phase: Phase) -> bool:
        """An injected failover must happen before the benchmark phase may end."""
        return (
            phase is Phase.BENCHMARK
            and self.options.failover is FailoverSupport.INJECT
            and self.measured.outage is None
        )

    def _failover_due(self, job: Job, events: int) -> bool:
        """Time to kill (INJECT), or a failure someone else caused has shown (OBSERVE)."""
        if self.options.failover is None or self.measured.outage is not None:
            return False
        if self.options.failover is FailoverSupport.OBSERVE:
            self._prompt_kill(events)
            return restarted(job, job.status().state, 0)
        assert self.measured.t_running is not None
        return kill_point_reached(
            job, events, self.parts.benchmark_events, self.options.failover_at,
            self.measured.t_running,
        )  # fmt: skip

    def _prompt_kill(self, events: int) -> None:
        """OBSERVE: the engine cannot kill its workers here; ask once, at the kill point."""
        if (
            not self._kill_prompted
            and events >= self.options.failover_at * self.parts.benchmark_events
        ):
            self._kill_prompted = True
            self.display.message("  failover: kill a worker of the job now (docs/failover.md)")

    def _fail_over(self, job: Job) -> None:
        """Kill (or see killed) the job's worker; wait until the engine noticed and the job
        runs again. Not recovering before the query's deadline fails the query."""
        support = self.options.failover
        assert support is not None
        outage = self.measured.outage = Outage(support)
        # Observed: the failure has already shown, so the restart to wait for is the first.
        before = job.recovery() if support is FailoverSupport.INJECT else None
        restarts = before.restarts if before else 0
        if support is FailoverSupport.INJECT:
            outage.events_at_kill = job.events_emitted()
            killed = job.inject_failure()
            outage.t_kill, outage.killed = killed.at, killed.what
            if killed.events_read is not None:
                outage.events_at_kill = max(outage.events_at_kill, killed.events_read)
            self.display.message(f"  failover: killed {killed.what}")
        else:
            outage.events_at_kill = (
                self.sampler.samples[-1].events if self.sampler.samples else None
            )
        try:
            self._wait_outage(job, outage, restarts)
        except FailoverTimeout:
            raise EngineError(
                f"failover: {self.query} did not recover within its {self.options.timeout_s:g} s "
                f"timeout ({self._outage_state(outage)})"
            ) from None

    def _wait_outage(self, job: Job, outage: Outage, restarts: int) -> None:
        """Poll until the engine noticed the failure, then until the job runs again past
        `restarts`; note both times and what the restart restored."""
        while outage.t_detected is None:
            state, seen = self._outage_poll(job)
            if restarted(job, state, restarts):
                recovery = job.recovery()
                exact = recovery.failed_at if recovery else None
                low = outage.t_kill if outage.t_kill is not None else seen - 60
                outage.t_detected = exact if exact is not None and low <= exact <= seen else seen
        while True:
            state, seen = self._outage_poll(job)
            recovery = job.recovery()
            if state is JobState.READY and (recovery is None or recovery.restarts > restarts):
                break
        # The engine's own timestamp where it has one: the poll sees it late.
        exact = job.running_since()
        outage.t_restored = (
            exact if exact is not None and outage.t_detected <= exact <= seen else seen
        )
        # The restored position may be published a moment after the tasks run.
        for _ in range(50):
            outage.recovery = job.recovery()
            if outage.recovery is None or outage.recovery.events_at_restore is not None:
                break
            self._sleep(0.1)
        self.sampler.sample(job, Phase.BENCHMARK.value, force=True)
        self.display.message(f"  failover: running again ({self._outage_state(outage)})")

    def _outage_poll(self, job: Job) -> tuple[JobState, float]:
        """One poll of the outage, every 50 ms: the state and when it was seen. Its samples
        are stamped as the outage's."""
        self._sleep(0.05)
        if self.clock() > self.deadline:
            raise FailoverTimeout
        seen = self.clock()
        state = self._check_alive(job)
        self.sampler.sample(job, OUTAGE_PHASE)
        return state, seen

    @staticmethod
    def _outage_state(outage: Outage) -> str:
        origin = outage.origin
        parts = [f"killed {outage.killed}" if outage.killed else "failure observed"]
        for name, t in (("detected", outage.t_detected), ("running", outage.t_restored)):
            if t is not None and origin is not None:
                parts.append(f"{name} after {t - origin:.2f} s")
            elif t is None:
                parts.append(f"not {name} yet")
        return ", ".join(parts)

    def _check_readers(self, job: Job, phase: Phase) -> None:
        """Each source reader read exactly one file: a reader that read two one after the other
        went back in event time, and the watermark (the minimum over readers) then skipped
        events as late. It can happen when one reader finishes a small file before another
        reader has started (a loaded machine); the phase is then not valid."""
        if phase is Phase.BENCHMARK and self._rate is not None:
            return  # a reader reads one file of each released slice: the counts are sums
        expected = sorted(self.parts.file_events.get(phase.value, []))
        counts = job.events_per_reader()
        if not expected or counts is None or sorted(counts) == expected:
            return
        raise ReaderSkewError(
            f"the source readers read {counts} events where the part's files hold {expected}: "
            "one reader read two files, so the phase's event time was not in order"
        )

    def _wait_first_event(self, job: Job, limit_s: float = 5.0) -> None:
        """Poll quickly for the first benchmark event (for up to `limit_s`), so the gap
        between the job being ready and the first read is recorded to ~50 ms + the engine's
        metric refresh, not to the 1 s sampling interval."""
        until = self.clock() + limit_s
        while self.measured.t_first is None and self.clock() < until:
            self._check_alive(job)
            self._note_first_event(job, Phase.BENCHMARK)
            if self.measured.t_first is None:
                self._sleep(0.05)

    def _note_first_event(self, job: Job, phase: Phase, events: int | None = None) -> None:
        if phase is Phase.WARMUP or self.measured.t_first is not None:
            return
        if (events if events is not None else job.events_emitted()) > 0:
            self.measured.t_first = self.clock()

    def _confirm_restore(self, job: Job, cp: CheckpointInfo) -> None:
        restored = job.restored_from()
        # An engine may publish the restore a moment after the tasks run: ask for a while.
        for _ in range(50):
            if restored is not None:
                break
            self._check_alive(job)
            self._sleep(0.1)
            restored = job.restored_from()
        if restored is None:
            raise EngineError("the restored job reports no restored state")
        assert cp.snapshot is not None
        if not cp.snapshot.same_as(restored):
            raise EngineError(
                f"restored from {restored.ref or restored.id}, "
                f"not from the phase checkpoint {cp.id}"
            )
        self.measured.restored_from = restored.ref or cp.snapshot.ref
        self.measured.restored_id = restored.id

    def _confirm_in_place(self, job: Job, cp: CheckpointInfo) -> None:
        """IN_PLACE: the state crossed the cut in the job itself, which must not have
        restarted since the phase checkpoint (a restart would have restored some other
        checkpoint, or none)."""
        recovery = job.recovery()
        if recovery is not None and recovery.restarts:
            raise EngineError(
                f"the job restarted {recovery.restarts} time(s) across the cut: its state "
                "did not stay in place"
            )
        self.measured.restored_from = f"in place (job {job.id}, after checkpoint {cp.id})"
        self.measured.restored_id = None

    def _check_alive(self, job: Job) -> JobState:
        """The job's state; raise on a timeout, or if it failed or was cancelled. FINISHED is
        returned: whether that is early is for the caller to say."""
        if self.clock() > self.deadline:
            raise QueryTimeoutError(
                f"{self.query} did not finish within {self.options.timeout_s:g} s "
                f"(in phase {self.tracker.phase.value})"
            )
        status = job.status()
        if status.state in (JobState.FAILED, JobState.CANCELED):
            raise EngineError(
                f"job {status.state.value} in phase {self.tracker.phase.value}"
                + (f": {status.failure}" if status.failure else "")
            )
        return status.state

    def _report_checkpoints(self, job: Job) -> None:
        for cp in job.checkpoints():
            key = (job.id, cp.id)
            if cp.status is not CheckpointStatus.IN_PROGRESS and key not in self._seen_checkpoints:
                self._seen_checkpoints.add(key)
                self.display.checkpoint(
                    cp.id, cp.status.value, cp.duration_s, cp.checkpointed_bytes
                )

    def _remaining(self) -> float:
        left = self.deadline - self.clock()
        if left <= 0:
            raise QueryTimeoutError(f"{self.query} ran out of its {self.options.timeout_s:g} s")
        return left

    def _sleep(self, seconds: float) -> None:
        seconds = max(0.0, min(seconds, self.deadline - self.clock()))
        releaser = self.releaser
        if releaser is None or releaser.threaded:
            self._sleep_for(seconds)
            return
        until = self.clock() + seconds
        # A pumped releaser (injected clock): sleep to each step due before `until`.
        while True:
            due = releaser.next_due()
            self._sleep_for(max(0.0, min(until, due if due is not None else until) - self.clock()))
            releaser.release_due()
            if self.clock() >= until:
                return

    def _abort(self) -> None:
        """Best effort: cancel whatever still runs, keep nothing half-done on disk."""
        for job in self._jobs:
            try:
                if not job.status().state.terminal:
                    job.cancel()
            except Exception:  # noqa: BLE001 - the engine may be gone; close() cleans up
                pass
        self._cleanup()

    def _cleanup(self) -> None:
        shutil.rmtree(self._work_root / rate_layout.DIR, ignore_errors=True)  # data, not state
        if not self.options.keep_checkpoints:
            shutil.rmtree(self._work_root, ignore_errors=True)
