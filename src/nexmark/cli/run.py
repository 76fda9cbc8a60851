"""`nexmark run`: the two-phase benchmark over a suite of queries."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import typer

from nexmark.cli.app import app
from nexmark.cli.targets import with_target_options
from nexmark.console import err, out
from nexmark.durations import parse_seconds
from nexmark.engines import registry
from nexmark.engines.base import StateTtl
from nexmark.errors import UsageError
from nexmark.protocol.plan import planned_setups, sized_dataset, ttl_warnings
from nexmark.protocol.query_run import MAX_CHECKPOINT_INTERVAL_S, ProtocolOptions, check_repeat
from nexmark.protocol.runner import SuiteRun, new_run_id, run_suite
from nexmark.protocol.suites import get_suite
from nexmark.results.table import results_renderable
from nexmark.settings import Settings
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT, DatasetParams, check_format
from nexmark.workload.feed import PartFeed, check_rate, check_rate_duration, rate_slices
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset


def _protocol_options(
    checkpoint_interval: str | None,
    timeout: str,
    state_ttl: str | None,
    parallelism: int | None,
    keep_checkpoints: bool,
) -> ProtocolOptions:
    """The protocol's options; engine-level flags stay None unless given (= the settings')."""
    interval = None
    if checkpoint_interval is not None:
        interval = parse_seconds(checkpoint_interval, "--checkpoint-interval")
        if not 0 < interval <= MAX_CHECKPOINT_INTERVAL_S:
            raise UsageError(
                f"--checkpoint-interval must be above 0 and at most 30 s (the protocol's bound), "
                f"got {checkpoint_interval}"
            )
    ttl = None if state_ttl is None else StateTtl.parse(state_ttl, "--state-ttl")
    timeout_s = parse_seconds(timeout, "--timeout")
    if timeout_s <= 0:
        raise UsageError("--timeout must be positive")
    if parallelism is not None and parallelism < 1:
        raise UsageError(f"--parallelism must be at least 1, got {parallelism}")
    return ProtocolOptions(
        checkpoint_interval_s=interval,
        state_ttl=ttl,
        parallelism=parallelism,
        timeout_s=timeout_s,
        keep_checkpoints=keep_checkpoints,
    )


def _repeat(given: int | None, suite_default: int, failover: bool) -> int:
    """--repeat as given (checked), else the suite's default; a failover run has one phase."""
    if given is None:
        return 1 if failover else suite_default
    check_repeat(given, True)
    if failover and given != 1:
        raise UsageError(
            f"--failover measures one benchmark phase per query: use --repeat 1, not {given}"
        )
    return given


def _rate(given: float | None, failover: bool) -> float | None:
    """--rate as given, checked (the dataset's layout is checked once it is made)."""
    if given is None:
        return None
    check_rate(given)
    if failover:
        raise UsageError("--rate and --failover measure different things: use one of them")
    return float(given)


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
    target: dict | None = None,  # the engine's own target options (see cli/targets.py)
) -> None:
    """Run the two-phase benchmark: warm-up, checkpoint, restore, scored benchmark phase."""
    chosen = get_suite(suite)
    selected = [q.name for q in queries.select(queries_ or chosen.queries)]
    n_events = parse_count(events or chosen.events, "--events")
    if n_events <= 0:
        raise UsageError(f"--events must be a positive number of events, got {events}")
    options = _protocol_options(
        checkpoint_interval, timeout, state_ttl, parallelism, keep_checkpoints
    )
    settings = Settings.load(config, set_, suite=chosen.settings_layer())
    repeat = _repeat(repeat, chosen.repeat, failover)
    options.repeat = repeat
    options.rate = _rate(rate, failover)
    if resume and results is None:
        raise UsageError("--resume needs --results DIR (the directory of the run to continue)")
    run_id = new_run_id()
    results_dir = results or Path("results") / run_id
    engine_args = {"settings": settings, **(target or {})}
    # Every job's setup resolved once, before anything runs: the protocol's bounds checked,
    # one dataset file per source reader of the job.
    planner = registry.load(engine, **engine_args)
    check_repeat(repeat, planner.capabilities().repeatable_restore)
    if rate is not None and not planner.capabilities().rate_feed:
        raise UsageError(f"--rate: {engine} cannot feed a phase at a set rate")
    setups = planned_setups(planner, selected, options)
    readers = setups[selected[0]].parallelism
    params = sized_dataset(
        planner,
        DatasetParams(
            events=n_events,
            seed=seed,
            warmup_fraction=warmup_fraction,
            files=readers,
            format=check_format(file_format),
        ),
    )
    if rate is not None:  # a finer benchmark part: one time slice a step of the release
        bench = params.part_range("benchmark")
        slices = max(params.slices, rate_slices(bench[1] - bench[0], rate))
        params = dataclasses.replace(params, benchmark_slices=slices)
        check_rate_duration(rate, bench[1] - bench[0], options.timeout_s, "benchmark")
    err.print(
        f"dataset: {n_events:,} events ({params.warmup_events:,} warm-up), {params.slices} x "
        f"{readers} {params.format} files per part (time slices x one per source reader), "
        f"id {params.dataset_id}"
    )
    for warning in ttl_warnings(setups, params.warmup_events):
        err.print(f"[yellow]note:[/] {warning}")
    dataset = ensure_dataset(params)
    if rate is not None:
        check_rate(rate, PartFeed.of(dataset.part_dir("benchmark")), options.timeout_s)
    if not 0 <= failover_at <= 1:
        raise UsageError(f"--failover-at must be between 0 and 1, got {failover_at}")
    options.failover_at = failover_at
    spec = SuiteRun(selected, dataset, results_dir, options, resume=resume, run_id=run_id)
    spec.failover = failover
    spec.recorded_options = {
        "suite": suite,
        "queries": ",".join(selected),
        "events": n_events,
        "warmup_fraction": warmup_fraction,
        "seed": seed,
        "format": params.format,
        "checkpoint_interval_s": options.checkpoint_interval_s,
        "state_ttl": state_ttl,
        "parallelism": parallelism,
        "timeout_s": options.timeout_s,
        "failover": failover,
        "failover_at": failover_at if failover else None,
        "repeat": repeat,
        "rate": rate,
    }
    all_results = run_suite(spec, lambda: registry.load(engine, **engine_args))
    out.print(results_renderable(all_results, title=f"nexmark {spec.run_id} on {engine}"))
    out.print(f"results: {results_dir / 'results.json'} and results.csv")
    if report:
        from nexmark.report.html import write_report

        out.print(f"report:  {write_report(results_dir)}")
    if any(r.status.value in ("failed", "timeout") for r in all_results):
        raise typer.Exit(1)
