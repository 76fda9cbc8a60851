"""The verification cycle: one query through warm-up, checkpoint, cancel, restore and benchmark,
with a sink whose rows are read back and compared with the reference.

Only the `Engine` / `Job` interface is used; the engine is never asked what it is. Both phases
keep the source open after their last event, as a benchmark does: the result therefore holds
exactly the windows the final watermark closed (see `reference.py`). A final checkpoint after
the last benchmark event commits every row the job produced.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from nexmark.engines.base import CheckpointInfo, Engine, Job, JobSpec, JobState, SinkKind
from nexmark.errors import EngineError, QueryTimeoutError
from nexmark.verify.check import Status, Verdict, check
from nexmark.verify.outputs import read_q10_files
from nexmark.verify.reference import EventData, NotCheckable, reference
from nexmark.workload import queries

# Processing-time windows (q12) fire on the wall clock: wait one window length and a margin
# after the last event so that every window has fired before the final checkpoint.
EXTRA_SETTLE_S = {"q12": 12.0}

# Every checkpoint location used so far in this process (see `Cycle._confirmed`).
_REPORTED_LOCATIONS: set[str] = set()


@dataclass
class VerifyParts:
    """The dataset as the cycle sees it: two part directories and their event counts."""

    warmup_dir: Path
    benchmark_dir: Path
    warmup_events: int
    benchmark_events: int


@dataclass
class VerifyOptions:
    """Knobs of the verification cycle.

    Attributes:
        parallelism: Job parallelism; None = the engine's default (it should equal the files
            per part, so that each source reader has one file).
        timeout_s: Limit per query for both phases together.
        settle_s: Wait after the source emitted its last event and before a checkpoint, so the
            last watermark has left the source (periodic watermark emission).
        restore: Restore the benchmark job from the phase checkpoint. False only to show that
            the verification catches lost state.
        keep_work: Keep each query's work directory (checkpoints, collected files).
        watermark_slack_s: How far below the computed final watermark the engine's last
            watermark may stay; rows it would release are optional. 2 s covers Flink's
            mini-batch (interval 2 s), which forwards a row-time watermark only when it
            crosses an interval boundary.
    """

    parallelism: int | None = None
    timeout_s: float = 600.0
    settle_s: float = 1.0
    restore: bool = True
    keep_work: bool = False
    watermark_slack_s: float = 2.0


class Cycle:
    """Runs one query's two phases on an engine and returns the committed changelog."""

    def __init__(
        self,
        engine: Engine,
        spec: JobSpec,
        parts: VerifyParts,
        options: VerifyOptions,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.engine, self.spec, self.parts, self.options = engine, spec, parts, options
        self.clock = clock
        self.deadline = clock() + options.timeout_s
        self.jobs: list[Job] = []

    def run(self) -> list[tuple[str, tuple]]:
        """Both phases; the rows committed at the end. Leaves no job running."""
        try:
            phase_cp = self._warmup()
            return self._benchmark(phase_cp)
        finally:
            for job in self.jobs:
                _cancel_quietly(job)

    def _warmup(self) -> CheckpointInfo:
        job = self._submit(self.spec)
        self._wait_events(job, self.parts.warmup_events, "warm-up")
        self._sleep(self.options.settle_s)
        cp = self._confirmed(job, job.trigger_checkpoint(self._left()))
        if not cp.location:
            raise EngineError(f"phase checkpoint {cp.id} has no restorable location")
        job.cancel()
        return cp

    def _confirmed(self, job: Job, cp: CheckpointInfo) -> CheckpointInfo:
        """The phase checkpoint, never one that an earlier job already reported.

        A cluster may answer with the statistics of an earlier job's checkpoint of the same
        number (Flink's REST cache of checkpoint details is keyed by number only); restoring
        it would load another query's state. The job's own checkpoint history replaces that
        answer within seconds.
        """
        while cp.location in _REPORTED_LOCATIONS:
            self._alive(job, "phase checkpoint")
            self._sleep(0.3)
            cp = next((c for c in job.checkpoints() if c.id == cp.id), cp)
        if cp.location:
            _REPORTED_LOCATIONS.add(cp.location)
        return cp

    def _benchmark(self, phase_cp: CheckpointInfo) -> list[tuple[str, tuple]]:
        restore = phase_cp.location if self.options.restore else None
        spec = replace(self.spec, source_dir=self.parts.benchmark_dir, restore_from=restore)
        job = self._submit(spec)
        self._wait_running(job)
        if self.options.restore:
            self._confirm_restore(job, phase_cp)
        self._wait_events(job, self.parts.benchmark_events, "benchmark")
        self._sleep(self.options.settle_s + EXTRA_SETTLE_S.get(self.spec.query, 0.0))
        job.trigger_checkpoint(self._left())
        rows = self._stable_rows(job)
        job.cancel()
        return rows

    def _submit(self, spec: JobSpec) -> Job:
        job = self.engine.submit(spec)
        self.jobs.append(job)
        return job

    def _alive(self, job: Job, phase: str) -> JobState:
        if self.clock() > self.deadline:
            raise QueryTimeoutError(
                f"{self.spec.query}: {phase} not done within {self.options.timeout_s:g} s"
            )
        status = job.status()
        if status.state.terminal:
            why = f": {status.failure}" if status.failure else ""
            raise EngineError(f"{self.spec.query}: job {status.state.value} in {phase}{why}")
        return status.state

    def _wait_running(self, job: Job) -> None:
        while self._alive(job, "restore") is not JobState.RUNNING:
            self._sleep(0.1)

    def _wait_events(self, job: Job, total: int, phase: str) -> None:
        while job.events_emitted() < total:
            self._alive(job, phase)
            self._sleep(0.3)

    def _confirm_restore(self, job: Job, cp: CheckpointInfo) -> None:
        restored = None
        while restored is None:  # some engines report it a moment after the tasks run
            restored = job.restored_from()
            if restored is None:
                self._alive(job, "restore")
                self._sleep(0.2)
        if restored.checkpoint_id != cp.id and restored.location != cp.location:
            raise EngineError(
                f"{self.spec.query}: restored from {restored.location or restored.checkpoint_id}"
                f", not from the phase checkpoint {cp.id}"
            )

    def _stable_rows(self, job: Job) -> list[tuple[str, tuple]]:
        """The collected rows, once two reads a second apart agree.

        A sink may publish what a checkpoint committed a moment after the checkpoint is reported
        complete (the commit follows the completion notice), so one read could be short.
        """
        rows = self._rows(job)
        while True:
            self._sleep(1.0)
            again = self._rows(job)
            if len(again) == len(rows):
                return again
            self._alive(job, "final commit")
            rows = again

    def _rows(self, job: Job) -> list[tuple[str, tuple]]:
        if queries.get(self.spec.query).own_sink:  # q10 writes its own files
            return [("+I", row) for row in read_q10_files(self.spec.work_dir)]
        return job.collected_rows()

    def _left(self) -> float:
        left = self.deadline - self.clock()
        if left <= 0:
            raise QueryTimeoutError(
                f"{self.spec.query} ran out of its {self.options.timeout_s:g} s"
            )
        return left

    def _sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, min(seconds, self.deadline - self.clock())))


