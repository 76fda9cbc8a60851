"""`nexmark run`: the two-phase benchmark over a suite of queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from nexmark.cli.app import app
from nexmark.cli.targets import with_target_options
from nexmark.console import err, out
from nexmark.errors import UsageError
from nexmark.metrics.system import SystemChecker, SystemCheckOptions
from nexmark.protocol.prepare import (
    RunOptions,
    parse_checkpoint_interval,
    parse_timeout,
    prepare_run,
)
from nexmark.protocol.runner import SuiteRun, new_run_id, run_suite
from nexmark.protocol.suites import get_suite
from nexmark.results.table import results_renderable
from nexmark.settings import Settings
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT
from nexmark.workload.sizes import parse_count


def suite_options(
    suite: str,
    queries_: str | None,
    events: str | None,
    checkpoint_interval: str | None,
    timeout: str,
    **given: Any,
) -> dict[str, Any]:
    """The `RunOptions` fields every command that runs a suite parses alike (the suite's
    queries and size unless given); `given` holds the ones taken as they are."""
    chosen = get_suite(suite)
    return dict(
        queries=tuple(q.name for q in queries.select(queries_ or chosen.queries)),
        events=parse_count(events or chosen.events, "--events"),
        suite=suite,
        checkpoint_interval_s=parse_checkpoint_interval(checkpoint_interval),
        timeout_s=parse_timeout(timeout),
        **given,
    )


def _repeat(given: int | None, suite_default: int, failover: bool) -> int:
    """--repeat as given (checked by RunOptions), else the suite's; a failover run has one."""
    if given is None:
        return 1 if failover else suite_default
    return given


@app.command()
@with_target_options
def run(
    queries_: str = typer.Option(
        None,
        "--queries",
        "-q",
        help="'all' (q0..q23), 'cep' (cep0..cep3) or a list like q0,q5,cep1 "
        "(default: the suite's).",
    ),
    events: str = typer.Option(
        None, "--events", "-n", help="Dataset size, e.g. 200M, 2M, 1e6 (default: the suite's)."
    ),
    suite: str = typer.Option(
        "full",
        "--suite",
        help="full (200M events, q0..q23), quick (10M, five queries) or cep (20M, cep0..cep3).",
    ),
    warmup_fraction: float = typer.Option(0.75, help="Share of the events in the warm-up."),
    engine: str = typer.Option("flink", help="Engine to benchmark."),
    parallelism: int = typer.Option(
        None, help="Job parallelism and source readers (default: from the settings, = cores)."
    ),
    checkpoint_interval: str = typer.Option(
        None, help="Periodic checkpoints, at most 30s (default: from the settings, 30 s)."
    ),
    state_ttl: str = typer.Option(
        None, help="State TTL for every query, e.g. '5 min' (default: from the settings)."
    ),
    timeout: str = typer.Option("2h", help="Limit per query (both phases), e.g. 30min."),
    results: Path = typer.Option(None, help="Results directory (default results/<run-id>)."),
    keep_checkpoints: bool = typer.Option(False, help="Keep checkpoints and scratch files."),
    set_: list[str] = typer.Option(
        [], "--set", help="Engine option SECTION.KEY=VALUE, e.g. flink.state.backend.type=hashmap."
    ),
    config: Path = typer.Option(None, help="A TOML file overriding the recommended setup."),
    seed: int = typer.Option(0, help="Seed of the generated dataset."),
    file_format: str = typer.Option(
        DEFAULT_FORMAT, "--format", help="Dataset files: parquet, or csv (the same events)."
    ),
    resume: bool = typer.Option(False, help="Skip the queries already in --results."),
    report: bool = typer.Option(True, help="Write report.html and charts at the end."),
    failover: bool = typer.Option(
        False, help="Kill a worker of each query in its benchmark phase (docs/failover.md)."
    ),
    failover_at: float = typer.Option(
        0.5, help="The kill point: this share of the benchmark events read (and a checkpoint)."
    ),
    repeat: int = typer.Option(
        None,
        help="Benchmark phases per query, each restored from the same warm-up's checkpoint "
        "(default: the suite's, quick 5, full 3; 1 with --failover).",
    ),
    rate: float = typer.Option(
        None,
        help="Feed the benchmark part at this many events/s on the wall clock (the warm-up "
        "at full speed); the benchmark part gets time slices of 100 ms at that rate.",
    ),
    runs: int = typer.Option(
        1,
        help="Whole cycles per query, each a fresh warm-up followed by its --repeat phases "
        "(for the warm-up's own variance); the statistics rest on every run's repeats.",
    ),
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
        repeat=_repeat(repeat, chosen.repeat, failover),
        runs=runs,
        rate=rate,
    )
    settings = Settings.load(config, set_, suite=chosen.settings_layer())
    execute(options, engine, settings, results, resume=resume, report=report, target=target)


def execute(
    options: RunOptions,
    engine: str,
    settings: Settings,
    results: Path | None,
    resume: bool = False,
    report: bool = True,
    target: dict | None = None,
) -> None:
    """Prepare and run the suite, print the table, write the report; exit 1 when a query
    failed or timed out (the commands that run a suite share this)."""
    checker = SystemChecker(SystemCheckOptions.from_settings(settings))  # checked before any work
    if resume and results is None:
        raise UsageError("--resume needs --results DIR (the directory of the run to continue)")
    run_id = new_run_id()
    results_dir = results or Path("results") / run_id
    prepared = prepare_run(options, engine, settings, target, show=err.print)
    spec = SuiteRun.of(prepared, results_dir, resume=resume, run_id=run_id, system_checker=checker)
    all_results = run_suite(spec, prepared.make_engine)
    out.print(results_renderable(all_results, title=f"nexmark {spec.run_id} on {engine}"))
    out.print(f"results: {results_dir / 'results.json'} and results.csv")
    if report:
        from nexmark.report.html import write_report

        out.print(f"report:  {write_report(results_dir)}")
    if any(r.status.value in ("failed", "timeout") for r in all_results):
        raise typer.Exit(1)
