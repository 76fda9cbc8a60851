"""`nexmark sustainable`: the highest rate each query keeps up with (docs/protocol.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from nexmark.cli.app import app
from nexmark.cli.run import execute, suite_options
from nexmark.cli.targets import with_target_options
from nexmark.durations import parse_seconds
from nexmark.protocol.prepare import RunOptions
from nexmark.protocol.suites import get_suite
from nexmark.protocol.sustainable import (
    DEFAULT_MAX_TRIALS,
    DEFAULT_MIN_RATE,
    DEFAULT_P99_BOUND_S,
    SearchOptions,
)
from nexmark.settings import Settings
from nexmark.workload.dataset import DEFAULT_FORMAT
from nexmark.workload.sizes import parse_count


@app.command()
@with_target_options
def sustainable(
    queries_: str = typer.Option(
        None, "--queries", "-q", help="A list like q0,q5 (default: the suite's)."
    ),
    events: str = typer.Option(
        None, "--events", "-n", help="Dataset size, e.g. 200M, 20M (default: the suite's)."
    ),
    suite: str = typer.Option("full", "--suite", help="full (200M events), quick (10M) or cep."),
    engine: str = typer.Option("flink", help="Engine to measure."),
    min_rate: str = typer.Option(
        f"{DEFAULT_MIN_RATE:.0f}",
        help="The lowest rate tried, events/s: the benchmark part's time slices hold 100 ms "
        "of events at it.",
    ),
    max_trials: int = typer.Option(
        DEFAULT_MAX_TRIALS, help="Benchmark phases per query, the full-speed one included."
    ),
    latency: bool = typer.Option(
        False,
        help="Stamp the trials' rows for their event-time latency and judge p99 against "
        "--p99-bound (off by default: the stamps cost the engine CPU, ~6% per event on "
        "Flink's q0 at the 0.1% stamped, which would lower the rate found).",
    ),
    p99_bound: str = typer.Option(
        f"{DEFAULT_P99_BOUND_S:g}s",
        help="With --latency: a trial whose p99 event-time latency exceeds this is not sustained.",
    ),
    parallelism: int = typer.Option(
        None, help="Job parallelism and source readers (default: from the settings, = cores)."
    ),
    checkpoint_interval: str = typer.Option(
        None, help="Periodic checkpoints, at most 30s (default: from the settings, 30 s)."
    ),
    state_ttl: str = typer.Option(None, help="State TTL for every query, e.g. '5 min'."),
    timeout: str = typer.Option("2h", help="Limit per trial (the first with the warm-up)."),
    results: Path = typer.Option(None, help="Results directory (default results/<run-id>)."),
    set_: list[str] = typer.Option([], "--set", help="Engine option SECTION.KEY=VALUE."),
    config: Path = typer.Option(None, help="A TOML file overriding the recommended setup."),
    seed: int = typer.Option(0, help="Seed of the generated dataset."),
    file_format: str = typer.Option(DEFAULT_FORMAT, "--format", help="parquet or csv."),
    report: bool = typer.Option(True, help="Write report.html and charts at the end."),
    target: dict | None = None,
) -> None:
    """Find the highest rate each query sustains: one warm-up, then a search over rates, each
    trial a benchmark phase restored from the warm-up's checkpoint and fed at its rate."""
    chosen = get_suite(suite)
    search = SearchOptions(
        min_rate=parse_count(min_rate, "--min-rate"),
        max_trials=max_trials,
        p99_bound_s=parse_seconds(p99_bound, "--p99-bound"),
        latency=latency,
    )
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
        search=search,
    )
    settings = Settings.load(config, set_, suite=chosen.settings_layer())
    execute(options, engine, settings, results, report=report, target=target)
