"""The options against an engine: its capabilities checked in one place, and each job's spec.

`check_capabilities` is what an engine must be able to do for a run of these options
(`prepare_run` calls it before any data is generated; `QueryRun` again, for callers that drive
the protocol directly); `check_setup` holds the protocol's bounds on a job's resolved setup,
whatever path set it; `job_spec` is the one place a phase's `JobSpec` is built.
"""

from __future__ import annotations

from pathlib import Path

from nexmark.durations import format_seconds
from nexmark.engines.base import (
    NO_TTL,
    Engine,
    Handoff,
    JobSetup,
    JobSpec,
    SinkKind,
    Snapshot,
    StateTtlSupport,
)
from nexmark.engines.source import Source
from nexmark.errors import UsageError
from nexmark.protocol.preparation import store
from nexmark.protocol.preparation.options import (
    MAX_CHECKPOINT_INTERVAL_S,
    ProtocolOptions,
    check_repeat,
)
from nexmark.protocol.query.failover import check_failover


def check_capabilities(engine: Engine, options: ProtocolOptions) -> None:
    """UsageError when the engine cannot run what `options` ask (one line, naming the flag)."""
    caps = engine.capabilities()
    if options.source not in caps.sources:
        raise UsageError(
            f"--source {options.source}: {engine.name} reads only {', '.join(caps.sources)}"
        )
    check_repeat(options.repeat, caps.repeatable_restore)
    if options.search is not None:
        check_repeat(options.search.max_trials, caps.repeatable_restore, "--max-trials")
    if options.feed_rate is not None and not caps.rate_feed:
        raise UsageError(f"--rate: {engine.name} cannot feed a phase at a set rate")
    check_handoff(caps.handoff, options)
    if options.state_ttl not in (None, NO_TTL) and caps.state_ttl is StateTtlSupport.NONE:
        raise UsageError(f"{engine.name} cannot expire state by time: no --state-ttl on it")
    check_failover(options.failing_over, engine)


def check_handoff(handoff: Handoff, options: ProtocolOptions) -> None:
    """An engine that keeps its state in place across the cut has no snapshot to restore:
    one benchmark phase per warm-up, at full speed, with its state (UsageError otherwise)."""
    if handoff is not Handoff.IN_PLACE:
        return
    for given, what in (
        (options.repeat != 1, f"--repeat {options.repeat}"),
        (options.search is not None, "a rate search"),
        (options.rate is not None, "--rate"),
        (not options.restore, "a benchmark phase without the warm-up's state"),
    ):
        if given:
            raise UsageError(
                f"{what}: this engine keeps its state in place across the phases (no snapshot "
                "to restore again): one benchmark phase per warm-up"
            )


def check_setup(setup: JobSetup) -> None:
    """The protocol's own bounds on a job's resolved setup, whatever path set it."""
    interval = setup.checkpoint_interval_s
    if interval is None or not 0 < interval <= MAX_CHECKPOINT_INTERVAL_S:
        shown = "off" if interval is None else format_seconds(interval)
        raise UsageError(
            f"the checkpoint interval must be above 0 and at most 30 s (the protocol's bound), "
            f"got {shown}"
        )


def job_spec(
    query: str,
    options: ProtocolOptions,
    source: Source,
    work_dir: Path,
    restore: Snapshot | None = None,
    rate_fed: bool = False,
    latency: bool = False,
    source_only: bool = False,
) -> JobSpec:
    """The JobSpec of one phase's job of `query` reading `source` (a part's folder or topic:
    `PhaseParts.source`; `rate_fed`: the protocol releases its feed; `latency`: its rows are
    stamped, by the query's `metrics.latency` rule; `source_only`: the source ceiling's job,
    which reads and discards)."""
    checkpoint_dir, feed_dir = store.job_dirs(
        options.store_dir, options.checkpoints_on_store, work_dir
    )
    return JobSpec(
        query=query,
        source=source,
        work_dir=work_dir,
        restore=restore,
        state_ttl=None if source_only else options.state_ttl,
        parallelism=options.parallelism,
        checkpoint_interval_s=options.checkpoint_interval_s,
        # Both phases read a never-ending source: no final watermark empties the windows,
        # and the phase ends are proved with checkpoints (docs/protocol.md).
        keep_source_open=True,
        sink=SinkKind.DISCARD if source_only else options.sink,
        collect_dir=None if source_only else options.collect_dir,
        rate_fed=rate_fed,
        latency=options.latency_stamps(query) if latency else None,
        source_only=source_only,
        checkpoint_dir=checkpoint_dir,
        feed_dir=feed_dir,
    )
