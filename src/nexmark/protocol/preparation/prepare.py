"""One preparation for every command that runs queries (`nexmark run`, `nexmark verify`).

A command parses its own flags into one frozen `RunOptions` (`--data` and `--checkpoints` into
a `Path` or an `S3Url`, once: the store checks, the writer and the engine's reach list take them
as they are); `prepare_run` then resolves every query's job setup on the engine (the protocol's
bounds checked before anything runs), sizes the dataset for the jobs' source readers and the
engine's slices, and generates or reuses it. What
a run records in its results (`setup.options`) is derived from the same object
(`RunOptions.recorded`), so what ran and what is recorded cannot drift apart.

The options themselves (and how to add one) are in `preparation/options.py`; what an engine must
be able to do for them is checked in `preparation/checks.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from nexmark.durations import parse_seconds
from nexmark.engines import registry
from nexmark.engines.base import Engine, JobSetup
from nexmark.errors import UsageError
from nexmark.protocol.preparation import store
from nexmark.protocol.preparation.kafka import KafkaParts, open_kafka
from nexmark.protocol.preparation.options import MAX_CHECKPOINT_INTERVAL_S, RunOptions
from nexmark.protocol.preparation.plan import planned_setups, sized_dataset, ttl_warnings
from nexmark.settings import Settings
from nexmark.storage.s3 import S3Settings, S3Url
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import PartFeed, check_rate, check_rate_duration, rate_slices
from nexmark.workload.writer import ensure_dataset

# A command's checks and plan once every job's setup and the dataset's parameters are known.
BeforeWork = Callable[[dict[str, JobSetup], DatasetParams], None]


def parse_checkpoint_interval(text: str | None, bounded: bool = True) -> float | None:
    """--checkpoint-interval in seconds (None: the settings'); `bounded`: the protocol's 30 s."""
    if text is None:
        return None
    interval = parse_seconds(text, "--checkpoint-interval")
    if bounded and not 0 < interval <= MAX_CHECKPOINT_INTERVAL_S:
        raise UsageError(
            f"--checkpoint-interval must be above 0 and at most 30 s (the protocol's bound), "
            f"got {text}"
        )
    return interval


def parse_timeout(text: str) -> float:
    timeout_s = parse_seconds(text, "--timeout")
    if timeout_s <= 0:
        raise UsageError("--timeout must be positive")
    return timeout_s


__all__ = ["PreparedRun", "RunOptions", "parse_checkpoint_interval", "parse_timeout", "prepare_run"]


@dataclass
class PreparedRun:
    """A run ready to start: its options, the engine's factory, every job's setup, the dataset."""

    options: RunOptions
    engine: str
    make_engine: Callable[[], Engine]
    setups: dict[str, JobSetup]
    params: DatasetParams
    dataset: Dataset
    notes: list[str] = field(default_factory=list)  # what the preparation foresaw (TTL warnings)
    # --source kafka: the cluster (a broker the preparation started, or the user's) and the
    # parts' topics, loaded. Owned here, not in the options: a live process, not a setting.
    kafka: KafkaParts | None = None

    def close(self) -> None:
        """Stop what the preparation started (the embedded Kafka broker): every command that
        prepared a run calls it in a `finally`."""
        if self.kafka is not None:
            self.kafka.close()

    @property
    def readers(self) -> int:
        return self.setups[self.options.queries[0]].parallelism


def prepare_run(
    options: RunOptions,
    engine: str,
    settings: Settings,
    target: dict | None = None,
    show: Callable[[str], None] = lambda line: None,
    before_work: BeforeWork | None = None,
) -> PreparedRun:
    """Resolve every query's job setup, check it, and generate (or reuse) the dataset.

    Nothing is written before every check passed; `show` gets the dataset line and the notes;
    `before_work` (the caller's own checks and plan) gets every job's setup and the dataset's
    parameters before the dataset is generated.

    Raises:
        UsageError: an option the engine or the protocol refuses.
    """
    engine_args = {"settings": settings, **(target or {})}
    s3 = None
    if store.on_store(options.data, options.checkpoints):  # before any work (one line each)
        options, s3 = _on_store(options)

    def make_engine() -> Engine:
        made = registry.load(engine, **engine_args)
        if s3 is not None:  # an engine that cannot says so (Engine.use_object_store)
            made.use_object_store(s3, store.reach_urls(options.data, options.checkpoints))
        return made

    planner = make_engine()
    # (the engine's capabilities are checked there, before any dataset is generated)
    setups = planned_setups(planner, list(options.queries), options)
    # Kafka: the broker starts (or the user's cluster answers) before anything is made.
    kafka = (
        open_kafka(options.kafka_bootstrap, options.kafka_dir)
        if options.source == "kafka"
        else None
    )
    try:
        return _prepared(options, engine, make_engine, planner, setups, show, kafka, before_work)
    except BaseException:
        if kafka is not None:
            kafka.close()
        raise


def _prepared(
    options: RunOptions,
    engine: str,
    make_engine: Callable[[], Engine],
    planner: Engine,
    setups: dict[str, JobSetup],
    show: Callable[[str], None],
    kafka: KafkaParts | None,
    before_work: BeforeWork | None = None,
) -> PreparedRun:
    """The dataset sized, generated or reused, and loaded into Kafka where asked."""
    readers = setups[options.queries[0]].parallelism
    feed_rate = options.feed_rate
    params = sized_dataset(planner, options.dataset_params(readers))
    first, end = params.part_range("benchmark")
    if options.rate is not None:  # a finer benchmark part: one time slice a step of the release
        slices = max(params.slices, rate_slices(end - first, options.rate))
        params = dataclasses.replace(params, benchmark_slices=slices)
    if feed_rate is not None:  # (a search's trials each lay it out for their own rate)
        check_rate_duration(feed_rate, end - first, options.timeout_s, "benchmark")
    rate = f" at {params.rate:,} ev/s of event time" if options.event_rate is not None else ""
    finer = ""
    if params.benchmark_slices and params.benchmark_slices != params.slices:
        finer = f" ({params.benchmark_slices} x {readers} in the benchmark part, to feed it)"
    show(
        f"dataset: {options.events:,} events ({params.warmup_events:,} warm-up){rate}, "
        f"{params.slices} x {readers} {params.format} files per part (time slices x one per "
        f"source reader){finer}, id {params.dataset_id}"
    )
    notes = ttl_warnings(setups, params.warmup_events)
    for note in notes:
        show(f"[yellow]note:[/] {note}")
    if before_work is not None:
        before_work(setups, params)
    dataset = ensure_dataset(params, out=options.data)
    if options.rate is not None:
        check_rate(options.rate, PartFeed.of(dataset.part_dir("benchmark")), options.timeout_s)
    if kafka is not None:
        kafka.load(dataset, readers, show)
    return PreparedRun(options, engine, make_engine, setups, params, dataset, notes, kafka)


def _on_store(options: RunOptions) -> tuple[RunOptions, S3Settings]:
    """The options of a run on an object store, its prefix there set (`preparation.store`), and
    the store's settings; UsageError/StorageError (one line) for what cannot run there."""
    refused = refused_on_store(options)
    if refused:
        raise UsageError(refused)
    settings = store.check_locations(options.data, options.checkpoints)
    store.check_not_half_written(options.data)
    where = store.store_dir(options.data, options.checkpoints)
    options = dataclasses.replace(
        options, store_dir=where, checkpoints_on_store=options.checkpoints is not None
    )
    return options, settings


def refused_on_store(options: RunOptions) -> str | None:
    """Why a run with its dataset on an object store cannot run as asked (None: it can). A
    rate feed releases a part's files on the wall clock, each release a link's cost (~0.1 ms);
    on a store each is a server-side copy (ms), so the rate it keeps is not yet measured.
    Checkpoints alone on a store change nothing (a rate-fed phase restores from them as from a
    disk); a failover counts its restart position on the store's objects as on files."""
    if not isinstance(options.data, S3Url) or (options.rate is None and options.search is None):
        return None
    return (
        "a phase fed at a set rate with --data on an object store is not supported yet (its "
        "release is timed for local files): keep the data local (--checkpoints s3://... may "
        "stay)"
    )
