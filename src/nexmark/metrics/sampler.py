"""Samples a running job about every second: events read, CPU used, the job's watermark and
its live state, and in the scored phase where its time goes per operator, stamped with the phase.

The clock is injectable so tests can drive time. A sample costs one progress, one CPU and one
watermark probe (on Flink a REST call per vertex, or a /proc walk for CPU), and at most once
per interval a live-state probe (on Flink a REST call per stateful vertex) and, in the scored
phase, an operators probe (on Flink a REST call per vertex), which keeps the harness well under
2% of a core.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from nexmark.engines.base import Engine, Job
from nexmark.engines.status import LiveState, VertexLoad

# The phase whose operators are read: the scored one (`protocol.query.phases.Phase.BENCHMARK`).
SCORED_PHASE = "benchmark"


@dataclass(frozen=True)
class Sample:
    """One poll of a job. `wall` is when its count was true: the engine's metric time where
    it has one (`Job.events_emitted_at`), else the poll's time; never later than the poll,
    never earlier than the same job's previous sample. Two samples of one job with the same
    `wall` saw the same, unrefreshed count."""

    wall: float  # unix seconds: when `events` was true
    phase: str
    events: int  # events emitted by the source of the current job
    cpu_s: float  # CPU seconds of the engine's processes since the engine started
    watermark_ms: int | None = None  # the job's event-time watermark (epoch ms), if it has one
    # Unix seconds of the poll (CPU's time), where the engine gave the count's own time;
    # None: the count is the poll's (`wall`).
    polled: float | None = None
    # The job's state as its backend measures it (`Job.live_state`), read at the poll; None
    # where the engine cannot tell, or on a poll faster than the interval (near a phase's end).
    live: LiveState | None = None
    # Unix seconds at which `watermark_ms` was true where the engine reads it apart from the
    # count (`Job.watermark_at`); None: at `wall`.
    watermark_at: float | None = None
    # Unix seconds right after `cpu_s` was read (None: at the poll). Cores come from CPU over
    # the time between two such readings, never over `wall`, which may be the metric's older time.
    cpu_at: float | None = None
    # A scored phase's read of each vertex's counters (`Job.operator_load`), about once per
    # interval; None where the engine reports none, outside the scored phase, or between reads.
    operators: tuple[VertexLoad, ...] | None = None

    @property
    def poll_time(self) -> float:
        return self.wall if self.polled is None else self.polled

    @property
    def cpu_time(self) -> float:
        """When `cpu_s` was true."""
        return self.poll_time if self.cpu_at is None else self.cpu_at


class Sampler:
    """Collects samples for one query; rate-limited so that polling faster costs nothing extra."""

    def __init__(
        self,
        engine: Engine,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.engine = engine
        self.interval_s = interval_s
        self.clock = clock
        self.samples: list[Sample] = []
        self._stamps: dict[str, float] = {}  # job id -> its last sample's `wall`
        self._live_polled = float("-inf")  # when the live state was last read
        self._operators_read_at = float("-inf")  # when the operators were last read
        self._operators_cost = 0.0  # how long that read took (s)

    def sample(self, job: Job, phase: str, force: bool = False) -> Sample:
        """Take a sample now (or return the last one if it is younger than the interval)."""
        now = self.clock()
        last = self.samples[-1] if self.samples else None
        if last and not force and last.phase == phase and now - last.poll_time < self.interval_s:
            return last
        count = job.events_emitted_at()
        # The poll's time is when the answer came: a count cannot be true after that.
        received = self.clock()
        wall = received if count.at is None else min(count.at, received)
        # A metric store read in two requests may answer a moment older the second time.
        wall = max(wall, self._stamps.get(job.id, wall))
        self._stamps[job.id] = wall
        cpu = self.engine.cpu_seconds()
        cpu_at = self.clock()
        polled = None if count.at is None else received
        watermark = job.watermark_at()
        live = None
        # About once per interval: a poll up to a quarter early still reads it, so that the
        # faster polls near a phase's end leave no gap much longer than the interval.
        if received - self._live_polled >= 0.75 * self.interval_s:
            self._live_polled = received
            live = job.live_state()
        s = Sample(wall, phase, count.events, cpu, watermark.ms, polled, live, watermark.at, cpu_at)
        self.samples.append(s)
        return s

    def read_operators(self, job: Job, next_poll_s: float | None = None) -> float:
        """Read where the job's time goes (`Job.operator_load`) into its last sample, about once
        per interval, and return `next_poll_s` less the time the read took: the next poll comes
        when it would have without it, so the phase's end is seen no later. None read when the
        next poll is too near for a read (twice the last one's time); `next_poll_s` None: read
        now (the phase's first poll)."""
        now = self.clock()
        if not self.samples:
            return next_poll_s or 0.0
        if next_poll_s is not None and (
            now - self._operators_read_at < 0.75 * self.interval_s
            or next_poll_s < 2 * self._operators_cost
        ):
            return next_poll_s
        self._operators_read_at = now
        loads = job.operator_load()
        if loads is not None:
            self.samples[-1] = dataclasses.replace(self.samples[-1], operators=tuple(loads))
        self._operators_cost = self.clock() - now
        return max(0.0, (next_poll_s or 0.0) - self._operators_cost)

    def in_phase(self, phase: str) -> list[Sample]:
        return [s for s in self.samples if s.phase == phase]
