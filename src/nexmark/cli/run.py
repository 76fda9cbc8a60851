"""`nexmark run`: the two-phase benchmark over a suite of queries."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from nexmark.cli import options as opt
from nexmark.cli.targets import with_target_options
from nexmark.console import err, out
from nexmark.engines.base import JobSetup
from nexmark.errors import UsageError
from nexmark.metrics.system import SystemChecker, SystemCheckOptions
from nexmark.protocol.preparation import leftovers, run_plan, store
from nexmark.protocol.preparation import resume as resume_check
from nexmark.protocol.preparation.prepare import RunOptions, prepare_run
from nexmark.protocol.preparation.runlock import RunLock, describe
from nexmark.protocol.suite.runner import SuiteRun, new_run_id, run_suite
from nexmark.protocol.suite.suites import get_suite
from nexmark.results.query_result import QueryResult
from nexmark.results.store import ResultStore
from nexmark.results.table import results_renderable
from nexmark.settings import Settings
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT, DatasetParams
from nexmark.workload.sizes import parse_count


def suite_options(
    suite: str,
    queries_: str | None,
    events: int | None,
    checkpoint_interval_s: float | None,
    timeout_s: float,
    **given: Any,
) -> dict[str, Any]:
    """The `RunOptions` fields every command that runs a suite fills alike (the suite's
    queries and size unless given); `given` holds the ones taken as they are. The flags
    arrive parsed (cli/options.py)."""
    chosen = get_suite(suite)
    return dict(
        queries=tuple(q.name for q in queries.select(queries_ or chosen.queries)),
        events=parse_count(chosen.events, "--events") if events is None else events,
        suite=suite,
        checkpoint_interval_s=checkpoint_interval_s,
        timeout_s=timeout_s,
        **given,
    )


def _repeat(given: int | None, suite_default: int, failover: bool) -> int:
    """--repeat as given (checked by RunOptions), else the suite's; a failover run has one."""
    if given is None:
        return 1 if failover else suite_default
    return given


# run's own flags (the shared ones are in cli/options.py).
Resume = Annotated[bool, typer.Option(help="Skip the queries already in --results.")]
FailoverAt = Annotated[
    float,
    opt.option(
        "--failover-at",
        parse=opt.parse_float,
        metavar="SHARE",
        help="The kill point: this share of the benchmark events read (and a checkpoint).",
    ),
]
Repeat = Annotated[
    int | None,
    opt.option(
        "--repeat",
        parse=opt.parse_int,
        metavar="N",
        help="Benchmark phases per query, each restored from the same warm-up's checkpoint "
        "(default: the suite's, quick 5, full 3; 1 with --failover).",
    ),
]
Runs = Annotated[
    int,
    opt.option(
        "--runs",
        parse=opt.parse_int,
        metavar="N",
        help="Whole cycles per query, each a fresh warm-up followed by its --repeat phases "
        "(for the warm-up's own variance); the statistics rest on every run's repeats.",
    ),
]


@with_target_options
def run(
    queries_: opt.SuiteQueries = None,
    events: opt.SuiteEvents = None,
    suite: opt.Suite = "full",
    warmup_fraction: opt.WarmupFraction = 0.75,
    engine: opt.Engine = "flink",
    parallelism: opt.Parallelism = None,
    checkpoint_interval: opt.CheckpointInterval = None,
    state_ttl: opt.StateTtl = None,
    timeout: opt.Timeout = "2h",
    results: opt.Results = None,
    keep_checkpoints: opt.KeepCheckpoints = False,
    set_: opt.Overrides = [],  # noqa: B006 (Typer's default, never mutated)
    config: opt.Config = None,
    seed: opt.Seed = 0,
    file_format: opt.Format = DEFAULT_FORMAT,
    resume: Resume = False,
    report: opt.Report = True,
    failover: opt.Failover = False,
    profile: opt.Profile = False,
    failover_at: FailoverAt = 0.5,
    repeat: Repeat = None,
    rate: opt.Rate = None,
    runs: Runs = 1,
    data: opt.Data = None,
    checkpoints: opt.Checkpoints = None,
    s3_local: opt.S3Local = False,
    source: opt.Source = "files",
    kafka_bootstrap: opt.KafkaBootstrap = None,
    kafka_dir: opt.KafkaDir = None,
    target: dict | None = None,  # the engine's own target options (see cli/targets.py)
) -> None:
    """Run the two-phase benchmark: warm-up, checkpoint, restore, scored benchmark phase."""
    chosen = get_suite(suite)
    options = RunOptions(
        **suite_options(
            suite,
            queries_,
            events,
            checkpoint_interval,
            timeout,
            seed=seed,
            format=file_format,
            state_ttl=state_ttl,
            parallelism=parallelism,
        ),
        warmup_fraction=warmup_fraction,
        keep_checkpoints=keep_checkpoints,
        failover=failover,
        failover_at=failover_at,
        profile=profile,
        repeat=_repeat(repeat, chosen.repeat, failover),
        runs=runs,
        rate=rate,
        data=data,
        checkpoints=checkpoints,
        source=source,
        kafka_bootstrap=kafka_bootstrap,
        kafka_dir=kafka_dir,
    )
    settings = Settings.load(config, set_, suite=chosen.settings_layer())
    # The suite's sizes per query, unless --events sets one for all (or the data is one given
    # dataset: a folder, a store's prefix or a Kafka load).
    own_data = events is None and data is None and source == "files"
    sittings = chosen.sittings(options.queries) if own_data else None
    with opt.s3_local_store(s3_local, options.data, options.checkpoints):
        execute(
            options, engine, settings, results, resume=resume, report=report, target=target,
            sittings=sittings,
        )  # fmt: skip


