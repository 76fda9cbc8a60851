"""A query's own steps in its timed phases (`timed.PhaseSteps`): the warm-up's and a benchmark
phase's. Each polls through the run's `Waits`, samples through its `Sampler` and writes its
observations into its own phase's record (`observe`), nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from nexmark.engines.base import CheckpointInfo, Engine, Handoff, Job, JobState
from nexmark.errors import EngineError
from nexmark.metrics import latency as lat
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query import proofs
from nexmark.protocol.query.failover_watch import FailoverWatch
from nexmark.protocol.query.observe import BenchmarkObserved, Measured
from nexmark.protocol.query.phases import Phase
from nexmark.protocol.query.polling import EndWatch
from nexmark.protocol.query.timed import PhaseSteps, Timing
from nexmark.protocol.query.waits import Waits
from nexmark.workload.feed import Releaser

if TYPE_CHECKING:  # (the Kafka client is imported only by a run that reads Kafka)
    from nexmark.protocol.preparation.kafka import KafkaParts

FIRST_EVENT_WAIT_S = 5.0  # how long a benchmark phase polls quickly for its first event


class QueryRun(Protocol):
    """What the steps use of the query's run (`query_run.QueryRun`)."""

    engine: Engine
    options: ProtocolOptions
    parts: PhaseParts
    measured: Measured
    handoff: Handoff
    clock: Callable[[], float]
    waits: Waits
    sampler: Sampler
    display: RunDisplay
    failover: FailoverWatch | None
    kafka: KafkaParts | None  # --source kafka: the loaded parts' topics and their broker
    rate: float | None  # the benchmark phase's feeding rate (None: at full speed)
    phase_eps: float | None  # the last phase's read rate
    threaded_release: bool  # a real clock: the releaser runs on its own thread

    def enter(
        self, phase: Phase, events_total: int | None = None, phases: dict | None = None
    ) -> None: ...

    def settle(self, job: Job, phase: Phase) -> None: ...

    def report_checkpoints(self, job: Job) -> None: ...


class WarmupSteps(PhaseSteps):
    """The warm-up: read at full speed, untimed; its checkpoint is the phase checkpoint."""

    phase = Phase.WARMUP

    def __init__(self, run: QueryRun) -> None:
        self.run = run

    def read_all(self, job: Job) -> None:
        wait_all_events(self.run, job, self.run.parts.warmup_events, self.phase, None)

    def before_checkpoint(self, job: Job) -> None:
        self.run.settle(job, self.phase)
        self.run.enter(Phase.PHASE_CHECKPOINT, phases=self.run.measured.warmup.phases)

    def checkpoint(self, job: Job, timeout_s: float) -> CheckpointInfo:
        # Its snapshot must outlive the job's later checkpoints; a job of which nothing more
        # is asked ends at it (`QueryRun.stops_at_cut`).
        return job.trigger_phase_checkpoint(timeout_s, stop=self.run.stops_at_cut())


