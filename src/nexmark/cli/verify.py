"""`nexmark verify`: run queries through warm-up, checkpoint, restore and benchmark with a
readable sink, and compare the engine's rows with independent reference results."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from nexmark.cli import options as opt
from nexmark.cli.targets import with_target_options
from nexmark.console import err, out
from nexmark.engines.base import FailoverSupport
from nexmark.errors import VerificationError
from nexmark.protocol.preparation import store
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.preparation.prepare import PreparedRun, RunOptions, prepare_run
from nexmark.protocol.progress.display import RunDisplay
from nexmark.settings import Settings
from nexmark.verify.check import Status, Verdict
from nexmark.verify.display import render
from nexmark.verify.reference import load_events
from nexmark.verify.runner import DEFAULTS, verify_query
from nexmark.workload import queries
from nexmark.workload.dataset import DEFAULT_FORMAT

# 1,000 events per event-time second: 100K events span 100 s, so 10 s windows open and close
# many times in both phases (at the benchmark's 100,000 ev/s they would span 1 s, no window).
DEFAULT_RATE = 1000
# A verification's benchmark phase lasts seconds: a failover waits for a periodic checkpoint in
# it, so --failover checkpoints every second unless told otherwise.
FAILOVER_CHECKPOINT_INTERVAL_S = 1.0

# verify's own flags (the shared ones are in cli/options.py).
WatermarkSlack = Annotated[
    float | None,
    opt.option(
        "--watermark-slack",
        parse=opt.parse_duration,  # a duration has no sign: a negative slack is refused
        metavar="DURATION",
        help="How far the engine's last watermark may lag the computed one, e.g. 2s.",
        show_default="the engine's own, e.g. 2 s for Flink's mini-batch",
    ),
]
KeepWork = Annotated[
    bool,
    typer.Option(
        "--keep-work/--no-keep-work",
        hidden=True,
        help="The older spelling of --keep-checkpoints, still accepted.",
    ),
]
SkipRestore = Annotated[
    bool,
    typer.Option("--skip-restore", hidden=True, help="Testing: start the benchmark phase empty."),
]


@with_target_options
def verify(
    queries_: opt.Queries = "all",
    events: opt.Events = "100K",
    event_rate: opt.EventRate = DEFAULT_RATE,
    engine: opt.Engine = "flink",
    parallelism: opt.Parallelism = None,
    seed: opt.Seed = 0,
    file_format: opt.Format = DEFAULT_FORMAT,
    timeout: opt.Timeout = "5min",
    watermark_slack: WatermarkSlack = None,
    set_: opt.Overrides = [],  # noqa: B006 (Typer's default, never mutated)
    config: opt.Config = None,
    keep_checkpoints: opt.KeepCheckpoints = False,
    keep_work: KeepWork = False,
    skip_restore: SkipRestore = False,
    failover: opt.Failover = False,
    checkpoint_interval: opt.VerifyCheckpointInterval = None,
    data: opt.Data = None,
    checkpoints: opt.Checkpoints = None,
    s3_local: opt.S3Local = False,
    source: opt.Source = "files",
    kafka_bootstrap: opt.KafkaBootstrap = None,
    kafka_dir: opt.KafkaDir = None,
    target: dict | None = None,  # the engine's own target options (see cli/targets.py)
) -> None:
    """Check every query's output against a reference computed without the engine."""
    keep_checkpoints = keep_checkpoints or keep_work
    run = RunOptions(
        queries=tuple(q.name for q in queries.select(queries_)),
        events=events,
        seed=seed,
        format=file_format,
        event_rate=event_rate,
        checkpoint_interval_s=(
            checkpoint_interval
            if checkpoint_interval is not None
            else (FAILOVER_CHECKPOINT_INTERVAL_S if failover else None)
        ),
        parallelism=parallelism,
        timeout_s=timeout,
        keep_checkpoints=keep_checkpoints,
        failover=failover,
        settle_s=DEFAULTS.settle_s,
        restore=not skip_restore,
        data=data,
        checkpoints=checkpoints,
        source=source,
        kafka_bootstrap=kafka_bootstrap,
        kafka_dir=kafka_dir,
    )
    with opt.s3_local_store(s3_local, run.data, run.checkpoints):
        settings = Settings.load(config, set_)
        prepared = prepare_run(run, engine, settings, target, show=err.print)
        try:  # (the embedded Kafka broker of --source kafka stops with the command)
            verdicts = _verify_prepared(prepared, failover, watermark_slack)
        finally:
            prepared.close()
    title = f"nexmark verify on {engine} ({prepared.options.events:,} events)"
    out.print(render(verdicts, title=title))
    bad = [v for v in verdicts if v.status in (Status.MISMATCH, Status.FAILED)]
    if bad:
        raise VerificationError(
            "not verified: " + ", ".join(f"{v.query} {v.status.value}" for v in bad)
        )


def _verify_prepared(prepared, failover: bool, watermark_slack: float | None) -> list[Verdict]:
    """Every query on one engine start, with the options as prepared (the Kafka topics in)."""
    data = load_events(prepared.dataset.path)
    chosen = prepared.make_engine()
    # Before the engine starts (it may start another kind of cluster): what it can do.
    support = chosen.enable_failover() if failover else None
    parts = PhaseParts.of(prepared.dataset)
    return _verify_all(chosen, parts, data, prepared, watermark_slack, support)


def _verify_all(
    engine,
    parts: PhaseParts,
    data,
    prepared: PreparedRun,
    watermark_slack_s: float | None,
    failover: FailoverSupport | None,
) -> list[Verdict]:
    """Every selected query on one engine start; the work directory is removed at the end."""
    options = prepared.options
    work_root = Path(tempfile.mkdtemp(prefix="nexmark-verify-"))
    verdicts = []
    try:
        engine.start()
        # The same progress as a run's: bars on a terminal, else a line every ~15 s per phase.
        with RunDisplay(len(options.queries)) as display:
            for index, query in enumerate(options.queries):
                started = time.monotonic()
                display.query_started(query, index)
                verdict = verify_query(
                    engine, query, parts, data, work_root, options,
                    watermark_slack_s=watermark_slack_s, failover=failover, display=display,
                    kafka=prepared.kafka,
                )  # fmt: skip
                took = f"({time.monotonic() - started:.1f} s)"
                if verdict.status is Status.FAILED and verdict.reason:  # why, in the log too
                    took += f": {verdict.reason.splitlines()[0][:300]}"
                display.query_finished(verdict.status.value, took)
                verdicts.append(verdict)
    finally:
        engine.close()
        store.remove(options.store_dir, options.keep_checkpoints)
        if not options.keep_checkpoints:
            shutil.rmtree(work_root, ignore_errors=True)
        else:
            err.print(f"work files kept in {work_root}")
    return verdicts