def _cancel_quietly(job: Job) -> None:
    try:
        if not job.status().state.terminal:
            job.cancel()
    except Exception:  # noqa: BLE001 - best effort; the engine's close() stops the rest
        pass


def verify_query(
    engine: Engine,
    query: str,
    parts: VerifyParts,
    data: EventData,
    work_root: Path,
    options: VerifyOptions | None = None,
) -> Verdict:
    """Verify one query: unsupported / not checkable / match / mismatch / failed.

    Args:
        engine: A started engine.
        query: "q0".."q23".
        parts: The dataset's two parts.
        data: The dataset's events (see `reference.load_events`).
        work_root: Parent of the query's work directory (removed afterwards unless kept).
        options: Cycle options.
    """
    options = options or VerifyOptions()
    reason = engine.unsupported_reason(query)
    if reason:
        return Verdict(query, Status.UNSUPPORTED, reason)
    try:
        slack = round(options.watermark_slack_s * 1000)
        ref = reference(query, replace(data, watermark_slack_ms=slack))
    except NotCheckable as exc:
        return Verdict(query, Status.NOT_CHECKABLE, str(exc))
    work_dir = work_root / query
    shutil.rmtree(work_dir, ignore_errors=True)
    work_dir.mkdir(parents=True)
    spec = JobSpec(
        query=query,
        source_dir=parts.warmup_dir,
        work_dir=work_dir,
        sink=SinkKind.COLLECT,
        collect_dir=work_dir / "collect",
        state_ttl="0",  # exact results: no state may expire
        parallelism=options.parallelism,
        keep_source_open=True,
    )
    try:
        changes = Cycle(engine, spec, parts, options).run()
    except EngineError as exc:
        return Verdict(query, Status.FAILED, str(exc))
    finally:
        if not options.keep_work:
            shutil.rmtree(work_dir, ignore_errors=True)
    return check(ref, changes)