class BenchmarkSteps(PhaseSteps):
    """A benchmark phase: restored (or handed on), proved, timed from ready to its end
    checkpoint; fed at a rate when one is set."""

    phase = Phase.BENCHMARK

    def __init__(self, run: QueryRun, seen: BenchmarkObserved) -> None:
        self.run, self.seen = run, seen
        self.restore_cpu: list[tuple[float, float]] = []  # (time, engine CPU s) while restoring

    def polling(self, job: Job) -> None:
        # Each restore poll notes the engine's CPU (for CPU at t_running), and when it read it.
        cpu = self.run.engine.cpu_seconds()
        self.restore_cpu.append((self.run.clock(), cpu))

    def not_ready(self, job: Job) -> None:
        note_first_event(self.run, self.seen, job)

    def running(self, job: Job, timing: Timing) -> None:
        run, seen = self.run, self.seen
        seen.t_running = timing.t_running
        # The scored phase starts when the job is ready: its first sample is stamped "benchmark".
        first = run.sampler.sample(job, Phase.BENCHMARK.value, force=True)
        run.sampler.read_operators(job)  # where its time goes, from here on
        # CPU at t_running: the last restore poll taken by then (polled every 50 ms), so the
        # CPU spent between t_running and the poll that saw it counts too.
        before = [(t, cpu) for t, cpu in self.restore_cpu if t <= (seen.t_running or 0)]
        seen.cpu_running_read_at, seen.cpu_at_running = (
            before[-1] if before else (first.cpu_time, first.cpu_s)
        )
        if run.kafka is not None:  # the broker's CPU, apart from the engine's
            seen.source_cpu_at_running = run.kafka.cpu_seconds()
        cp = run.measured.phase_checkpoint
        assert cp is not None
        if run.handoff is Handoff.IN_PLACE:
            proofs.confirm_in_place(job, cp, seen)
        elif run.options.restore:
            proofs.confirm_restore(job, cp, run.waits, seen)
        run.enter(Phase.BENCHMARK, run.parts.benchmark_events, seen.phases)
        self._start_releaser(job)

    def read_all(self, job: Job) -> None:
        until = self.run.clock() + FIRST_EVENT_WAIT_S
        # Polled quickly: the gap between ready and the first read is then recorded to ~50 ms
        # and the engine's metric refresh, not to the 1 s sampling interval.
        while self.seen.t_first is None and self.run.clock() < until:
            self.run.waits.alive(job)
            note_first_event(self.run, self.seen, job)
            if self.seen.t_first is None:
                self.run.waits.sleep(0.05)
        wait_all_events(self.run, job, self.run.parts.benchmark_events, self.phase, self.seen)

    def done_reading(self, job: Job) -> None:
        releaser, self.run.waits.releaser = self.run.waits.releaser, None
        if releaser is None:
            return
        releaser.stop()
        self.seen.release_log = list(releaser.log)
        self.seen.releases = lat.releases(releaser.steps, releaser.log)
        self.seen.releaser_cpu_s = releaser.cpu_s
        releaser.check()

    def before_checkpoint(self, job: Job) -> None:
        self.run.settle(job, self.phase)
        self.run.enter(Phase.END_CHECKPOINT, phases=self.seen.phases)

    def _start_releaser(self, job: Job) -> None:
        """A rate-fed phase: release the job's feed from now on at the rate asked, on a thread
        of its own (or pumped by `Waits.sleep` when the clock is injected, as in tests)."""
        rate = self.run.rate
        if rate is None:
            return
        feed = job.feed()
        if feed is None:
            raise EngineError("the rate-fed benchmark job handed over no feed to release")
        self.seen.rate_asked = rate
        releaser = self.run.waits.releaser = Releaser(feed, rate, self.run.clock)
        if self.run.threaded_release:
            releaser.start()
        else:
            releaser.begin()


def note_first_event(
    run: QueryRun, seen: BenchmarkObserved, job: Job, events: int | None = None
) -> None:
    """The first time a benchmark job is seen to have read an event."""
    if seen.t_first is not None:
        return
    if (events if events is not None else job.events_emitted()) > 0:
        seen.t_first = run.clock()


def wait_all_events(
    run: QueryRun, job: Job, total: int, phase: Phase, seen: BenchmarkObserved | None
) -> None:
    """Sample about every second until the source has emitted `total` events, sooner near
    the end (`EndWatch`: the end checkpoint, and so `t_end`, follows the last event seen).
    A job may finish by itself once it has read its whole part (as Spark's availableNow
    queries do); finishing before is a failure. `seen`: a benchmark phase's observations."""
    expected = run.phase_eps
    fed = seen is not None and run.rate is not None
    if fed:  # no faster than released
        expected = min(expected or run.rate, run.rate)
    watch = EndWatch(run.options.sample_interval_s, expected)
    # (a benchmark phase's failover: due once, then done)
    failover = run.failover if seen is not None else None
    fresh = False
    while True:
        state = run.waits.alive(job)
        s = run.sampler.sample(job, phase.value, force=fresh or state is JobState.FINISHED)
        if seen is not None:
            note_first_event(run, seen, job, s.events)
        run.display.events(s.events, s.cpu_s, s.cpu_time)
        run.report_checkpoints(job)
        watching = failover is not None and seen is not None and seen.outage is None
        if watching and failover.due(job, s.events, run.parts.benchmark_events, seen.t_running):
            failover.fail_over(job, seen, run.parts.benchmark_events)
            continue
        # (A cached sample never newly shows the total: `s` is this poll's, or older.)
        pending = watching and failover.pending(seen.outage)
        if s.events >= total and not pending:
            run.phase_eps = watch.eps or run.phase_eps  # the next phase's first guess
            if seen is not None:
                seen.benchmark_events_seen = s.events
            proofs.check_readers(job, phase.value, run.parts, fed, run.kafka)
            return
        if state is JobState.FINISHED:
            raise EngineError(
                f"job finished in phase {phase.value} after {s.events:,} of {total:,} events"
            )
        delay = watch.delay(s.wall, s.events, total - s.events, s.poll_time)
        fresh = watch.fresh(delay)
        if seen is not None:  # a scored phase: where its time goes, within the wait
            delay = run.sampler.read_operators(job, delay)
        run.waits.sleep(delay)
