"""A failover in the benchmark phase (docs/failover.md): the kill point, the outage as observed,
and the metrics derived from it. Engine-blind: the engine kills (`Job.inject_failure`) and says
what it restarted (`Job.recovery`); everything else is read from job states and samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nexmark.engines.base import (
    CheckpointStatus,
    Engine,
    FailoverSupport,
    Job,
    JobState,
    Recovery,
)
from nexmark.errors import UsageError
from nexmark.metrics.sampler import Sample

# The phase of the samples taken between the kill and the restored job running again.
OUTAGE_PHASE = "failover"
# A 1 s rate is noisy: the rate has caught up once a sample reaches this share of the
# benchmark phase's rate before the kill (the same bar as "steady", metrics.derive).
CATCH_UP_FRACTION = 0.9


def check_failover(failover: bool, engine: Engine) -> None:
    """UsageError when a failover run is asked of an engine that declares it cannot restart a
    failed job (`Capabilities.failover` NONE): refused before any data is generated."""
    if failover and engine.capabilities().failover is FailoverSupport.NONE:
        raise UsageError(f"--failover: {engine.name} cannot restart a failed job from a checkpoint")


class FailoverTimeout(Exception):
    """The job did not recover from the failover before the query's deadline."""


@dataclass
class Outage:
    """What the protocol observed of one failure of the benchmark job (unix seconds).

    Attributes:
        support: INJECT (the runner killed a worker) or OBSERVE (someone else did).
        killed: What the engine says it killed (None when observed only).
        t_kill: When it was killed (None when observed only: the engine's failure time stands).
        events_at_kill: Events read just before the kill, as the engine last published them
            (the last count before the failure; a metric that lags the source is lower).
        part_events: The events of the part the failed job reads.
        t_detected: When the engine noticed: its own failure time, else the first poll that saw
            the job leave READY.
        t_restored: When every task ran again (the engine's timestamp where it has one).
        recovery: The engine's account of the restart, read once the job ran again.
    """

    support: FailoverSupport
    killed: str | None = None
    t_kill: float | None = None
    events_at_kill: int | None = None
    part_events: int | None = None
    t_detected: float | None = None
    t_restored: float | None = None
    recovery: Recovery | None = None

    @property
    def kill_point(self) -> int | None:
        """Events read when the kill landed, where known; None when unknown. An engine's count
        lags its source (Flink publishes its metrics a moment late, and a source reads on
        until the kill lands): a restored position past the last count says the kill came
        later than that count, and then it is known only when the restored position is the
        whole part (nothing was left to read)."""
        at_restore = self.recovery.events_at_restore if self.recovery else None
        if self.events_at_kill is None or at_restore is None:
            return None
        if self.events_at_kill >= at_restore:
            return self.events_at_kill
        return (
            at_restore if self.part_events is not None and at_restore >= self.part_events else None
        )

    @property
    def events_replayed(self) -> int | None:
        """Events read twice: read before the kill, then again from the restored position;
        never negative, None when the kill point is unknown."""
        kill_point = self.kill_point
        if kill_point is None:
            return None
        assert self.recovery is not None and self.recovery.events_at_restore is not None
        return kill_point - self.recovery.events_at_restore

    @property
    def origin(self) -> float | None:
        """Time 0 of the outage: the kill, else (observed) the engine's failure time."""
        return self.t_kill if self.t_kill is not None else self.t_detected


def kill_point_reached(
    job: Job, events: int, benchmark_events: int, at_fraction: float, t_running: float
) -> bool:
    """The default kill point: `at_fraction` of the benchmark events read, and at least one
    periodic checkpoint of the benchmark job completed (so the restart has one to restore).
    Completed once the job ran: a Spark micro-batch (its checkpoint) starts before the job
    counts as ready, since its offsets, written as it starts, are what ready means there."""
    if events < at_fraction * benchmark_events:
        return False
    return any(
        c.status is CheckpointStatus.COMPLETED and c.ack_ts is not None and c.ack_ts >= t_running
        for c in job.checkpoints()
    )


def restarted(job: Job, state: JobState, restarts_before: int) -> bool:
    """The engine has noticed the failure: the job left READY, or it counts one more restart."""
    if state is not JobState.READY:
        return True
    recovery = job.recovery()
    return recovery is not None and recovery.restarts > restarts_before


@dataclass(frozen=True)
class OutageMetrics:
    """The outage's figures, seconds from its origin (see docs/failover.md)."""

    detect_s: float | None
    restore_s: float | None
    catch_up_rate_s: float | None
    catch_up_kill_point_s: float | None
    events_replayed: int | None
    rate_before_eps: float | None
    throughput_with_outage_eps: float | None
    throughput_without_outage_eps: float | None


def outage_metrics(
    outage: Outage,
    samples: Sequence[Sample],
    t_running: float,
    t_end: float,
    benchmark_events: int,
) -> OutageMetrics:
    """Derive the outage's metrics from its observations and the benchmark phase's samples.

    Args:
        outage: What was observed.
        samples: Every sample of the query (the benchmark's and the outage's among them).
        t_running: The benchmark phase's start (every task of the restored job running).
        t_end: Its end (the last event fully processed).
        benchmark_events: Events of the benchmark part.
    """
    origin = outage.origin
    after = [s for s in samples if s.phase == "benchmark" and s.wall >= (outage.t_restored or 0)]
    before = outage.events_at_kill
    rate_before = None
    if before is not None and outage.t_kill is not None and outage.t_kill > t_running:
        rate_before = before / (outage.t_kill - t_running)
    t_rate = _rate_reached(after, rate_before)
    t_pass = _events_reached(after, outage.kill_point)
    time_s = t_end - t_running
    lost = None if t_pass is None or origin is None else t_pass - origin

    def since(t: float | None) -> float | None:
        return None if t is None or origin is None else round(t - origin, 3)

    return OutageMetrics(
        detect_s=since(outage.t_detected) if outage.t_kill is not None else None,
        restore_s=since(outage.t_restored),
        catch_up_rate_s=since(t_rate),
        catch_up_kill_point_s=since(t_pass),
        events_replayed=outage.events_replayed,
        rate_before_eps=rate_before,
        throughput_with_outage_eps=benchmark_events / time_s if time_s > 0 else None,
        throughput_without_outage_eps=(
            benchmark_events / (time_s - lost) if lost is not None and time_s > lost else None
        ),
    )


def _rate_reached(after: Sequence[Sample], rate: float | None) -> float | None:
    """End of the first sample interval after the restore whose rate reaches the bar."""
    if rate is None:
        return None
    for a, b in zip(after, after[1:], strict=False):
        if (
            b.wall > a.wall
            and (b.events - a.events) / (b.wall - a.wall) >= CATCH_UP_FRACTION * rate
        ):
            return b.wall
    return None


def _events_reached(after: Sequence[Sample], events: int | None) -> float | None:
    """When the events read passed `events` again, interpolated between two samples."""
    if events is None:
        return None
    for a, b in zip(after, after[1:], strict=False):
        if a.events >= events:
            return a.wall
        if b.events >= events > a.events:
            return a.wall + (b.wall - a.wall) * (events - a.events) / (b.events - a.events)
    return None
