"""A suite of queries: dataset, engine lifecycle, failure isolation, results appended per query.

A query that fails or times out is recorded with its reason and the suite goes on (restarting
the engine after a failure, so one broken JVM cannot poison the next query). Ctrl-C cancels the
running job, stops the engine and keeps every result already written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rich.markup import escape

from nexmark import diskspace, interrupts
from nexmark.engines.base import Engine, FailoverSupport
from nexmark.errors import (
    DiskFullError,
    EngineError,
    Interrupted,
    NexmarkError,
    QueryTimeoutError,
    UsageError,
)
from nexmark.metrics import system
from nexmark.metrics.machine import collect_machine
from nexmark.protocol.preparation import leftovers, resume
from nexmark.protocol.preparation.kafka import KafkaParts
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.preparation.prepare import PreparedRun
from nexmark.protocol.progress.display import RunDisplay
from nexmark.protocol.query.profiled import PROFILES_DIR, ScoredProfile
from nexmark.protocol.query.query_run import QueryRun
from nexmark.protocol.scoring.record import RunContext, build_result, status_result
from nexmark.protocol.scoring.sustainable import RateSearch
from nexmark.protocol.suite.calibrate import calibrate
from nexmark.results.figures import SourceCalibration
from nexmark.results.flag_tables import scored_other_cores
from nexmark.results.query_result import QueryResult
from nexmark.results.setup import BUSY_CORES, SystemCheck
from nexmark.results.store import ResultStore
from nexmark.workload.dataset import Dataset


@dataclass
class SuiteRun:
    """Everything one `nexmark run` needs besides the engine factory."""

    queries: list[str]
    dataset: Dataset
    results_dir: Path
    options: ProtocolOptions
    resume: bool = False
    run_id: str = field(default_factory=lambda: new_run_id())
    show_progress: bool = True
    recorded_options: dict = field(default_factory=dict)  # what the results' setup records
    # Measure the data path's ceiling (a source-only job on the benchmark part) before the
    # queries; every result of the sitting records it (protocol/suite/calibrate.py).
    calibrate: bool = True
    # A failover run (docs/failover.md): the engine is asked to `enable_failover` before each
    # start, and what it answers goes to each query's run beside the options.
    failover: bool = False
    # A CPU profile of each query's scored phases (docs/profiling.md): the engine is asked to
    # `enable_profiling` before each start; flame graphs go to profiles/ of the results.
    profile: bool = False
    # The system check before the run and before each query (metrics/system.py). Its default
    # windows are 0 (no waiting, no CPU figure); `nexmark run` takes them from the settings.
    system_checker: system.SystemChecker = field(default_factory=system.SystemChecker)
    # A suite whose queries read datasets of different sizes (`Suite.sittings`): the events of
    # each, which a resumed directory's results are compared with per query. None: one size.
    events_by_query: dict[str, int] | None = None
    # --source kafka: the loaded parts' topics, which the jobs read (`PreparedRun.kafka`).
    kafka: KafkaParts | None = None

    @classmethod
    def of(cls, prepared: PreparedRun, results_dir: Path, **more) -> SuiteRun:
        """The suite of a prepared run: the protocol runs from its one `RunOptions`, and what
        the results record is derived from the same object."""
        options = prepared.options
        return cls(
            list(options.queries),
            prepared.dataset,
            results_dir,
            options,
            recorded_options=options.recorded(),
            failover=options.failover,
            profile=options.profile,
            kafka=prepared.kafka,
            **more,
        )


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]


def run_suite(suite: SuiteRun, make_engine: Callable[[], Engine]) -> list[QueryResult]:
    """Run every query not already done; return every result in the results directory."""
    store = ResultStore(suite.results_dir)
    done = _already_done(store, suite)
    todo = [q for q in suite.queries if q not in done]
    parts = PhaseParts.of(suite.dataset)
    engines = _Engines(make_engine, suite.failover, suite.profile)
    make_engine = engines.make
    engine = make_engine()
    work_dir = suite.results_dir / "work"
    per_query = _events_per_query(parts, suite.options)
    with RunDisplay(len(todo), suite.show_progress, events_per_query=per_query) as display:
        _say_resumed(display, suite.results_dir, done)
        try:
            # Before the engine starts: what the machine does without this run.
            before_run = suite.system_checker.before_run()
            display.message(f"system: {escape(system.summary_line(before_run))}")
            _warn_about_the_machine(display, before_run, "the run")
            engine.start()
            leftovers.record(suite.results_dir)  # what a killed runner would leave running
            for note in engine.target_notes():
                display.message(f"note: {escape(note)}")
            source = None
            if todo and suite.calibrate:
                engine, source = _source_ceiling(engine, make_engine, parts, suite, display)
            ctx = _context(suite, engine, source, before_run)
            for index, query in enumerate(todo):
                display.query_started(query, index)
                leftovers.record(suite.results_dir)  # a restarted engine's processes too
                # The engine idles between queries; its processes are ours and not counted.
                before_query = suite.system_checker.before_query()
                _warn_about_the_machine(display, before_query, query)
                with interrupts.noted() as interrupted:
                    result = _run_one(engine, query, parts, suite, ctx, display, engines)
                result.system_check = before_query
                if interrupted():  # a Ctrl-C that a library swallowed (py4j's finalizers do)
                    raise KeyboardInterrupt
                if result.status in ("failed", "timeout"):  # not the query's result: unrecorded
                    _stop_if_disk_full(query, result.reason, work_dir / query, suite)
                _store(store, result)
                display.query_finished(result.status.value, _summary(result))
                if result.status in ("failed", "timeout"):
                    engine = _restart(engine, make_engine, display, suite)
            if todo:
                display.message(display.suite.closing_line(len(todo)))
        except KeyboardInterrupt:
            raise Interrupted(
                f"interrupted; finished results are kept in {suite.results_dir}"
            ) from None
        finally:
            engine.close()
            leftovers.forget(suite.results_dir)
            if not suite.options.keep_checkpoints:
                # Each query removed its work directory, but an engine's background threads
                # can write into it afterwards (Spark's state store maintenance writes
                # snapshots into a stopped query's checkpoint): once the engine is closed
                # nothing writes, so what is left goes.
                shutil.rmtree(suite.results_dir / "work", ignore_errors=True)
            _remove_if_empty(suite.results_dir / "work")
    return store.load()


def _events_per_query(parts: PhaseParts, options: ProtocolOptions) -> int:
    """What one query reads: its warm-up and every scored phase, in each of its runs."""
    return (parts.warmup_events + parts.benchmark_events * options.repeat) * max(1, options.runs)


def _say_resumed(display: RunDisplay, results_dir: Path, done: set[str]) -> None:
    """Before the engine starts: what is kept, and the work a killed run left unfinished (its
    last query's, its source ceiling's) removed, to be redone afresh."""
    unfinished = leftovers.remove_unfinished_work(results_dir, done)
    if done:
        display.message(f"resuming: {len(done)} queries already in {results_dir}")
    if unfinished:
        display.message(f"removed the unfinished work of an earlier run: {', '.join(unfinished)}")


def _context(
    suite: SuiteRun, engine: Engine, source: SourceCalibration | None, before_run: SystemCheck
) -> RunContext:
    """What every result of the run shares."""
    info = engine.info()
    return RunContext(
        suite.run_id,
        suite.dataset,
        info,
        dataclasses.replace(collect_machine(), java=info.java),  # the engine's Java
        suite.recorded_options,
        source,
        system_check=before_run,
    )


def _source_ceiling(
    engine: Engine,
    make_engine: Callable[[], Engine],
    parts: PhaseParts,
    suite: SuiteRun,
    display: RunDisplay,
) -> tuple[Engine, SourceCalibration]:
    """The run's source ceiling (protocol/suite/calibrate.py), and the engine to go on with (a new
    one when the ceiling's job failed)."""
    work_dir = suite.results_dir / "work"
    display.message("source ceiling: the benchmark part read once, source only")
    source = calibrate(engine, parts, work_dir / "source", suite.options, topics=suite.kafka)
    display.message(f"  {escape(source_summary(source))}")
    if source.status in ("failed", "timeout"):
        _stop_if_disk_full("the source ceiling", source.reason, work_dir, suite)
        engine = _restart(engine, make_engine, display, suite)
    return engine, source


