"""The source ceiling's measurement on a scripted engine (the real one: tests/integration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexmark.engines.checkpoints import CheckpointInfo, CheckpointStatus
from nexmark.engines.source import FileSource
from nexmark.engines.spec import SOURCE_ONLY, JobSetup
from nexmark.engines.status import EventCount, JobState, JobStatus
from nexmark.errors import EngineError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.suite.calibrate import calibrate
from nexmark.results.steady import MIN_SCORED_PHASE_S


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class ScriptedJob:
    """Starting for 0.2 s, then reads 1,000 events per second of the clock, then stays open
    (or fails at the end, with `end=FAILED`); a checkpoint completes 0.1 s after its trigger."""

    def __init__(
        self, clock: Clock, events: int, end: JobState = JobState.READY, rate: float = 1000
    ) -> None:
        self.clock, self.events, self.end, self.rate = clock, events, end, rate
        self.started = clock.now
        self.cancelled = False

    def _running_for(self) -> float:
        return self.clock.now - self.started - 0.2

    def status(self) -> JobStatus:
        if self.cancelled:
            return JobStatus(JobState.CANCELED)
        if self._running_for() < 0:
            return JobStatus(JobState.STARTING)
        if self._running_for() * self.rate >= self.events and self.end is JobState.FAILED:
            return JobStatus(self.end, "boom")
        return JobStatus(JobState.READY)

    def events_emitted(self) -> int:
        return min(self.events, max(0, int(self._running_for() * self.rate)))

    def events_emitted_at(self) -> EventCount:
        return EventCount(self.events_emitted())  # a live count: no time of its own

    def trigger_checkpoint(self, timeout_s: float) -> CheckpointInfo:
        trigger = self.clock.now
        self.clock.sleep(0.1)
        return CheckpointInfo(1, CheckpointStatus.COMPLETED, trigger, self.clock.now, 0.1, 0, 0)

    def cancel(self) -> None:
        self.cancelled = True


class ScriptedEngine:
    """Its first job reads at `cold_rate` (a fresh JVM), every later one at `warm_rate`."""

    def __init__(
        self, clock: Clock, end: JobState = JobState.READY, cold_rate=1000, warm_rate=1000
    ) -> None:
        self.clock, self.end, self.specs, self.jobs = clock, end, [], []
        self.cold_rate, self.warm_rate = cold_rate, warm_rate

    def job_setup(self, spec):
        return JobSetup(spec.parallelism or 2, 30.0, None)

    def submit(self, spec):
        self.specs.append(spec)
        rate = self.cold_rate if not self.jobs else self.warm_rate
        self.jobs.append(ScriptedJob(self.clock, 5000, self.end, rate))
        return self.jobs[-1]

    def cpu_seconds(self) -> float:
        return 1.5 * self.clock.now  # 1.5 cores all the time


def parts(tmp_path: Path) -> PhaseParts:
    return PhaseParts(tmp_path / "warmup", tmp_path / "benchmark", 15_000, 5000)


def test_it_times_the_job_from_running_to_its_end_on_the_benchmark_part(tmp_path):
    clock = Clock()
    engine = ScriptedEngine(clock)
    work = tmp_path / "source"
    work.mkdir()
    source = calibrate(engine, parts(tmp_path), work, ProtocolOptions(), clock, clock.sleep)
    spec = engine.specs[0]
    assert spec.source_only and spec.query == SOURCE_ONLY and spec.keep_source_open
    assert spec.source == FileSource.of(tmp_path / "benchmark")
    assert source.status == "ok" and source.events == 5000 and source.parallelism == 2
    # 5 s of reading, seen within the 50 ms polls near the end (not the 1 s sampling), and
    # the end checkpoint's 0.1 s: timed as a benchmark phase is.
    assert 5.0 < source.time_s < 5.3
    assert engine.jobs[0].cancelled
    assert source.throughput_eps == pytest.approx(5000 / source.time_s)
    assert source.cores == pytest.approx(1.5)
    assert source.throughput_per_core == pytest.approx(source.throughput_eps / 1.5)
    assert source.too_short is None  # over 5 s: resolved
    assert not work.exists()


def test_a_failed_job_is_recorded_not_raised(tmp_path):
    clock = Clock()
    source = calibrate(
        ScriptedEngine(clock, JobState.FAILED), parts(tmp_path), tmp_path / "w",
        ProtocolOptions(), clock, clock.sleep,
    )  # fmt: skip
    assert source.status == "failed" and "ended failed: boom" in source.reason
    assert source.throughput_eps is None


def test_an_engine_error_and_a_timeout_are_recorded(tmp_path):
    clock = Clock()
    engine = ScriptedEngine(clock)

    def refuse(spec):
        raise EngineError("no slots")

    engine.submit = refuse
    source = calibrate(
        engine, parts(tmp_path), tmp_path / "w", ProtocolOptions(), clock, clock.sleep
    )
    assert (source.status, source.reason) == ("failed", "no slots")
    slow = ScriptedEngine(clock)
    options = ProtocolOptions(timeout_s=2.0)
    source = calibrate(slow, parts(tmp_path), tmp_path / "w", options, clock, clock.sleep)
    assert source.status == "timeout" and slow.jobs[0].cancelled


def test_the_timed_read_is_a_warm_one(tmp_path):
    """The first read of a fresh engine is unscored; the ceiling is the next read's."""
    clock = Clock()
    engine = ScriptedEngine(clock, cold_rate=250)  # 20 s cold, 5 s warm
    source = calibrate(
        engine, parts(tmp_path), tmp_path / "w", ProtocolOptions(), clock, clock.sleep
    )
    assert len(engine.specs) == 2 and all(job.cancelled for job in engine.jobs)
    assert engine.specs[0] == engine.specs[1]  # the same part, parallelism and source
    assert source.warm_reads == 1
    assert 5.0 < source.time_s < 5.3
    assert source.cold_throughput_eps == pytest.approx(5000 / 20, rel=0.05)
    assert source.throughput_eps == pytest.approx(5000 / source.time_s)


def test_a_timed_read_too_short_to_resolve_is_recorded_so(tmp_path):
    """Under a scored phase's bound (5 s) the read is mostly its fixed costs: its throughput
    is kept, and the record says why it is no ceiling to give a share of."""
    clock = Clock()
    engine = ScriptedEngine(clock, warm_rate=2500)  # the timed read: 5,000 events in 2 s
    source = calibrate(
        engine, parts(tmp_path), tmp_path / "w", ProtocolOptions(), clock, clock.sleep
    )
    assert source.status == "ok" and 2.0 < source.time_s < MIN_SCORED_PHASE_S
    assert source.throughput_eps == pytest.approx(5000 / source.time_s)
    assert source.too_short is not None
    assert f"lasted {source.time_s:.1f} s, under 5 s: too short to resolve" in source.too_short
