"""The clock a query waits on: its deadline, its sleeps and the check that its job still runs.

Every step of a query (the timed phases, the proofs, the failover watch) waits through one
`Waits`, so a timeout names the query and its phase the same way everywhere, and a rate-fed
phase's releaser is pumped while it sleeps when the clock is injected (tests).
"""

from __future__ import annotations

from collections.abc import Callable

from nexmark.engines.base import Job, JobState
from nexmark.errors import EngineError, QueryTimeoutError
from nexmark.workload.feed import Releaser


class Waits:
    """Waiting for one query, bounded by its deadline (renewed for each repeat)."""

    def __init__(
        self,
        query: str,
        timeout_s: float,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        phase: Callable[[], str],
    ) -> None:
        self.query, self.timeout_s, self.clock = query, timeout_s, clock
        self._sleep_for, self._phase = sleep, phase
        self.deadline = clock() + timeout_s
        self.releaser: Releaser | None = None  # a rate-fed phase's, pumped by `sleep`

    def renew(self) -> None:
        """A new deadline: the query's timeout from now (a further repeat, a further run)."""
        self.deadline = self.clock() + self.timeout_s

    def alive(self, job: Job) -> JobState:
        """The job's state; raise on a timeout, or if it failed or was cancelled. FINISHED is
        returned: whether that is early is for the caller to say."""
        if self.clock() > self.deadline:
            raise QueryTimeoutError(
                f"{self.query} did not finish within {self.timeout_s:g} s "
                f"(in phase {self._phase()})"
            )
        status = job.status()
        if status.state in (JobState.FAILED, JobState.CANCELED):
            raise EngineError(
                f"job {status.state.value} in phase {self._phase()}"
                + (f": {status.failure}" if status.failure else "")
            )
        return status.state

    def remaining(self) -> float:
        left = self.deadline - self.clock()
        if left <= 0:
            raise QueryTimeoutError(f"{self.query} ran out of its {self.timeout_s:g} s")
        return left

    def checkpoint_timeout(self) -> float:
        """How long a phase's checkpoint may take: what is left of the query's time."""
        return self.remaining()

    def sleep(self, seconds: float) -> None:
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