def _store(store: ResultStore, result: QueryResult) -> None:
    """Append the query's result; a full disk ends the run, saying what is not recorded."""
    try:
        store.append(result)
    except DiskFullError as exc:
        why = f": {_shorter(result.reason)}" if result.reason else ""
        raise DiskFullError(
            f"{exc}; {result.query} ({result.status.value}{why}) is not recorded"
        ) from None


def _stop_if_disk_full(what: str, reason: str | None, work: Path, suite: SuiteRun) -> None:
    """A failure from a full disk ends the run: every later query would fail alike."""
    if not diskspace.is_disk_full(reason):
        return
    where = f"work directory {work}: {diskspace.free_space(work)}"
    temp = Path(tempfile.gettempdir())
    if diskspace.mount_point(temp) != diskspace.mount_point(work):
        where += f"; temp directory {temp}: {diskspace.free_space(temp)}"
    raise DiskFullError(
        f"disk full: {what} failed ({_shorter(reason)}); {where}; the run stopped with "
        f"{what} unrecorded (free some space, then --resume runs it again), finished results "
        f"are kept in {suite.results_dir}"
    )


def _shorter(reason: str | None, most: int = 240) -> str:
    """One line of at most about `most` characters: its start and its end (a Java message
    ends with its root cause)."""
    reason = " ".join((reason or "").split())
    return reason if len(reason) <= most else f"{reason[: most // 2]} ... {reason[-most // 2 :]}"


def source_summary(source: SourceCalibration) -> str:
    """One line: the source ceiling, or why there is none."""
    if source.status != "ok":
        return f"source ceiling {source.status}: {source.reason}"
    cores = f"{source.cores:.2f}" if source.cores is not None else "?"
    return (
        f"source ceiling: {source.throughput_eps or 0:,.0f} events/s on {cores} cores "
        f"({source.events:,} events in {source.time_s or 0:.2f} s, parallelism "
        f"{source.parallelism})"
    )


