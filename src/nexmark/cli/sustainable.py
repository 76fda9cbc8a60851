"""`nexmark sustainable`: the highest rate each query keeps up with (docs/protocol.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from nexmark.cli import options as opt
from nexmark.cli.run import execute, suite_options
from nexmark.cli.targets import with_target_options
from nexmark.protocol.preparation.prepare import RunOptions
from nexmark.protocol.scoring.sustainable import (
    DEFAULT_MAX_TRIALS,
    DEFAULT_MIN_RATE,
    DEFAULT_P99_BOUND_S,
    SearchOptions,
)
from nexmark.protocol.suite.suites import get_suite
from nexmark.settings import Settings
from nexmark.workload.dataset import DEFAULT_FORMAT

# sustainable's own flags (the shared ones are in cli/options.py).
MaxTrials = Annotated[
    int,
    opt.option(
        "--max-trials",
        parse=opt.parse_int,
        metavar="N",
        help="Trials per query: benchmark phases, each fed at a rate the search picks.",
    ),
]
Latency = Annotated[
    bool,
    typer.Option(
        help="Stamp the trials' rows for their event-time latency and judge p99 against "
        "--p99-bound (off by default: the stamps cost the engine CPU, ~6% per event on "
        "Flink's q0 at the 0.1% stamped, which would lower the rate found).",
    ),
]
P99Bound = Annotated[
    float,
    opt.option(
        "--p99-bound",
        parse=opt.parse_duration,
        metavar="DURATION",
        help="With --latency: a trial whose p99 event-time latency exceeds this is not sustained.",
    ),
]


@with_target_options
def sustainable(
    queries_: opt.SuiteQueries = None,
    events: opt.SuiteEvents = None,
    suite: opt.Suite = "full",
    engine: opt.Engine = "flink",
    min_rate: opt.MinRate = f"{DEFAULT_MIN_RATE:.0f}",
    max_trials: MaxTrials = DEFAULT_MAX_TRIALS,
    latency: Latency = False,
    p99_bound: P99Bound = f"{DEFAULT_P99_BOUND_S:g}s",
    parallelism: opt.Parallelism = None,
    checkpoint_interval: opt.CheckpointInterval = None,
    state_ttl: opt.StateTtl = None,
    timeout: opt.Timeout = "2h",
    results: opt.Results = None,
    set_: opt.Overrides = [],  # noqa: B006 (Typer's default, never mutated)
    config: opt.Config = None,
    seed: opt.Seed = 0,
    file_format: opt.Format = DEFAULT_FORMAT,
    report: opt.Report = True,
    target: dict | None = None,  # the engine's own target options (see cli/targets.py)
) -> None:
    """Find the highest rate each query sustains: one warm-up, then a search over rates, each
    trial a benchmark phase restored from the warm-up's checkpoint and fed at its rate."""
    chosen = get_suite(suite)
    search = SearchOptions(
        min_rate=min_rate,
        max_trials=max_trials,
        p99_bound_s=p99_bound,
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
