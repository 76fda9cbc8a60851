"""One query through the two phases of docs/protocol.md, on any engine behind `Engine`.

warm-up (source alive at the cut) -> phase checkpoint -> cancel -> restore its snapshot on the
benchmark part -> proof of restore -> benchmark phase -> end checkpoint (all events fully
processed) -> cleanup.
Only the benchmark phase is scored. The engine is never asked what it is.

`QueryRun` keeps the loop: runs x (a warm-up, then its repeats or a search's trials). Each
phase is one `timed.timed_phase` with this module's steps; the proofs are in `proofs`, the
failover watch in `failover_watch`, the waiting in `waits`, what is observed in `observe`.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nexmark.engines.base import (
    CheckpointInfo,
    CheckpointStatus,
    Engine,
    FailoverSupport,
    Handoff,
    Job,
    JobSpec,
    JobState,
    SinkKind,
    Snapshot,
)
from nexmark.errors import EngineError, NexmarkError, QueryTimeoutError
from nexmark.metrics import latency as lat
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.preparation import rate_layout
from nexmark.protocol.preparation.checks import (
    check_capabilities,
    check_setup,
    job_spec,
)
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query import proofs
from nexmark.protocol.query.failover_watch import FailoverWatch
from nexmark.protocol.query.observe import (
    BenchmarkObserved,
    Measured,
    RepeatMeasured,
    TrialSearch,
    WarmupObserved,
)
from nexmark.protocol.query.phase_steps import BenchmarkSteps, WarmupSteps
from nexmark.protocol.query.phases import Phase, PhaseTracker
from nexmark.protocol.query.profiled import ScoredProfile
from nexmark.protocol.query.timed import timed_phase
from nexmark.protocol.query.waits import Waits
from nexmark.results import steady

if TYPE_CHECKING:  # (the Kafka client is imported only by a run that reads Kafka)
    from nexmark.protocol.preparation.kafka import KafkaParts

# (the errors a run raises when it is not valid, for the callers that tell them apart)
InvalidRunError = proofs.InvalidRunError
ReaderSkewError = proofs.ReaderSkewError
EventTimeStalledError = proofs.EventTimeStalledError
LateRecordsError = proofs.LateRecordsError


# The largest state (its checkpoint's full size) whose logical size is measured at the cut and
# at the end: a canonical savepoint of 512 MB takes seconds on this project's 2-core machine.
LOGICAL_MAX_BYTES = 512 * 2**20


class QueryRun:
    """Drives one query; raises EngineError/QueryTimeoutError, leaving no job running.

    `failover` is what the engine answered when asked to fail over (`Engine.enable_failover`;
    None: no failover run): it travels beside the options, which say only where to kill."""

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
        failover: FailoverSupport | None = None,
        profile: ScoredProfile | None = None,
        kafka: KafkaParts | None = None,
    ) -> None:
        check_capabilities(engine, options)
        self.engine, self.query, self.parts = engine, query, parts
        self._parts = parts  # as given (a trial of a search reads its own benchmark layout)
        self.work_dir, self.options, self.display, self.clock = work_dir, options, display, clock
        self._work_root = work_dir  # each run of several works in its own directory under it
        self.threaded_release = sleep is time.sleep  # an injected clock pumps the releaser
        self.sampler = Sampler(engine, options.sample_interval_s, clock)
        self.tracker = PhaseTracker(clock=clock)
        self.handoff = engine.capabilities().handoff
        self.measured = Measured(query=query, started_at=clock(), handoff=self.handoff)
        self.waits = Waits(query, options.timeout_s, clock, sleep, lambda: self.tracker.phase.value)
        self.waits.deadline = self.measured.started_at + options.timeout_s
        self._jobs: list[Job] = []
        self.benchmark_job: Job | None = None  # kept for reading a COLLECT sink afterwards
        self._seen_checkpoints: set[tuple[str, int]] = set()
        self.search = search
        self.rate = options.rate  # the current benchmark phase's (a search sets each trial's)
        self.phase_eps: float | None = None  # the last phase's read rate (`EndWatch`)
        self.failover = (
            None
            if failover is None
            else FailoverWatch(failover, options.failover_at, self.waits, self.sampler, display)
        )
        self._kept: Job | None = None  # IN_PLACE: the warm-up job, going on into the benchmark
        self.profile = profile  # sampled around each scored repeat (`--profile`)
        self.kafka = kafka  # --source kafka: the loaded parts' topics and their broker

    @property
    def deadline(self) -> float:
        return self.waits.deadline

    # -- the loop: runs x (warm-up, repeats | trials) -----------------------------------------

    def execute(self) -> Measured:
        try:
            first_error = None
            for run in range(self.options.runs):
                first_error = self._cycle(run) or first_error
            m = self.measured
            if first_error is not None and not any(r.status == "ok" for r in m.repeats):
                raise first_error
            if self.profile is not None:  # (written after the last repeat: outside them all)
                m.profile = self.profile.finish()
            self.enter(Phase.CLEANUP, phases=m.ended)
            self._cleanup()
            self.enter(Phase.DONE, phases=m.ended)
        except BaseException as exc:
            self.tracker.enter(Phase.FAILED)
            if isinstance(exc, KeyboardInterrupt):  # a loaded machine cancels in tens of s
                self.display.message("stopping: cancelling the running job (Ctrl-C again: now)")
            self._abort()
            raise
        return self.measured

    def _cycle(self, run: int) -> NexmarkError | None:
        """One whole cycle (`--runs M`: the `run`-th): a fresh warm-up in its own work
        directory, then its repeats; the first failure it recorded (None: none). With several
        runs a failed warm-up is recorded as each of its repeats failing, and the next run
        goes on; the query's timeout bounds each run's warm-up and first repeat."""
        m, runs = self.measured, self.options.runs
        m.warmup, m.benchmark = WarmupObserved(), BenchmarkObserved()
        if run:
            self.waits.renew()
        if runs > 1:
            self.work_dir = self._work_root / f"run-{run + 1}"
            self.display.message(f"  run {run + 1} of {runs}: a fresh warm-up")
        warmup_start = len(self.sampler.samples)
        try:
            self._warmup_phase()
        except NexmarkError as exc:
            if runs == 1:
                raise
            status = "timeout" if isinstance(exc, QueryTimeoutError) else "failed"
            self._cancel_running()
            self.display.message(f"  run {run + 1} warm-up {status}: {exc}")
            self.tracker.resume_at(Phase.END_CHECKPOINT)  # the next run warms up again
            at = len(self.sampler.samples)
            for _ in range(self.options.repeat):
                m.repeats.append(RepeatMeasured(
                    len(m.repeats), m.of_repeat(BenchmarkObserved()), (at, at), status,
                    f"warm-up {status}: {exc}", run=run, warmup_samples=(warmup_start, at),
                ))  # fmt: skip
            return exc
        return self._repeats(run, (warmup_start, len(self.sampler.samples)))

    def _repeats(self, run: int, warmup: tuple[int, int]) -> NexmarkError | None:
        """The benchmark phase `options.repeat` times (or a search's trials), each restored
        from the same phase checkpoint. One repeat of one run fails as the query does; of
        several, a failed or timed-out repeat is recorded with its reason (its job cancelled)
        and the others go on; if every one fails, the first failure fails the query
        (`execute`). The query's timeout bounds the warm-up and the first repeat, and each
        further repeat on its own."""
        m, first_error, search = self.measured, None, self.search
        count = self.options.repeat if search is None else search.max_trials
        several = count * self.options.runs > 1
        for index in range(count):
            if search is not None and search.done:
                break
            if index:  # a run's first repeat shares the warm-up's deadline
                stale = self._restore_expired() if search is None else None
                if stale is not None:
                    self._skip_repeats(index, count, stale, run, warmup)
                    break
                self.waits.renew()
            m.benchmark = BenchmarkObserved()  # this phase's observations, written by it alone
            self._announce(index)
            start = len(self.sampler.samples)
            status, reason = "ok", None
            try:
                if search is not None:
                    self._lay_out_for(self.rate)
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
            repeat = RepeatMeasured(
                len(m.repeats), m.of_repeat(m.benchmark), (start, len(self.sampler.samples)),
                status, reason, run=run, warmup_samples=warmup, rate=self.rate,
            )  # fmt: skip
            m.repeats.append(repeat)
            if search is not None:
                search.observe_repeat(repeat, self.sampler.samples[start:], self.parts)
                if repeat.verdict:
                    self.display.message(f"  trial {index + 1}: {repeat.verdict}")
        if search is not None:
            m.search = search
        return first_error

    def _restore_expired(self) -> str | None:
        """Why a further repeat would not start from the warm-up's steady state (None: it
        would): a processing-time state TTL keeps running while the phase checkpoint waits, so
        each repeat restores an older state, and past the growth bound's share of the TTL the
        phase would refill its state instead of running at steady size
        (`steady.repeat_skip_reason`)."""
        warm = self.measured.warmup
        cut = warm.phases.get("phase-checkpoint")
        age = None if cut is None else self.clock() - cut
        return steady.repeat_skip_reason(self.query, age, warm.state_ttl_s)

    def _skip_repeats(
        self, index: int, count: int, reason: str, run: int, warmup: tuple[int, int]
    ) -> None:
        """Record repeats `index`..`count - 1` as skipped, with why (never left out silently)."""
        m, at = self.measured, len(self.sampler.samples)
        which = f"repeat {count}" if index + 1 == count else f"repeats {index + 1}-{count}"
        self.display.message(f"  {which} skipped: {reason}")
        for _ in range(index, count):
            m.repeats.append(RepeatMeasured(
                len(m.repeats), m.of_repeat(BenchmarkObserved()), (at, at), "skipped", reason,
                run=run, warmup_samples=warmup,
            ))  # fmt: skip

    def _announce(self, index: int) -> None:
        """A trial's rate (picked now), or which repeat of how many."""
        if self.search is not None:
            self.rate = self.search.next_rate()
            self.display.message(f"  trial {index + 1}: fed at {self.rate:,.0f} events/s")
        elif self.options.repeat > 1:
            self.display.message(f"  repeat {index + 1} of {self.options.repeat}")

    def _lay_out_for(self, rate: float | None) -> None:
        """A trial reads the benchmark part laid out for its rate (`preparation.rate_layout`):
        generated before the phase, outside every figure it scores."""
        assert rate is not None
        started = time.perf_counter()
        parts = self._parts.laid_out_for(rate, self._work_root / rate_layout.DIR)
        if parts.benchmark_dir != self.parts.benchmark_dir:
            files = len(parts.file_events["benchmark"])
            self.display.message(
                f"  the benchmark part laid out for it: {files:,} files, each time slice at "
                f"most 100 ms at the rate (generated in {time.perf_counter() - started:.1f} s)"
            )
        self.parts = parts

    # -- the two phases ------------------------------------------------------------------------

    def _warmup_phase(self) -> None:
        seen = self.measured.warmup
        self.enter(Phase.WARMUP, self.parts.warmup_events, seen.phases)
        steps = WarmupSteps(self)
        timing = timed_phase(self.engine, self.waits, lambda: self._submit("warmup", None), steps)
        cp = timing.end
        assert cp is not None and steps.job is not None
        self.report_checkpoints(steps.job)
        if cp.snapshot is None:
            raise EngineError(f"phase checkpoint {cp.id} has no snapshot to restore from")
        seen.phase_checkpoint = cp
        # The phase ends at its checkpoint: a periodic one the job takes after it (while its
        # logical size is measured) is none of the warm-up's.
        seen.checkpoints = [c for c in steps.job.checkpoints() if c.trigger_ts < cp.trigger_ts]
        seen.warmup_others = timing.others
        kafka = self.kafka
        if kafka is not None:  # the restore proof on offsets: what the phase checkpoint holds
            warm = kafka.source("warmup")
            seen.offsets_proved = proofs.check_offsets(
                steps.job, {warm.topic: list(warm.counts)}, self.waits, "the phase checkpoint"
            )
        seen.logical_bytes_at_cut = self._logical_state(steps.job, cp)
        self.enter(Phase.STOP, phases=seen.phases)
        if self.handoff is Handoff.IN_PLACE:
            self._kept = steps.job  # it goes on: its state crosses the cut where it is
        else:
            steps.job.cancel()

    def _benchmark_phase(self) -> None:
        seen = self.measured.benchmark
        self.enter(Phase.RESTORE, phases=seen.phases)
        steps = BenchmarkSteps(self, seen)
        if self.profile is not None:  # from before the restore to after the end checkpoint
            self.profile.resume()
        try:
            timing = timed_phase(self.engine, self.waits, self._benchmark_job, steps)
        finally:
            if self.profile is not None:
                self.profile.pause()
        job, end = steps.job, timing.end
        assert job is not None and end is not None
        seen.t_end, seen.cpu_at_end, seen.end_checkpoint = timing.t_end, timing.cpu_at_end, end
        seen.cpu_end_read_at = timing.cpu_end_read_at
        seen.benchmark_others = timing.others
        kafka = self.kafka
        if kafka is not None:
            seen.source_cpu_at_end = kafka.cpu_seconds()
            # The restored job holds the warm-up topic's end offsets (its restored readers'),
            # and its end checkpoint the benchmark topic's: it read exactly the benchmark part.
            expected = {s.topic: list(s.counts) for s in kafka.sources.values()}
            if self.options.restore:
                seen.benchmark_offsets_proved = proofs.check_offsets(
                    job, expected, self.waits, "the end checkpoint"
                )
        # (A job that went on from the warm-up also lists the warm-up's checkpoints.)
        seen.benchmark_checkpoints = [  # (nor one after the end checkpoint the benchmark's)
            c
            for c in job.checkpoints()
            if c.id != end.id and (seen.t_submit or 0) <= c.trigger_ts < end.trigger_ts
        ]
        self.report_checkpoints(job)
        if self.measured.warmup.logical_bytes_at_cut is not None:
            seen.logical_bytes_at_end = self._logical_state(job, end)
        proofs.check_event_time(job, self.waits)
        proofs.check_no_late_records(job, rate_fed=self.rate is not None)
        self._read_latency(job, seen)
        self.before_stop(job)
        job.cancel()

    def _benchmark_job(self) -> Job:
        """The benchmark phase's job: restored from the phase checkpoint, or (IN_PLACE) the
        warm-up's going on with the benchmark part."""
        seen, cp = self.measured.benchmark, self.measured.phase_checkpoint
        assert cp is not None and cp.snapshot is not None
        seen.t_submit = self.clock()
        if self._kept is not None:
            job, self._kept = self._kept, None
            job.continue_with(self.parts.source("benchmark", self.kafka))
            warm = self.measured.warmup
            seen.job_options, seen.state_bound = dict(warm.job_options or {}), warm.state_bound
            seen.state_ttl_s = warm.state_ttl_s
        else:
            restore = cp.snapshot if self.options.restore else None
            job = self._submit("benchmark", restore)
        self.benchmark_job = job
        return job

    def _read_latency(self, job: Job, seen: BenchmarkObserved) -> None:
        """A phase with stamped rows and a release to measure from: each row's latency."""
        rule = lat.rule(self.query)
        if not self.options.latency_on(self.engine, self.query) or rule is None:
            return
        stamps = job.latency_stamps()
        if seen.releases:
            seen.latency, seen.latency_left_out = lat.latencies(stamps, rule, seen.releases)
            spec = self.options.latency_stamps(self.query)
            seen.latency_sample = spec.sample if spec else None

    def _measures_logical_state(self) -> bool:
        """Whether a phase's logical size is measured at all. Not for a job that writes files:
        a sink commits them when a snapshot completes, and a savepoint between its end
        checkpoint and its cancel was seen to fail it (Flink's file sink compacting the
        latency stamps); verify's rows could be published twice."""
        writes_files = self.options.sink is SinkKind.COLLECT
        return not (writes_files or self.options.latency_on(self.engine, self.query))

    def stops_at_cut(self) -> bool:
        """Whether the warm-up job may end at its phase checkpoint: nothing is asked of it
        after the cut (no in-place handoff, no offsets proof, no logical-size savepoint). A
        job that writes files is then stopped there, so that no later work of its reaches
        its sinks (`Job.trigger_phase_checkpoint`)."""
        return (
            self.handoff is not Handoff.IN_PLACE
            and self.kafka is None
            and not self._measures_logical_state()
        )

    def _logical_state(self, job: Job, checkpoint: CheckpointInfo) -> int | None:
        """The state's logical size after a phase's checkpoint (`Job.logical_state_bytes`),
        unscored: a state whose checkpoint is over LOGICAL_MAX_BYTES is not measured (writing
        it again would hold the cut for seconds; its live reads are the measure there). A
        snapshot the engine could not take is said and left out: the growth falls back."""
        size = checkpoint.state_bytes
        if size is None or size > LOGICAL_MAX_BYTES or not self._measures_logical_state():
            return None
        try:
            return job.logical_state_bytes(self.waits.checkpoint_timeout())
        except QueryTimeoutError:
            raise
        except EngineError as exc:
            self.display.message(f"  {self.query}: logical state not measured: {exc}")
            return None

    def settle(self, job: Job, phase: Phase) -> None:
        """Between a phase's last event and its checkpoint: `settle_s` (0 in benchmark runs)."""
        self.waits.sleep(self.options.settle_s)

    def before_stop(self, job: Job) -> None:
        """Called after the end checkpoint, before the cancel: a subclass reads results here."""

    # -- steps ---------------------------------------------------------------------------------

    def enter(
        self, phase: Phase, events_total: int | None = None, phases: dict | None = None
    ) -> None:
        """Enter `phase`; its start is noted in `phases` (the observing phase's times)."""
        self.tracker.enter(phase)
        if phases is not None:
            phases[phase.value] = self.tracker.started[phase.value]
        self.display.phase(phase.value, events_total)

    def _submit(self, part: str, restore: Snapshot | None) -> Job:
        spec = self.job_spec(part, restore)
        check_setup(self.engine.job_setup(spec))
        job = self.engine.submit(spec)
        self._jobs.append(job)
        seen = self.measured.benchmark if part == "benchmark" else self.measured.warmup
        if job.setup is not None:
            seen.job_options = dict(job.setup.options)
            seen.state_ttl_s, seen.state_bound = job.setup.state_ttl_s, job.setup.state_bound
        return job

    def job_spec(self, part: str, restore: Snapshot | None = None) -> JobSpec:
        """The spec of this query's job reading `part` ("warmup" or "benchmark")."""
        rate_fed = self.rate is not None and part == "benchmark"
        latency = self.options.latency_on(self.engine, self.query)
        source = self.parts.source(part, self.kafka)
        return job_spec(self.query, self.options, source, self.work_dir, restore, rate_fed, latency)

    def check_alive(self, job: Job) -> JobState:
        return self.waits.alive(job)

    def report_checkpoints(self, job: Job) -> None:
        for cp in job.checkpoints():
            key = (job.id, cp.id)
            if cp.status is not CheckpointStatus.IN_PROGRESS and key not in self._seen_checkpoints:
                self._seen_checkpoints.add(key)
                self.display.checkpoint(
                    cp.id, cp.status.value, cp.duration_s, cp.checkpointed_bytes
                )

    def _cancel_running(self) -> None:
        for job in self._jobs:
            try:
                if not job.status().state.terminal:
                    job.cancel()
            except Exception:  # noqa: BLE001 - the engine may be gone; the next repeat says so
                pass

    def _abort(self) -> None:
        """Best effort: cancel whatever still runs, keep nothing half-done on disk (even when a
        second Ctrl-C cuts the cancel short: the engine's close then stops what is left)."""
        try:
            self._cancel_running()
        finally:
            self._cleanup()

    def _cleanup(self) -> None:
        shutil.rmtree(self._work_root / rate_layout.DIR, ignore_errors=True)  # data, not state
        if not self.options.keep_checkpoints:
            shutil.rmtree(self._work_root, ignore_errors=True)


__all__ = [
    "EventTimeStalledError",
    "InvalidRunError",
    "LateRecordsError",
    "PhaseParts",
    "ProtocolOptions",
    "QueryRun",
    "ReaderSkewError",
]