def _warn_about_the_machine(display: RunDisplay, check: SystemCheck, before: str) -> None:
    """What the system check found against a fair measurement: other processes busy, and
    (before the run) a machine slower than it looks (lazily backed memory, partial cores)."""
    line = system.warning_line(check, before)
    lines = ([] if line is None else [line]) + system.speed_warnings(check.speed, check.cpus)
    for line in lines:
        display.message(f"[yellow]{escape(line)}[/]")


class _Engines:
    """The suite's engines, one at a time: in a failover run each new one is set up for it,
    and what it answered (`failover`) goes to each query's run beside the options; in a
    profiled run likewise, with why it cannot be profiled (`not_profiled`) if it cannot."""

    def __init__(self, make_engine: Callable[[], Engine], failover: bool, profile: bool) -> None:
        self._make, self._asked, self.profile = make_engine, failover, profile
        self.failover: FailoverSupport | None = None
        self.not_profiled: str | None = None

    def make(self) -> Engine:
        engine = self._make()
        if self._asked:
            self.failover = engine.enable_failover()
        if self.profile:  # (after failover: a failover run's target is another process)
            self.not_profiled = engine.enable_profiling()
        return engine


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):  # rmdir only succeeds when every query cleaned up
        path.rmdir()


def _run_one(
    engine: Engine,
    query: str,
    parts: PhaseParts,
    suite: SuiteRun,
    ctx: RunContext,
    display: RunDisplay,
    engines: _Engines,
) -> QueryResult:
    reason = engine.unsupported_reason(query)
    if reason:
        return status_result(ctx, query, "unsupported", reason)
    work_dir = suite.results_dir / "work" / query
    search = None
    if suite.options.search is not None:
        ceiling = ctx.source
        if ceiling is None or ceiling.status != "ok" or not ceiling.throughput_eps:
            why = (ceiling and ceiling.reason) or "not measured"
            return status_result(
                ctx, query, "failed", f"the rate search is bounded by the source ceiling: {why}"
            )
        search = RateSearch(suite.options.search, ceiling.throughput_eps)
    profile = None
    if engines.profile:  # (named relative to the results directory, which moves with it)
        name = f"{PROFILES_DIR}/{query}.html"
        profile = ScoredProfile(engine, suite.results_dir / name, name, engines.not_profiled)
    run = QueryRun(
        engine, query, parts, work_dir, suite.options, display, search=search,
        failover=engines.failover, profile=profile, kafka=suite.kafka,
    )  # fmt: skip
    try:
        measured = run.execute()
    except QueryTimeoutError as exc:
        return status_result(ctx, query, "timeout", str(exc), run.measured, run.sampler, parts)
    except NexmarkError as exc:
        return status_result(ctx, query, "failed", str(exc), run.measured, run.sampler, parts)
    return build_result(ctx, measured, run.sampler, parts)


def _summary(r: QueryResult) -> str:
    if not r.ok:
        return r.reason or ""
    line = f"{r.throughput_eps or 0:,.0f} events/s, recovery {r.recovery_time_s or 0:.2f} s"
    other = scored_other_cores(r)
    if other is not None and other > BUSY_CORES:  # its figures may be low: say so at once
        line += f"; shared the machine: other processes used {other:.2f} cores"
    return line


def _restart(
    engine: Engine, make_engine: Callable[[], Engine], display: RunDisplay, suite: SuiteRun
) -> Engine:
    """A failure may have left the engine broken: start a fresh one for the next query. If
    none starts (a remote cluster gone) the run stops there, in one line."""
    display.message("  restarting the engine after the failure")
    engine.close()
    fresh = make_engine()
    try:
        fresh.start()
    except EngineError as exc:
        fresh.close()
        raise EngineError(
            f"the engine could not be started again after the failure, so the run stopped "
            f"({exc}); finished results are kept in {suite.results_dir} (--resume runs the "
            "rest)"
        ) from None
    return fresh


def _already_done(store: ResultStore, suite: SuiteRun) -> set[str]:
    existing = store.load()
    resume.check_results_dir(existing, suite.results_dir, suite.resume)
    if existing:
        suite.run_id = existing[0].run_id  # a resumed run keeps its identity
        recorded = existing[0].setup.options
        for flag, before, now in (
            ("--repeat", recorded.get("repeat", 1), suite.options.repeat),
            ("--runs", recorded.get("runs", 1), suite.options.runs),
        ):
            if before != now:
                raise UsageError(
                    f"{suite.results_dir} was run with {flag} {before}; resume it with "
                    f"{flag} {before}, not {now}"
                )
        # (`nexmark run` compared the engine and the job setups before any work)
        diffs = resume.option_differences(
            existing, None, suite.recorded_options, suite.events_by_query
        )
        resume.refuse_if_different(suite.results_dir, diffs)
    return store.completed_queries() if suite.resume else set()
