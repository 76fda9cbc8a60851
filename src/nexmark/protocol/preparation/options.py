"""What a run was asked to do: one frozen object, checked when made (a leaf: data only).

`ProtocolOptions` holds the protocol's own knobs (the phase part: checkpoints, state TTL,
parallelism, timeout, sink, repeats, runs, rate, latency) and its search part (`SearchOptions`,
`nexmark sustainable`); `RunOptions` is the same object with the dataset part and the queries
a command runs. What the results record (`setup.options`) is derived from the fields' metadata
(`recorded`), so what ran and what is recorded cannot drift apart. Nothing here asks an engine:
its capabilities are checked against these options in one place (`preparation.checks`), and what
an engine answers at run time (its failover support) travels beside them.

Adding an option: a field (with its default and, if the results record it, `_RECORDED`), and its
bounds in `__post_init__`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexmark.engines.base import Engine, LatencyStamps, SinkKind, StateTtl
from nexmark.errors import UsageError
from nexmark.metrics import latency as lat
from nexmark.storage.files import Location, location
from nexmark.storage.s3 import S3Url, is_s3
from nexmark.workload.dataset import DEFAULT_FORMAT, DatasetParams, check_format
from nexmark.workload.feed import check_rate
from nexmark.workload.schema import WATERMARK_DELAY_MS

SOURCES = ("files", "kafka")  # what --source takes (engines/source.py: the kinds)
MAX_CHECKPOINT_INTERVAL_S = 30.0  # the proposal: checkpoints every 30 s at most
MAX_REPEAT = 100  # --repeat above this is a typo rather than a plan
MAX_RUNS = 20  # --runs above this (each a full warm-up) is a typo rather than a plan

# The rate search's defaults (docs/protocol.md says why).
DEFAULT_MIN_RATE = 50_000.0  # events/s: the lowest rate tried (a trial of 50M events: 1,000 s)
DEFAULT_MAX_TRIALS = 8
DEFAULT_P99_BOUND_S = 5.0  # a result later than this is not keeping up, whatever the lag says
LAG_TOLERANCE = 0.01  # the lag may grow by at most this share of the rate per second
PRECISION = 0.05  # stop once the bracket is this narrow (relative to its upper end)

# A field the results record in `setup.options` (under its own name).
_RECORDED = {"recorded": True}


def check_repeat(repeat: int, repeatable: bool, what: str = "--repeat") -> None:
    """The protocol's bounds on the number of benchmark phases per warm-up.

    Raises:
        UsageError: below 1, above MAX_REPEAT, or more than 1 on an engine that cannot
            restore one snapshot more than once.
    """
    if not 1 <= repeat <= MAX_REPEAT:
        raise UsageError(f"{what} must be between 1 and {MAX_REPEAT}, got {repeat}")
    if repeat > 1 and not repeatable:
        raise UsageError(
            f"{what} {repeat}: this engine cannot restore a checkpoint more than once "
            "(Capabilities.repeatable_restore); use 1"
        )


def check_runs(runs: int, what: str = "--runs") -> None:
    """The bounds on the number of whole cycles per query (UsageError outside 1..MAX_RUNS)."""
    if not 1 <= runs <= MAX_RUNS:
        raise UsageError(f"{what} must be between 1 and {MAX_RUNS}, got {runs}")


def parse_checkpoints(text: str) -> S3Url:
    """`--checkpoints`: an s3:// prefix (UsageError, one line, for anything else)."""
    if not is_s3(text):
        raise UsageError(
            f"--checkpoints {text}: an s3://bucket/prefix is expected (local checkpoints go "
            "to the run's work directory, as without the option)"
        )
    return S3Url.parse(text)


@dataclass(frozen=True)
class SearchOptions:
    """How `nexmark sustainable` searches (frozen: recorded as asked)."""

    min_rate: float = DEFAULT_MIN_RATE
    max_trials: int = DEFAULT_MAX_TRIALS
    p99_bound_s: float = DEFAULT_P99_BOUND_S
    lag_tolerance: float = LAG_TOLERANCE
    precision: float = PRECISION
    # Stamp the trials' rows for their event-time latency, and judge p99 against the bound.
    latency: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.min_rate, int | float) and self.min_rate > 0):
            raise UsageError(
                f"--min-rate must be a number of events/s above 0, got {self.min_rate:g}"
            )
        if not 2 <= self.max_trials <= 20:
            raise UsageError(f"--max-trials must be between 2 and 20, got {self.max_trials}")
        if not self.p99_bound_s > 0:
            raise UsageError(f"--p99-bound must be above 0 s, got {self.p99_bound_s:g}")
        object.__setattr__(self, "min_rate", float(self.min_rate))

    def recorded(self) -> dict[str, float | int]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, kw_only=True)
