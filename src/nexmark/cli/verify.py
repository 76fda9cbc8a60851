"""`nexmark verify`: run queries through warm-up, checkpoint, restore and benchmark with a
readable sink, and compare the engine's rows with independent reference results."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import typer

from nexmark.cli.app import app
from nexmark.cli.targets import with_target_options
from nexmark.console import err, out
from nexmark.engines.base import FailoverSupport
from nexmark.errors import UsageError, VerificationError
from nexmark.protocol.parts import PhaseParts
from nexmark.protocol.prepare import RunOptions, parse_checkpoint_interval, prepare_run
from nexmark.settings import Settings
from nexmark.verify.check import Status, Verdict
from nexmark.verify.display import render
from nexmark.verify.reference import load_events
from nexmark.verify.runner import DEFAULTS, verify_query
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT
from nexmark.workload.sizes import parse_count

# 1,000 events per event-time second: 100K events span 100 s, so 10 s windows open and close
# many times in both phases (at the benchmark's 100,000 ev/s they would span 1 s, no window).
DEFAULT_RATE = 1000
# A verification's benchmark phase lasts seconds: a failover waits for a periodic checkpoint in
# it, so --failover checkpoints every second unless told otherwise.
FAILOVER_CHECKPOINT_INTERVAL_S = 1.0


@app.command()
@with_target_options
def verify(
    queries_: str = typer.Option(
        "all",
        "--queries",
        "-q",
        help="'all' (q0..q23), 'cep' (cep0..cep3) or a list like q1,q5,cep0.",
    ),
    events: str = typer.Option("100K", "--events", "-n", help="Dataset size, e.g. 100K."),
    event_rate: int = typer.Option(
        DEFAULT_RATE, help="Events per second of event time (the dataset's, not a feeding rate)."
    ),
    engine: str = typer.Option("flink", help="Engine to verify."),
    parallelism: int = typer.Option(
        None, help="Job parallelism and files per part (default: the machine's cores)."
    ),
    seed: int = typer.Option(0, help="Seed of the generated dataset."),
    file_format: str = typer.Option(
        DEFAULT_FORMAT, "--format", help="Dataset files: parquet, or csv (the same events)."
    ),
    timeout: float = typer.Option(300.0, help="Limit per query in seconds (both phases)."),
    watermark_slack: float = typer.Option(
        None,
        help="Seconds the engine's last watermark may lag the computed one (default: the "
        "engine's own, e.g. 2 s for Flink's mini-batch).",
    ),
    set_: list[str] = typer.Option([], "--set", help="Engine option SECTION.KEY=VALUE."),
    config: Path = typer.Option(None, help="A TOML file overriding the recommended setup."),
    keep_work: bool = typer.Option(False, help="Keep checkpoints and collected rows."),
    skip_restore: bool = typer.Option(
        False, "--skip-restore", hidden=True, help="Testing: start the benchmark phase empty."
    ),
    failover: bool = typer.Option(
        False, help="Kill a worker in each benchmark phase (docs/failover.md); rows must match."
    ),
    checkpoint_interval: str = typer.Option(
        None,
        help="Periodic checkpoints, e.g. '1 s' (default: the settings'; short with "
        "--failover, whose kill waits for one in the benchmark phase).",
    ),
    target: dict | None = None,  # the engine's own target options (see cli/targets.py)
) -> None:
    """Check every query's output against a reference computed without the engine."""
    if watermark_slack is not None and watermark_slack < 0:
        raise UsageError(f"--watermark-slack must not be negative, got {watermark_slack}")
    run = RunOptions(
        queries=tuple(q.name for q in queries.select(queries_)),
        events=parse_count(events, "--events"),
        seed=seed,
        format=file_format,
        event_rate=event_rate,
        checkpoint_interval_s=(
            parse_checkpoint_interval(checkpoint_interval, bounded=False)
            if checkpoint_interval
            else (FAILOVER_CHECKPOINT_INTERVAL_S if failover else None)
        ),
        parallelism=parallelism,
        timeout_s=timeout,
        keep_checkpoints=keep_work,
        failover=failover,
        settle_s=DEFAULTS.settle_s,
        restore=not skip_restore,
    )
    prepared = prepare_run(run, engine, Settings.load(config, set_), target, show=err.print)
    data = load_events(prepared.dataset.path)
    chosen = prepared.make_engine()
    # Before the engine starts (it may start another kind of cluster): what it can do.
    support = chosen.enable_failover() if failover else None
    parts = PhaseParts.of(prepared.dataset)
    verdicts = _verify_all(chosen, parts, data, run, watermark_slack, support)
    out.print(render(verdicts, title=f"nexmark verify on {engine} ({run.events:,} events)"))
    bad = [v for v in verdicts if v.status in (Status.MISMATCH, Status.FAILED)]
    if bad:
        raise VerificationError(
            "not verified: " + ", ".join(f"{v.query} {v.status.value}" for v in bad)
        )


def _verify_all(
    engine,
    parts: PhaseParts,
    data,
    options: RunOptions,
    watermark_slack_s: float | None,
    failover: FailoverSupport | None,
) -> list[Verdict]:
    """Every selected query on one engine start; the work directory is removed at the end."""
    work_root = Path(tempfile.mkdtemp(prefix="nexmark-verify-"))
    verdicts = []
    try:
        engine.start()
        for query in options.queries:
            started = time.monotonic()
            verdict = verify_query(
                engine, query, parts, data, work_root, options,
                watermark_slack_s=watermark_slack_s, failover=failover,
            )  # fmt: skip
            err.print(f"{query}: {verdict.status.value} ({time.monotonic() - started:.1f} s)")
            verdicts.append(verdict)
    finally:
        engine.close()
        if not options.keep_checkpoints:
            shutil.rmtree(work_root, ignore_errors=True)
        else:
            err.print(f"work files kept in {work_root}")
    return verdicts
