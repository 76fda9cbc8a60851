"""`nexmark run`: the two-phase benchmark over a suite of queries."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from nexmark.cli.app import app
from nexmark.console import err, out
from nexmark.engines import registry
from nexmark.errors import UsageError
from nexmark.protocol.query_run import ProtocolOptions
from nexmark.protocol.runner import SuiteRun, new_run_id, run_suite
from nexmark.protocol.suites import get_suite
from nexmark.results.table import results_renderable
from nexmark.settings import Settings
from nexmark.workload import queries
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.sizes import parse_count
from nexmark.workload.writer import ensure_dataset

MAX_CHECKPOINT_INTERVAL_S = 30.0  # the proposal: checkpoints every 30 s at most

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h)?\s*$")
_UNIT_S = {None: 1.0, "ms": 0.001, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_seconds(text: str, what: str) -> float:
    """'30', '30s', '10 min', '1h', '500ms' -> seconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"{what} must be a duration like 30s, 10min or 1h, got {text!r}")
    return float(m.group(1)) * _UNIT_S[m.group(2)]


def _protocol_options(
    checkpoint_interval: str,
    timeout: str,
    state_ttl: str | None,
    parallelism: int | None,
    keep_checkpoints: bool,
) -> ProtocolOptions:
    interval = parse_seconds(checkpoint_interval, "--checkpoint-interval")
    if not 0 < interval <= MAX_CHECKPOINT_INTERVAL_S:
        raise UsageError(
            f"--checkpoint-interval must be above 0 and at most 30 s (the protocol's bound), "
            f"got {checkpoint_interval}"
        )
    timeout_s = parse_seconds(timeout, "--timeout")
    if timeout_s <= 0:
        raise UsageError("--timeout must be positive")
    if parallelism is not None and parallelism < 1:
        raise UsageError(f"--parallelism must be at least 1, got {parallelism}")
    return ProtocolOptions(
        checkpoint_interval_s=interval,
        state_ttl=state_ttl,
        parallelism=parallelism,
        timeout_s=timeout_s,
        keep_checkpoints=keep_checkpoints,
    )


@app.command()
def run(
    queries_: str = typer.Option(
        None, "--queries", "-q", help="'all' or a list like q0,q5,q20 (default: the suite's)."
    ),
    events: str = typer.Option(
        None, "--events", "-n", help="Dataset size, e.g. 200M, 2M, 1e6 (default: the suite's)."
    ),
    suite: str = typer.Option(
        "full", "--suite", help="full (200M events, every query) or quick (2M, five queries)."
    ),
    warmup_fraction: float = typer.Option(0.75, help="Share of the events in the warm-up."),
    engine: str = typer.Option("flink", help="Engine to benchmark."),
    flink_rest: str = typer.Option(
        None, "--flink-rest", help="REST URL of a running Flink cluster (default: embedded)."
    ),
    parallelism: int = typer.Option(None, help="Job parallelism (default: the machine's cores)."),
    checkpoint_interval: str = typer.Option("30s", help="Periodic checkpoints, at most 30s."),
    state_ttl: str = typer.Option(None, help="State TTL for every query, e.g. '5 min'."),
    timeout: str = typer.Option("2h", help="Limit per query (both phases), e.g. 30min."),
    results: Path = typer.Option(None, help="Results directory (default results/<run-id>)."),
    keep_checkpoints: bool = typer.Option(False, help="Keep checkpoints and scratch files."),
    set_: list[str] = typer.Option(
        [], "--set", help="Engine option SECTION.KEY=VALUE, e.g. flink.state.backend.type=hashmap."
    ),
    config: Path = typer.Option(None, help="A TOML file overriding the recommended setup."),
    seed: int = typer.Option(0, help="Seed of the generated dataset."),
    resume: bool = typer.Option(False, help="Skip the queries already in --results."),
    report: bool = typer.Option(True, help="Write report.html and charts at the end."),
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
    settings = Settings.load(config, set_)
    if resume and results is None:
        raise UsageError("--resume needs --results DIR (the directory of the run to continue)")
    run_id = new_run_id()
    results_dir = results or Path("results") / run_id
    # One file per source reader keeps each reader's events in event-time order.
    extra = {"files": parallelism} if parallelism else {}
    params = DatasetParams(events=n_events, seed=seed, warmup_fraction=warmup_fraction, **extra)
    err.print(
        f"dataset: {n_events:,} events ({params.warmup_events:,} warm-up), id {params.dataset_id}"
    )
    dataset = ensure_dataset(params)
    engine_args = {"settings": settings}
    if flink_rest:
        engine_args["rest_url"] = flink_rest
    spec = SuiteRun(selected, dataset, results_dir, options, resume=resume, run_id=run_id)
    spec.recorded_options = {
        "suite": suite,
        "queries": ",".join(selected),
        "events": n_events,
        "warmup_fraction": warmup_fraction,
        "seed": seed,
        "checkpoint_interval_s": options.checkpoint_interval_s,
        "state_ttl": state_ttl,
        "parallelism": parallelism,
        "timeout_s": options.timeout_s,
    }
    all_results = run_suite(spec, lambda: registry.load(engine, **engine_args))
    out.print(results_renderable(all_results, title=f"nexmark {spec.run_id} on {engine}"))
    out.print(f"results: {results_dir / 'results.json'} and results.csv")
    if report:
        from nexmark.report.html import write_report

        out.print(f"report:  {write_report(results_dir)}")
    if any(r.status.value in ("failed", "timeout") for r in all_results):
        raise typer.Exit(1)