class ProtocolOptions:
    """The knobs of the protocol itself (engine options live in the engine's settings).

    checkpoint_interval_s, state_ttl and parallelism are None unless given on the command
    line: None means "as the engine's settings say", and whatever the path, a job's resolved
    setup (`Engine.job_setup`) is what is checked and recorded. `state_ttl` may be given as
    its text ('5 min'); it is kept parsed.
    """

    checkpoint_interval_s: float | None = field(default=None, metadata=_RECORDED)
    state_ttl: StateTtl | None = field(default=None, metadata=_RECORDED)
    parallelism: int | None = field(default=None, metadata=_RECORDED)
    timeout_s: float = field(default=3600.0, metadata=_RECORDED)  # per query, both phases
    keep_checkpoints: bool = False
    # The run's own prefix on an object store (`preparation.store`): its jobs' staged feeds, and
    # their checkpoints when `checkpoints_on_store`; None: a run on local files.
    store_dir: S3Url | None = None
    checkpoints_on_store: bool = False
    sample_interval_s: float = 1.0
    # Verification runs read the rows back; benchmark runs discard them.
    sink: SinkKind = SinkKind.DISCARD
    collect_dir: Path | None = None
    # Wait after the last event of a phase before its checkpoint, so that the source's periodic
    # watermark has left it too (verification needs every window the data closes to fire).
    settle_s: float = 0.0
    # False only to show that verification catches lost state: the benchmark job starts empty.
    restore: bool = True
    # A failover run's kill point: this share of the benchmark events read. Whether a run fails
    # over, and how, is what the engine answered (`Engine.enable_failover`): it travels beside
    # these options (`QueryRun(failover=...)`), not in them.
    failover_at: float = field(default=0.5, metadata=_RECORDED)
    # Benchmark phases per query, each restored from the same phase checkpoint (one warm-up).
    repeat: int = field(default=1, metadata=_RECORDED)
    # Whole cycles per query (`--runs M`): each a fresh warm-up followed by `repeat` phases.
    runs: int = field(default=1, metadata=_RECORDED)
    # Events/s the benchmark part is released at (`workload.feed.Releaser`); None: all at once,
    # read at full speed. The warm-up is always read at full speed.
    rate: float | None = field(default=None, metadata=_RECORDED)
    # `nexmark sustainable`: the benchmark phases are a search's trials, each at its own rate.
    search: SearchOptions | None = None
    # Stamp a sample of the output rows for their event-time latency (`metrics.latency`);
    # None: in a rate-fed run (a search's trials are), where the engine can and the query's
    # rows carry an event time.
    latency: bool | None = None
    # The share of per-event output rows stamped, instead of the rule's (`LatencyRule.sample`,
    # 0.1%); window rows, few, are always all stamped.
    latency_sample: float | None = None
    # Where the jobs read the parts: "files" (the dataset's folders) or "kafka" (the topics of
    # its load, which the prepared run owns with its broker: `PreparedRun.kafka`).
    source: str = field(default="files", metadata=_RECORDED)
    # The state TTL as typed ('5min'), which the results record as it was given.
    state_ttl_text: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.state_ttl, str):  # as typed: a bad one is refused here
            object.__setattr__(self, "state_ttl_text", self.state_ttl)
            object.__setattr__(self, "state_ttl", StateTtl.parse(self.state_ttl, "--state-ttl"))
        if self.parallelism is not None and self.parallelism < 1:
            raise UsageError(f"--parallelism must be at least 1, got {self.parallelism}")
        if self.timeout_s <= 0:
            raise UsageError("--timeout must be positive")
        if not 0 <= self.failover_at <= 1:
            raise UsageError(f"--failover-at must be between 0 and 1, got {self.failover_at}")
        check_repeat(self.repeat, True)
        check_runs(self.runs)
        if self.rate is not None:
            check_rate(self.rate)
            object.__setattr__(self, "rate", float(self.rate))
        if self.search is not None:
            self._check_search()
        self._check_source()

    def _check_source(self) -> None:
        if self.source not in SOURCES:
            raise UsageError(f"--source must be one of {', '.join(SOURCES)}, got {self.source}")
        if self.source != "kafka":
            return
        if self.rate is not None or self.search is not None:
            raise UsageError(
                "--rate with --source kafka: the rate feed releases a part's files on a clock; "
                "releasing a topic's offsets on a clock is not built (read Kafka at full speed)"
            )

    def _check_search(self) -> None:
        """A rate search runs its own trials, each at its own rate, from one warm-up."""
        assert self.search is not None
        for given, flag in (
            (self.rate is not None, "--rate"),
            (self.failing_over, "--failover"),
            (self.runs != 1, "--runs"),
            (self.repeat != 1, "--repeat"),
        ):
            if given:
                raise UsageError(f"a rate search picks its own trials: {flag} does not apply")
        check_repeat(self.search.max_trials, True, "--max-trials")

    @property
    def failing_over(self) -> bool:
        """Whether a failover run was asked (`RunOptions.failover`; never here alone)."""
        return False

    @property
    def feed_rate(self) -> float | None:
        """The lowest rate a benchmark phase is fed at (None: every one at full speed): its
        release must end within the query's timeout."""
        return self.search.min_rate if self.search is not None else self.rate

    def latency_stamps(self, query: str) -> LatencyStamps | None:
        """What a job of `query` is asked to stamp, when it stamps (`latency_on`)."""
        rule = lat.rule(query)
        if rule is None:
            return None
        per_event = rule.sample < 1.0
        sample = self.latency_sample if self.latency_sample and per_event else rule.sample
        return LatencyStamps(rule.column, sample)

    def latency_on(self, engine: Engine, query: str) -> bool:
        # A rate search stamps its trials only when asked: the stamps cost the engine CPU
        # (Flink q0: ~6% per event at 0.1% stamped), which would lower the rate found.
        fed = self.rate is not None or (self.search is not None and self.search.latency)
        wanted = fed if self.latency is None else self.latency
        return wanted and engine.capabilities().latency_stamps and lat.rule(query) is not None

    def recorded(self) -> dict[str, Any]:
        """What the results record as `setup.options` (docs/results.md): every field marked
        recorded, as the results show it, and what a few settings imply."""
        recorded = {
            f.name: _shown(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.metadata.get("recorded")
        }
        if self.state_ttl_text is not None:
            recorded["state_ttl"] = self.state_ttl_text
        if "failover_at" in recorded and not self.failing_over:
            recorded["failover_at"] = None  # only a failover run has a kill point
        if getattr(self, "event_rate", None) is None:
            recorded.pop("event_rate", None)  # recorded only when given
        if self.rate is not None:  # what every window row's latency waits for (docs/protocol.md)
            recorded["watermark_delay_s"] = WATERMARK_DELAY_MS / 1000
        if self.search is not None:
            recorded["sustainable"] = self.search.recorded()
        return recorded


def _shown(value: Any) -> Any:
    """A field's value as the results file holds it."""
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, StateTtl):
        return str(value)
    return value