def execute(
    options: RunOptions,
    engine: str,
    settings: Settings,
    results: Path | None,
    resume: bool = False,
    report: bool = True,
    target: dict | None = None,
    sittings: list[tuple[int, tuple[str, ...]]] | None = None,
) -> None:
    """Prepare and run the suite, print the table, write the report; exit 1 when a query
    failed or timed out (the commands that run a suite share this).

    `sittings`: (events, queries) pairs where the queries read datasets of different sizes
    (`Suite.sittings`): each is prepared and run in turn (its dataset, engine and source
    ceiling) into the same results directory, as one run; None: `options` as they are."""
    checker = SystemChecker(SystemCheckOptions.from_settings(settings))  # checked before any work
    if resume and results is None:
        raise UsageError("--resume needs --results DIR (the directory of the run to continue)")
    run_id = new_run_id()
    results_dir = results or Path("results") / run_id
    parts = [
        dataclasses.replace(options, events=events, queries=names)
        for events, names in sittings or [(options.events, options.queries)]
    ]
    # Each query's events, compared per query on --resume, where the sizes differ.
    sizes = {q: p.events for p in parts for q in p.queries} if len(parts) > 1 else None
    with RunLock(results_dir) as lock:  # one run per results directory
        all_results = _claim(results_dir, lock, parts, engine, resume, sizes)
        for index, part in enumerate(parts):
            if {r.query for r in all_results}.issuperset(part.queries):
                continue  # a resumed run's finished sitting: its dataset is not needed
            # Each sitting after the first continues the run the first began (its id).
            suite_kw = dict(
                resume=resume or index > 0, run_id=run_id, system_checker=checker,
                events_by_query=sizes,
            )  # fmt: skip
            all_results = _sitting(
                part, engine, settings, target, results_dir, all_results, suite_kw
            )
        shown_id = all_results[0].run_id if all_results else run_id
        _show(all_results, shown_id, engine, results_dir, report)
    if any(r.status.value in ("failed", "timeout") for r in all_results):
        raise typer.Exit(1)


def _sitting(
    options: RunOptions,
    engine: str,
    settings: Settings,
    target: dict | None,
    results_dir: Path,
    existing: list[QueryResult],
    suite_kw: dict[str, Any],
) -> list[QueryResult]:
    """One dataset's queries, prepared and run; every result in the directory after them."""
    before_work = functools.partial(_before_work, options, engine, results_dir, existing)
    prepared = prepare_run(options, engine, settings, target, err.print, before_work)
    try:  # the embedded Kafka broker and the run's prefix on a store go, however it ends
        return run_suite(SuiteRun.of(prepared, results_dir, **suite_kw), prepared.make_engine)
    finally:
        prepared.close()
        store.remove(prepared.options.store_dir, prepared.options.keep_checkpoints)


def _claim(
    results_dir: Path,
    lock: RunLock,
    parts: list[RunOptions],
    engine: str,
    resume: bool,
    sizes: dict[str, int] | None,
) -> list[QueryResult]:
    """The results directory made this run's, before any work: what a killed run left there
    is cleaned up, and a directory of another run is refused (one line, nothing touched).
    `sizes`: each query's events where the run's sittings differ in size (None: one size)."""
    if lock.taken_over:
        held = describe(lock.taken_over)
        err.print(
            escape(f"note: {results_dir} was left locked by a killed run ({held})"), soft_wrap=True
        )
    for line in leftovers.reap(results_dir):
        err.print(escape(f"note: {line}"), highlight=False, soft_wrap=True)
    existing = ResultStore(results_dir).load()
    resume_check.check_results_dir(existing, results_dir, resume)
    diffs = resume_check.option_differences(existing, engine, parts[0].recorded(), sizes)
    resume_check.refuse_if_different(results_dir, diffs)
    return existing


def _before_work(
    options: RunOptions,
    engine: str,
    results_dir: Path,
    existing: list[QueryResult],
    setups: dict[str, JobSetup],
    params: DatasetParams,
) -> None:
    """Once every job's setup is resolved, before the dataset: the finished queries' setups
    compared, the plan printed, the disk it needs checked."""
    resume_check.refuse_if_different(results_dir, resume_check.setup_differences(existing, setups))
    need = run_plan.dataset_need(params, options.data)
    seen = run_plan.largest_checkpoint(results_dir.parent, engine, options.events, options.queries)
    done = {r.query for r in existing}
    for line in run_plan.plan_lines(options, engine, done, need, seen, results_dir.parent):
        err.print(escape(line), highlight=False, soft_wrap=True)
    work = results_dir / "work"
    for line in run_plan.check_disk(need, seen, work, options.checkpoints_on_store):
        err.print(escape(line), highlight=False, soft_wrap=True)


def _show(
    all_results: list[QueryResult], run_id: str, engine: str, results_dir: Path, report: bool
) -> None:
    out.print(results_renderable(all_results, title=f"nexmark {run_id} on {engine}"))
    out.print(f"results: {results_dir / 'results.json'} and results.csv")
    if report:
        from nexmark.report.html import write_report

        out.print(f"report:  {write_report(results_dir)}")
