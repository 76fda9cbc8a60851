"""The verification cycle: one query through warm-up, checkpoint, cancel, restore and benchmark,
with a sink whose rows are read back and compared with the reference.

It is the benchmark's own protocol (`protocol.query.query_run.QueryRun`) run from the same
options (`protocol.preparation.options`) with a COLLECT sink and no state TTL (`verification`),
and the command's short settle time, so what is verified is what is measured. Both phases
keep the source open after their last event, as a benchmark does: the result therefore holds
exactly the windows the final watermark closed (see `reference.py`). A final checkpoint after
the last benchmark event commits every row the job produced. How the engine's rows are folded,
when its windows fire and what its final watermark is are read from the engine's declared
`ResultSemantics`, never assumed.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from nexmark.engines.base import NO_TTL, Change, Engine, FailoverSupport, Job, RowKind, SinkKind
from nexmark.errors import EngineError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.failover import Outage
from nexmark.protocol.query.phases import Phase
from nexmark.protocol.query.proofs import InvalidRunError
from nexmark.protocol.query.query_run import QueryRun
from nexmark.verify.check import Status, Verdict, check
from nexmark.verify.outputs import read_q10_files
from nexmark.verify.reference import EventData, NotCheckable, reference
from nexmark.verify.reference_sql import final_watermark_ms
from nexmark.workload import queries

if TYPE_CHECKING:  # (the Kafka client is imported only by a run that reads Kafka)
    from nexmark.protocol.preparation.kafka import KafkaParts

# Processing-time windows (q12) fire on the wall clock: wait one window length and a margin
# after the last benchmark event so that every window has fired before the final checkpoint
# (a warm-up window still open at the phase checkpoint fires in the restored job).
EXTRA_SETTLE_S = {"q12": 12.0}
# Between two reads of the collected rows that must agree (`VerifyRun._stable_rows`).
REREAD_S = 0.5
# The options of a verification unless given: a query's limit, and the settle time after each
# phase's last event (the source's periodic watermark leaves it: 200 ms on Flink); the
# benchmark phase then waits for the final watermark as well.
DEFAULTS = ProtocolOptions(timeout_s=600.0, settle_s=0.5)
# How long the end of the benchmark phase may wait for the job's watermark to reach the final
# one (a busy machine delays it beyond the settle time).
WATERMARK_WAIT_S = 20.0


def verification(options: ProtocolOptions, work_dir: Path) -> ProtocolOptions:
    """The run's options with verification's own few changes: exact results (no state may
    expire) read back from a COLLECT sink under `work_dir`."""
    return dataclasses.replace(
        options, state_ttl=NO_TTL, sink=SinkKind.COLLECT, collect_dir=work_dir / "collect"
    )


class VerifyRun(QueryRun):
    """The benchmark protocol itself, with a readable sink; reads the rows before the cancel."""

    rows: list[Change]
    # The watermark the benchmark phase must reach before its end checkpoint (epoch ms):
    # windows up to it fire. None: settle for `settle_s` only.
    final_watermark_ms: int | None = None
    notes: list[str]  # what went wrong with the run itself, for the verdict
    extra_settle_s: float = 0.0  # after the benchmark phase's settle (`EXTRA_SETTLE_S`)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.notes = []

    def settle(self, job: Job, phase: Phase) -> None:
        """After the fixed settle time, wait (up to WATERMARK_WAIT_S) for the job's watermark
        to reach the final one, so a loaded machine cannot end the phase before its last
        windows fire. Jobs without an event-time operator report no watermark; a restored job
        whose operators still await their first watermark is waited for (its end checkpoint
        would otherwise cover none of the rows that watermark releases)."""
        super().settle(job, phase)
        if phase is Phase.BENCHMARK:
            self.waits.sleep(self.extra_settle_s)
        if phase is not Phase.BENCHMARK or self.final_watermark_ms is None:
            return
        until = self.clock() + WATERMARK_WAIT_S
        watermark = None
        while self.clock() < until:
            watermark = job.watermark_ms()
            if watermark is not None and watermark >= self.final_watermark_ms:
                return
            if watermark is None and not job.awaits_watermark():
                return
            self.check_alive(job)
            self.waits.sleep(0.2)
        if watermark is None:  # still awaited: the protocol's own check fails the run
            return
        self.notes.append(
            f"the benchmark phase ended with watermark {watermark} after a "
            f"{WATERMARK_WAIT_S:.0f} s wait, below the final watermark "
            f"{self.final_watermark_ms}: rows it releases are missing"
        )

    def before_stop(self, job: Job) -> None:
        self.rows = self._stable_rows(job)

    def _stable_rows(self, job: Job) -> list[Change]:
        """The collected rows, once two reads `REREAD_S` apart agree.

        A sink may publish what a checkpoint committed a moment after the checkpoint is reported
        complete (the commit follows the completion notice), so one read could be short.
        """
        rows = self._rows(job)
        while True:
            self.waits.sleep(REREAD_S)
            again = self._rows(job)
            if len(again) == len(rows):
                return again
            self.check_alive(job)
            rows = again

    def _rows(self, job: Job) -> list[Change]:
        if queries.get(self.query).own_sink:  # q10 writes its own files
            return [Change(RowKind.ADD, row) for row in read_q10_files(self.work_dir)]
        return job.collected_rows()


def verify_query(
    engine: Engine,
    query: str,
    parts: PhaseParts,
    data: EventData,
    work_root: Path,
    options: ProtocolOptions = DEFAULTS,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
    *,
    watermark_slack_s: float | None = None,
    failover: FailoverSupport | None = None,
    display: RunDisplay | None = None,
    kafka: KafkaParts | None = None,
) -> Verdict:
    """Verify one query: unsupported / not checkable / match / mismatch / failed.

    Args:
        engine: A started engine.
        query: "q0".."q23".
        parts: The dataset's two parts.
        data: The dataset's events (see `reference.load_events`); read with the engine's
            declared result semantics.
        work_root: Parent of the query's work directory (removed afterwards unless kept).
        options: The run's options (`DEFAULTS` unless given); `verification` makes them
            exact and readable. `keep_checkpoints` keeps the query's work directory.
        clock, sleep: The time the cycle waits on (every settle, poll and timeout); a test
            injects the fake engine's clock so that a cycle takes no wall time.
        watermark_slack_s: How far below the final watermark the engine's last may stay (rows
            it would release are optional); None: the engine's (`ResultSemantics`).
        failover: What `Engine.enable_failover` returned (None: no failover): a worker is
            killed in the benchmark phase (after a periodic checkpoint) and the rows must
            still match exactly.
        display: Where its phases show (`nexmark verify`: as a run's); None: nowhere.
        kafka: --source kafka: the loaded parts' topics (`PreparedRun.kafka`); None: files.
    """
    reason = engine.unsupported_reason(query)
    if reason:
        return Verdict(query, Status.UNSUPPORTED, reason)
    slack = None if watermark_slack_s is None else round(watermark_slack_s * 1000)
    run_data = data.for_engine(engine.semantics().for_source(options.source), slack)
    try:
        ref = reference(query, run_data)
    except NotCheckable as exc:
        return Verdict(query, Status.NOT_CHECKABLE, str(exc))
    work_dir = work_root / query
    shutil.rmtree(work_dir, ignore_errors=True)
    protocol = verification(options, work_dir)

    args = (engine, query, parts, work_dir, protocol, display or RunDisplay(1, enabled=False))
    make_run = partial(VerifyRun, *args, clock, sleep, failover=failover, kafka=kafka)
    run = _valid_run(query, work_dir, run_data, make_run)
    if isinstance(run, Verdict):
        return run
    verdict = check(ref, run.rows)
    verdict.measured = run.measured
    verdict.notes.extend(run.notes)
    if failover is not None:
        verdict.notes.append(failover_note(run.measured.outage))
    return verdict


def _valid_run(
    query: str,
    work_dir: Path,
    run_data: EventData,
    make_run: Callable[[], VerifyRun],
) -> VerifyRun | Verdict:
    """The query's verification run, once more if the first was not valid (`InvalidRunError`:
    not a wrong result); its FAILED verdict when it failed."""
    for attempt in (1, 2):
        run = make_run()
        run.extra_settle_s = EXTRA_SETTLE_S.get(query, 0.0)
        if run_data.final_watermark is not None:  # the rows it must release
            run.final_watermark_ms = final_watermark_ms(run_data) - run_data.watermark_slack_ms
        try:
            run.execute()
            return run
        except InvalidRunError as exc:  # an invalid run, not a wrong result: once more
            if attempt == 2:
                return Verdict(query, Status.FAILED, str(exc))
            shutil.rmtree(work_dir, ignore_errors=True)
        except EngineError as exc:
            return Verdict(query, Status.FAILED, str(exc))
    raise AssertionError("unreachable")


def failover_note(outage: Outage | None) -> str:
    """What the benchmark phase's failover did, for the verdict's details."""
    if outage is None:
        return "failover: no failure observed"
    recovery = outage.recovery
    at_restore = recovery.events_at_restore if recovery else None
    replayed = outage.events_replayed
    killed = outage.killed or "a worker (observed)"
    if at_restore is None or outage.events_at_kill is None:
        return f"failover: killed {killed}; restored position unknown"
    kill_count = outage.kill_point
    if kill_count is None:  # the engine's count lagged its source: the kill came later
        return (
            f"failover: killed {killed} after {outage.events_at_kill:,} events, restored at "
            f"{at_restore:,} (how many read again is unknown: the count at the kill lagged)"
        )
    return (
        f"failover: killed {killed} at {kill_count:,} events, restored at "
        f"{at_restore:,} ({replayed:,} read again)"
    )