@dataclass(frozen=True, kw_only=True)
class RunOptions(ProtocolOptions):
    """Everything a command was asked to run, checked: the protocol's options (the object
    itself is one, passed to the protocol as it is) with the queries and the dataset part.

    `event_rate` is the dataset's events per second of event time (None: the generator's
    default); it is not a feeding rate.
    """

    queries: tuple[str, ...] = field(metadata=_RECORDED)
    events: int = field(metadata=_RECORDED)
    suite: str | None = field(default=None, metadata=_RECORDED)
    # The dataset part.
    warmup_fraction: float = field(default=0.75, metadata=_RECORDED)
    seed: int = field(default=0, metadata=_RECORDED)
    format: str = field(default=DEFAULT_FORMAT, metadata=_RECORDED)
    event_rate: int | None = field(default=None, metadata=_RECORDED)
    # A failover run (docs/failover.md): a worker of each query is killed in its benchmark phase.
    failover: bool = field(default=False, metadata=_RECORDED)
    # A CPU profile of each query's scored phases (docs/profiling.md); recorded, since the
    # figures were measured with the profiler sampling beside them.
    profile: bool = field(default=False, metadata=_RECORDED)
    # Where the dataset is (`--data`: a folder or s3://bucket/prefix; None: the cache keyed by
    # its parameters) and the checkpoints (`--checkpoints s3://...`; None: the work directory).
    # The flags' text is parsed here, once (`_parse_locations`): every layer below takes these
    # typed values and asks them (`isinstance(data, S3Url)`), none parses the text again.
    data: Location | None = None
    checkpoints: S3Url | None = None
    # --source kafka: the user's cluster (None: an embedded broker) and the embedded broker's
    # directory (None: its default, where loads are kept between runs).
    kafka_bootstrap: str | None = None
    kafka_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.events <= 0:
            raise UsageError(f"--events must be a positive number of events, got {self.events}")
        if self.event_rate is not None and self.event_rate < 1:
            raise UsageError(f"--event-rate must be at least 1, got {self.event_rate}")
        super().__post_init__()
        if self.failover and self.repeat != 1:
            raise UsageError(
                f"--failover measures one benchmark phase per query: use --repeat 1, "
                f"not {self.repeat}"
            )
        if self.failover and self.source == "kafka":
            raise UsageError(
                "--failover with --source kafka is not built yet: a failover run counts a "
                "restarted reader's position in its files; use --source files"
            )
        if self.failover and self.rate is not None:
            raise UsageError("--rate and --failover measure different things: use one of them")
        object.__setattr__(self, "format", check_format(self.format))
        self._parse_locations()  # last: the other flags are refused first

    def _parse_locations(self) -> None:
        """`--data` and `--checkpoints` as given (text) become their typed values; values
        already typed (a copy made with `dataclasses.replace`) are kept as they are."""
        if isinstance(self.data, str):  # a malformed s3:// URL is one UsageError line
            object.__setattr__(self, "data", location(self.data) if self.data else None)
        if isinstance(self.checkpoints, str):
            object.__setattr__(self, "checkpoints", parse_checkpoints(self.checkpoints))

    @property
    def failing_over(self) -> bool:
        return self.failover

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
