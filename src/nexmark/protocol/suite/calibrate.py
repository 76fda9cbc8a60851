"""The data path's ceiling: one source-only job per run (docs/protocol.md#the-source-ceiling).

Before the queries, the engine reads the benchmark part through the very source the queries
read (every event, its kind and event time, the watermark: the least any query does per event),
at the queries' parallelism, and discards it. It is measured as a benchmark phase is: warm. A
benchmark phase follows its own warm-up (code generated, JIT-compiled, buffers and page cache
filled), so the first read of a fresh JVM is unscored (`WARM_READS`) and the next one is timed.
Its throughput is what no query on this dataset, engine and setup can exceed; each result
records it and how close the query came (`source_ratio`), and a query that ran faster marks the
ceiling invalid (record.py). A timed read shorter than the shortest scored phase that resolves
(`steady.MIN_SCORED_PHASE_S`) is recorded too short to resolve (`too_short`), and no query's
share of it is shown. It costs two reads of 25% of the events per run. On a rate run
(`--rate`) it reads the same finer benchmark part, released all at once (`calibration_spec`).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from nexmark.engines.base import SOURCE_ONLY, Engine, Job, JobSpec, JobState
from nexmark.errors import EngineError, NexmarkError, QueryTimeoutError, UnsupportedQueryError
from nexmark.metrics import derive
from nexmark.protocol.preparation.checks import job_spec
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query.polling import EndWatch
from nexmark.protocol.query.timed import PhaseSteps, Timing, timed_phase
from nexmark.protocol.query.waits import Waits
from nexmark.results.figures import SourceCalibration
from nexmark.results.steady import short_ceiling_reason

if TYPE_CHECKING:
    from nexmark.protocol.preparation.kafka import KafkaParts

# Unscored reads of the part before the timed one. Measured cold (the first streaming job of a
# fresh JVM), Flink's ceiling was 458K events/s where q0 then ran at 741K ("Of Source 162%").
WARM_READS = 1


def calibration_spec(
    parts: PhaseParts, options: ProtocolOptions, work_dir: Path, topics: KafkaParts | None = None
) -> JobSpec:
    """The source-only job on the benchmark part, with the source the benchmark phase has
    (open: it keeps watching the directory, so the job ends only when cancelled).

    On a rate run (`options.rate`, or a rate search) the benchmark part is finer (a time
    slice per step of the release, several files per reader), which an engine reading one file
    per reader refuses unless the job is rate-fed: the job is then rate-fed, and its steps
    release the whole feed at once when it is ready, so the ceiling is read at full speed.
    `topics`: --source kafka's loaded parts (the job reads the benchmark topic)."""
    rate_fed = options.feed_rate is not None
    return job_spec(
        SOURCE_ONLY,
        options,
        parts.source("benchmark", topics),
        work_dir,
        rate_fed=rate_fed,
        source_only=True,
    )


def calibrate(
    engine: Engine,
    parts: PhaseParts,
    work_dir: Path,
    options: ProtocolOptions,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    *,
    topics: KafkaParts | None = None,
) -> SourceCalibration:
    """Run the source-only job once and time it as a benchmark phase is timed: from every task
    running to the completion of a checkpoint triggered once the source has emitted the last
    event. Never raises for an engine failure (the result then says why), so a run's queries
    go on without their ceiling."""
    spec = calibration_spec(parts, options, work_dir, topics)
    result = SourceCalibration(events=parts.benchmark_events)
    try:
        result.parallelism = engine.job_setup(spec).parallelism
        for _ in range(WARM_READS):
            cold = SourceCalibration(events=parts.benchmark_events)
            _measure(engine, spec, cold, options, clock, sleep)
            result.cold_throughput_eps = cold.throughput_eps
            shutil.rmtree(work_dir, ignore_errors=True)  # the timed read starts afresh
        result.warm_reads = WARM_READS
        _measure(engine, spec, result, options, clock, sleep)
        result.status = "ok"
        result.too_short = short_ceiling_reason(result.time_s)
    except UnsupportedQueryError as exc:
        result.status, result.reason = "unsupported", str(exc)
    except QueryTimeoutError as exc:
        result.status, result.reason = "timeout", str(exc)
    except NexmarkError as exc:
        result.status, result.reason = "failed", str(exc)
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    return result


class SourceWaits(Waits):
    """The source-only job's waits: any end of it is a failure (it reads an open source)."""

    def alive(self, job: Job) -> JobState:
        if self.clock() > self.deadline:
            raise QueryTimeoutError("the source-only job did not read the benchmark part in time")
        status = job.status()
        if status.state.terminal:
            raise NexmarkError(
                f"the source-only job ended {status.state.value}"
                + (f": {status.failure}" if status.failure else "")
            )
        return status.state

    def checkpoint_timeout(self) -> float:
        return max(1.0, self.deadline - self.clock())

    def sleep(self, seconds: float) -> None:
        self._sleep_for(seconds)  # no feed to pump; past the deadline `alive` raises


class SourceSteps(PhaseSteps):
    """The source ceiling's read: timed from the first poll that saw it ready, its feed (a
    rate run's finer part) released at once, its end polled as the phases poll (`EndWatch`:
    the end is seen promptly without polling fast all along, each poll costing the engine
    CPU)."""

    exact_running = False

    def __init__(self, engine: Engine, spec: JobSpec, waits: Waits, total: int, interval: float):
        self.engine, self.spec, self.waits, self.total = engine, spec, waits, total
        self.interval = interval

    def running(self, job: Job, timing: Timing) -> None:
        timing.cpu_at_running = self.engine.cpu_seconds()
        timing.cpu_running_read_at = self.waits.clock()
        if self.spec.rate_fed:  # unrated: every file at once, read at full speed
            feed = job.feed()
            if feed is None:
                raise EngineError("the rate-fed source-only job handed over no feed to release")
            feed.release()

    def read_all(self, job: Job) -> None:
        watch = EndWatch(self.interval)
        while True:
            self.waits.alive(job)
            count = job.events_emitted_at()
            if count.events >= self.total:
                return
            now = self.waits.clock()
            at = now if count.at is None else count.at
            self.waits.sleep(watch.delay(at, count.events, self.total - count.events, now))


def _measure(
    engine: Engine,
    spec: JobSpec,
    result: SourceCalibration,
    options: ProtocolOptions,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> None:
    waits = SourceWaits(SOURCE_ONLY, options.timeout_s, clock, sleep, lambda: "source ceiling")
    total = result.events or 0
    steps = SourceSteps(engine, spec, waits, total, options.sample_interval_s)
    try:
        timing = timed_phase(engine, waits, lambda: engine.submit(spec), steps)
    finally:
        try:
            if steps.job is not None and not steps.job.status().state.terminal:
                steps.job.cancel()
        except NexmarkError:
            pass  # the engine is gone; the runner restarts it
    assert timing.t_end is not None and timing.t_running is not None
    result.time_s = timing.t_end - timing.t_running
    result.throughput_eps = derive.safe_div(total, result.time_s)
    result.cores = derive.cores(
        timing.cpu_at_running,
        timing.cpu_at_end,
        derive.span(timing.cpu_running_read_at, timing.cpu_end_read_at) or result.time_s,
    )
    result.throughput_per_core = derive.safe_div(result.throughput_eps, result.cores)
