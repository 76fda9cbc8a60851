"""One preparation for every command that runs queries (`nexmark run`, `nexmark verify`).

A command parses its own flags into one frozen `RunOptions`; `prepare_run` then resolves every
query's job setup on the engine (the protocol's bounds checked before anything runs), sizes the
dataset for the jobs' source readers and the engine's slices, and generates or reuses it. What
a run records in its results (`setup.options`) is derived from the same object
(`RunOptions.recorded`), so what ran and what is recorded cannot drift apart.

Adding an option: a field here (with its default), its check in `RunOptions.__post_init__`
when it has bounds, and, if the protocol uses it, its place in `protocol_options`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nexmark.durations import parse_seconds
from nexmark.engines import registry
from nexmark.engines.base import Engine, JobSetup, StateTtl
from nexmark.errors import UsageError
from nexmark.protocol.failover import check_failover
from nexmark.protocol.plan import planned_setups, sized_dataset, ttl_warnings
from nexmark.protocol.query_run import (
    MAX_CHECKPOINT_INTERVAL_S,
    ProtocolOptions,
    check_handoff,
    check_rate_feed,
    check_repeat,
    check_runs,
)
from nexmark.protocol.sustainable import SearchOptions
from nexmark.settings import Settings
from nexmark.workload.dataset import DEFAULT_FORMAT, Dataset, DatasetParams, check_format
from nexmark.workload.feed import PartFeed, check_rate, check_rate_duration, rate_slices
from nexmark.workload.schema import WATERMARK_DELAY_MS
from nexmark.workload.writer import ensure_dataset


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


@dataclass(frozen=True)
class RunOptions:
    """Everything a command was asked to run, checked: the single source of the options a run
    uses and records.

    `checkpoint_interval_s`, `state_ttl` and `parallelism` are None unless given on the command
    line (None: as the engine's settings say). `event_rate` is the dataset's events per second
    of event time (None: the generator's default); it is not a feeding rate.
    """

    queries: tuple[str, ...]
    events: int
    suite: str | None = None
    warmup_fraction: float = 0.75
    seed: int = 0
    format: str = DEFAULT_FORMAT
    event_rate: int | None = None
    checkpoint_interval_s: float | None = None
    state_ttl: str | None = None
    parallelism: int | None = None
    timeout_s: float = 3600.0
    keep_checkpoints: bool = False
    failover: bool = False
    failover_at: float = 0.5
    repeat: int = 1
    runs: int = 1
    # Events/s the benchmark part is fed at on the wall clock (`--rate`); None: all at once.
    rate: float | None = None
    # `nexmark sustainable`: search for the highest rate each query keeps up with.
    search: SearchOptions | None = None

    def __post_init__(self) -> None:
        if self.events <= 0:
            raise UsageError(f"--events must be a positive number of events, got {self.events}")
        if self.parallelism is not None and self.parallelism < 1:
            raise UsageError(f"--parallelism must be at least 1, got {self.parallelism}")
        if self.event_rate is not None and self.event_rate < 1:
            raise UsageError(f"--event-rate must be at least 1, got {self.event_rate}")
        if self.timeout_s <= 0:
            raise UsageError("--timeout must be positive")
        if not 0 <= self.failover_at <= 1:
            raise UsageError(f"--failover-at must be between 0 and 1, got {self.failover_at}")
        check_repeat(self.repeat, True)
        check_runs(self.runs)
        if self.failover and self.repeat != 1:
            raise UsageError(
                f"--failover measures one benchmark phase per query: use --repeat 1, "
                f"not {self.repeat}"
            )
        if self.rate is not None:
            check_rate(self.rate)
            if self.failover:
                raise UsageError("--rate and --failover measure different things: use one of them")
            object.__setattr__(self, "rate", float(self.rate))
        if self.search is not None:
            self._check_search()
        format_ = check_format(self.format)
        object.__setattr__(self, "format", format_)
        self.ttl()  # a bad --state-ttl is refused here

    def _check_search(self) -> None:
        """A rate search runs its own trials, each at its own rate, from one warm-up."""
        for given, flag in (
            (self.rate is not None, "--rate"),
            (self.failover, "--failover"),
            (self.runs != 1, "--runs"),
            (self.repeat != 1, "--repeat"),
        ):
            if given:
                raise UsageError(f"a rate search picks its own trials: {flag} does not apply")
        check_repeat(self.search.max_trials, True, "--max-trials")

    @property
    def feed_rate(self) -> float | None:
        """The lowest rate a benchmark phase is fed at (None: every one at full speed): its
        release must end within the query's timeout."""
        return self.search.min_rate if self.search is not None else self.rate

    def ttl(self) -> StateTtl | None:
        return None if self.state_ttl is None else StateTtl.parse(self.state_ttl, "--state-ttl")

    def protocol_options(self, **more: Any) -> ProtocolOptions:
        """The protocol's options for these (a fresh, mutable object per run; `more` sets the
        fields only a command knows, e.g. verify's sink)."""
        return ProtocolOptions(
            checkpoint_interval_s=self.checkpoint_interval_s,
            state_ttl=self.ttl(),
            parallelism=self.parallelism,
            timeout_s=self.timeout_s,
            keep_checkpoints=self.keep_checkpoints,
            failover_at=self.failover_at,
            repeat=self.repeat,
            runs=self.runs,
            rate=self.rate,
            search=self.search,
            **more,
        )

    def dataset_params(self, readers: int) -> DatasetParams:
        """The dataset's parameters for jobs of `readers` source readers (one file each)."""
        extra = {} if self.event_rate is None else {"rate": self.event_rate}
        return DatasetParams(
            events=self.events,
            seed=self.seed,
            warmup_fraction=self.warmup_fraction,
            files=readers,
            format=self.format,
            **extra,
        )

    def recorded(self) -> dict[str, Any]:
        """What the results record as `setup.options` (docs/results.md)."""
        recorded: dict[str, Any] = {
            "suite": self.suite,
            "queries": ",".join(self.queries),
            "events": self.events,
            "warmup_fraction": self.warmup_fraction,
            "seed": self.seed,
            "format": self.format,
            "checkpoint_interval_s": self.checkpoint_interval_s,
            "state_ttl": self.state_ttl,
            "parallelism": self.parallelism,
            "timeout_s": self.timeout_s,
            "failover": self.failover,
            "failover_at": self.failover_at if self.failover else None,
            "repeat": self.repeat,
            "runs": self.runs,
            "rate": self.rate,
        }
        if self.event_rate is not None:
            recorded["event_rate"] = self.event_rate
        if self.rate is not None:  # what every window row's latency waits for (docs/protocol.md)
            recorded["watermark_delay_s"] = WATERMARK_DELAY_MS / 1000
        if self.search is not None:
            recorded["sustainable"] = self.search.recorded()
        return recorded


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

    @property
    def readers(self) -> int:
        return self.setups[self.options.queries[0]].parallelism


def prepare_run(
    options: RunOptions,
    engine: str,
    settings: Settings,
    target: dict | None = None,
    show: Callable[[str], None] = lambda line: None,
) -> PreparedRun:
    """Resolve every query's job setup, check it, and generate (or reuse) the dataset.

    Nothing is written before every check passed; `show` gets the dataset line and the notes.

    Raises:
        UsageError: an option the engine or the protocol refuses.
    """
    engine_args = {"settings": settings, **(target or {})}

    def make_engine() -> Engine:
        return registry.load(engine, **engine_args)

    planner = make_engine()
    repeatable = planner.capabilities().repeatable_restore
    check_repeat(options.repeat, repeatable)
    if options.search is not None:
        check_repeat(options.search.max_trials, repeatable, "--max-trials")
    feed_rate = options.feed_rate
    check_rate_feed(feed_rate, planner)
    check_handoff(planner.capabilities().handoff, options.protocol_options())
    setups = planned_setups(planner, list(options.queries), options.protocol_options())
    readers = setups[options.queries[0]].parallelism
    check_failover(options.failover, planner)  # before any dataset is generated
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
    dataset = ensure_dataset(params)
    if options.rate is not None:
        check_rate(options.rate, PartFeed.of(dataset.part_dir("benchmark")), options.timeout_s)
    return PreparedRun(options, engine, make_engine, setups, params, dataset, notes)
