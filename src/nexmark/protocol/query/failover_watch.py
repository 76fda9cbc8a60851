"""The failover of a benchmark phase as it happens (docs/failover.md): when to kill (INJECT) or
that someone did (OBSERVE), the kill, and the outage watched until the job runs again. What an
outage means once it is over is in `protocol.query.failover`.
"""

from __future__ import annotations

from nexmark.engines.base import FailoverSupport, Job, JobState
from nexmark.errors import EngineError
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.failover import (
    OUTAGE_PHASE,
    FailoverTimeout,
    Outage,
    kill_point_reached,
    restarted,
)
from nexmark.protocol.query.observe import BenchmarkObserved
from nexmark.protocol.query.phases import Phase
from nexmark.protocol.query.waits import Waits


class FailoverWatch:
    """One query's failovers: `support` is what the engine answered (`enable_failover`)."""

    def __init__(
        self,
        support: FailoverSupport,
        at_fraction: float,
        waits: Waits,
        sampler: Sampler,
        display: RunDisplay,
    ) -> None:
        self.support, self.at_fraction = support, at_fraction
        self.waits, self.sampler, self.display = waits, sampler, display
        self._kill_prompted = False

    def pending(self, outage: Outage | None) -> bool:
        """An injected failover must happen before the benchmark phase may end."""
        return self.support is FailoverSupport.INJECT and outage is None

    def due(self, job: Job, events: int, total: int, t_running: float | None) -> bool:
        """Time to kill (INJECT), or a failure someone else caused has shown (OBSERVE)."""
        if self.support is FailoverSupport.OBSERVE:
            self._prompt_kill(events, total)
            return restarted(job, job.status().state, 0)
        assert t_running is not None
        return kill_point_reached(job, events, total, self.at_fraction, t_running)

    def _prompt_kill(self, events: int, total: int) -> None:
        """OBSERVE: the engine cannot kill its workers here; ask once, at the kill point."""
        if not self._kill_prompted and events >= self.at_fraction * total:
            self._kill_prompted = True
            self.display.message("  failover: kill a worker of the job now (docs/failover.md)")

    def fail_over(self, job: Job, seen: BenchmarkObserved, part_events: int) -> None:
        """Kill (or see killed) the job's worker; wait until the engine noticed and the job
        runs again (the outage noted on `seen` as it goes). Not recovering before the
        query's deadline fails the query. `part_events`: the events of the part it reads."""
        outage = seen.outage = Outage(self.support, part_events=part_events)
        # Observed: the failure has already shown, so the restart to wait for is the first.
        inject = self.support is FailoverSupport.INJECT
        before = job.recovery() if inject else None
        restarts = before.restarts if before else 0
        if inject:
            outage.events_at_kill = job.events_emitted()
            killed = job.inject_failure()
            outage.t_kill, outage.killed = killed.at, killed.what
            if killed.events_read is not None:
                outage.events_at_kill = max(outage.events_at_kill, killed.events_read)
            self.display.message(f"  failover: killed {killed.what}")
        else:
            samples = self.sampler.samples
            outage.events_at_kill = samples[-1].events if samples else None
        try:
            self._wait_outage(job, outage, restarts)
        except FailoverTimeout:
            raise EngineError(
                f"failover: {self.waits.query} did not recover within its "
                f"{self.waits.timeout_s:g} s timeout ({outage_state(outage)})"
            ) from None

    def _wait_outage(self, job: Job, outage: Outage, restarts: int) -> None:
        """Poll until the engine noticed the failure, then until the job runs again past
        `restarts`; note both times and what the restart restored."""
        while outage.t_detected is None:
            state, seen = self._poll(job)
            if restarted(job, state, restarts):
                recovery = job.recovery()
                exact = recovery.failed_at if recovery else None
                low = outage.t_kill if outage.t_kill is not None else seen - 60
                outage.t_detected = exact if exact is not None and low <= exact <= seen else seen
        while True:
            state, seen = self._poll(job)
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
            self.waits.sleep(0.1)
        self.sampler.sample(job, Phase.BENCHMARK.value, force=True)
        self.display.message(f"  failover: running again ({outage_state(outage)})")

    def _poll(self, job: Job) -> tuple[JobState, float]:
        """One poll of the outage, every 50 ms: the state and when it was seen. Its samples
        are stamped as the outage's."""
        self.waits.sleep(0.05)
        if self.waits.clock() > self.waits.deadline:
            raise FailoverTimeout
        seen = self.waits.clock()
        state = self.waits.alive(job)
        self.sampler.sample(job, OUTAGE_PHASE)
        return state, seen


def outage_state(outage: Outage) -> str:
    """How far the recovery got, in a few words."""
    origin = outage.origin
    parts = [f"killed {outage.killed}" if outage.killed else "failure observed"]
    for name, t in (("detected", outage.t_detected), ("running", outage.t_restored)):
        if t is not None and origin is not None:
            parts.append(f"{name} after {t - origin:.2f} s")
        elif t is None:
            parts.append(f"not {name} yet")
    return ", ".join(parts)
