"""One phase of a job, timed: submit, ready, all events read, checkpoint.

Every phase the protocol runs goes through `timed_phase`: a query's warm-up (its checkpoint is
the phase checkpoint), each benchmark phase (its checkpoint the end checkpoint: Time runs from
ready to its completion) and the source ceiling's read (`protocol.suite.calibrate`). What differs is
the caller's `PhaseSteps`: what it notes while the job starts, what it does once the job is
ready (proofs, the feed's release), how it waits for the last event, and before the checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nexmark.engines.base import CheckpointInfo, Engine, Job, JobState
from nexmark.metrics.system import OtherLoad, OthersWatch
from nexmark.protocol.query.waits import Waits

READY_POLL_S = 0.05  # bounds the recovery time's resolution


@dataclass
class Timing:
    """A timed phase's clock and CPU readings (unix s; CPU: the engine's, s)."""

    t_submit: float
    t_running: float | None = None
    cpu_at_running: float | None = None
    t_end: float | None = None
    cpu_at_end: float | None = None
    # When each CPU reading was taken (the clock right after it): the cores are the CPU used
    # between the two readings over the time between them, which the phase's own instants
    # (the engine's ready and checkpoint times) may not bracket exactly.
    cpu_running_read_at: float | None = None
    cpu_end_read_at: float | None = None
    end: CheckpointInfo | None = None  # the checkpoint that ended the phase
    # What other processes used from ready to the end: whether the phase shared the machine.
    others: OtherLoad | None = None


class PhaseSteps:
    """What a caller adds to each step of a timed phase (here: nothing)."""

    # Ready at the engine's own timestamp when it has one (the poll sees it late by its
    # interval and the engine's status caches); False: at the first poll that saw it.
    exact_running: bool = True
    job: Job | None = None  # the phase's job, once submitted

    def polling(self, job: Job) -> None:
        """Each poll while the job starts, before its state is read."""

    def not_ready(self, job: Job) -> None:
        """Each poll that saw the job not ready yet."""

    def running(self, job: Job, timing: Timing) -> None:
        """The job is ready (`timing.t_running` set): note its CPU, prove, release its feed."""
        timing.cpu_at_running = timing.cpu_running_read_at = None

    def read_all(self, job: Job) -> None:
        """Wait until the job has read every event of its part."""

    def done_reading(self, job: Job) -> None:
        """After `read_all`, whether it returned or raised (a feed's release stops here)."""

    def before_checkpoint(self, job: Job) -> None:
        """Between the last event and the checkpoint (a settle time)."""

    def checkpoint(self, job: Job, timeout_s: float) -> CheckpointInfo:
        """The checkpoint that ends the phase."""
        return job.trigger_checkpoint(timeout_s)


def timed_phase(
    engine: Engine, waits: Waits, submit: Callable[[], Job], steps: PhaseSteps
) -> Timing:
    """Run one phase of a job through its checkpoint; the job is left running (the caller
    cancels it, or hands it on). Raises what `waits` and `steps` raise."""
    timing = Timing(t_submit=waits.clock())
    job = steps.job = submit()
    while True:
        steps.polling(job)
        if waits.alive(job) in (JobState.READY, JobState.FINISHED):  # finished: it was ready
            break
        steps.not_ready(job)
        waits.sleep(READY_POLL_S)
    seen = waits.clock()
    exact = job.running_since() if steps.exact_running else None
    timing.t_running = exact if exact is not None and timing.t_submit <= exact <= seen else seen
    steps.running(job, timing)
    others = OthersWatch(engine.cpu_seconds)
    try:
        steps.read_all(job)
    finally:
        steps.done_reading(job)
    steps.before_checkpoint(job)
    end = timing.end = steps.checkpoint(job, waits.checkpoint_timeout())
    timing.t_end = end.ack_ts or waits.clock()
    timing.cpu_at_end = engine.cpu_seconds()
    timing.cpu_end_read_at = waits.clock()
    timing.others = others.stop()
    return timing
