"""What a query run observed (a leaf: data only); `protocol.scoring.record` turns it into a result.

Each phase's observations are one object, made when the phase starts and written by it alone:
a warm-up's (`WarmupObserved`), a benchmark phase's (`BenchmarkObserved`). A cycle is one
warm-up and its repeats (or a search's trials); every repeat's `Measured` pairs its cycle's
warm-up with its own benchmark phase, sharing them (nothing is copied, nothing reset).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from nexmark.engines.base import CheckpointInfo, Handoff
from nexmark.metrics import latency as lat
from nexmark.metrics.sampler import Sample
from nexmark.metrics.system import OtherLoad
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query.failover import Outage
from nexmark.results.profile import Profile

WARMUP_PHASES = ("warmup", "phase-checkpoint", "stop")  # the times a warm-up records


@dataclass
class WarmupObserved:
    """One warm-up (`--runs M`: each run has its own)."""

    phases: dict[str, float] = field(default_factory=dict)  # phase -> start (unix s)
    phase_checkpoint: CheckpointInfo | None = None
    checkpoints: list[CheckpointInfo] = field(default_factory=list)
    job_options: dict[str, str] | None = None  # the warm-up job's resolved options
    state_bound: str | None = None  # what bounds the job's state (JobSetup.state_bound)
    state_ttl_s: float | None = None  # the job's state TTL (None: none)
    logical_bytes_at_cut: int | None = None  # Job.logical_state_bytes after the phase checkpoint
    # --source kafka: the phase checkpoint held the warm-up topic's end offsets (None: files;
    # False: the engine cannot tell).
    offsets_proved: bool | None = None
    warmup_others: OtherLoad | None = None  # what other processes used while it read


@dataclass
class BenchmarkObserved:
    """One benchmark phase (a repeat, or a search's trial), from its restore to its end."""

    phases: dict[str, float] = field(default_factory=dict)  # restore, benchmark, end-checkpoint
    end_checkpoint: CheckpointInfo | None = None
    benchmark_checkpoints: list[CheckpointInfo] = field(default_factory=list)
    logical_bytes_at_end: int | None = None  # Job.logical_state_bytes after the end checkpoint
    restored_from: str | None = None
    restored_id: int | None = None  # the checkpoint id the benchmark job says it restored
    t_submit: float | None = None
    t_running: float | None = None
    t_first: float | None = None
    t_end: float | None = None
    cpu_at_running: float | None = None
    cpu_at_end: float | None = None
    # When the two CPU readings were taken: the cores' span (`Timing`).
    cpu_running_read_at: float | None = None
    cpu_end_read_at: float | None = None
    benchmark_events_seen: int = 0
    benchmark_others: OtherLoad | None = None  # what other processes used while it was timed
    job_options: dict[str, str] | None = None  # the benchmark job's resolved options
    state_bound: str | None = None
    state_ttl_s: float | None = None
    outage: Outage | None = None  # a failover run's failure, as observed
    # --source kafka: the embedded broker's CPU seconds at t_running and at the end checkpoint
    # (None: a user's cluster, not measurable), and the offsets proof (as `WarmupObserved`'s).
    source_cpu_at_running: float | None = None
    source_cpu_at_end: float | None = None
    benchmark_offsets_proved: bool | None = None
    # A rate-fed phase: the rate asked and the releaser's log of (wall, released).
    rate_asked: float | None = None
    release_log: list[tuple[float, int]] = field(default_factory=list)
    releaser_cpu_s: float | None = None
    # Released time slices: (first event ms, last event ms, release wall time).
    releases: list[lat.Release] = field(default_factory=list)
    # A phase with latency stamps: (sink wall, latency s) per stamped row of the phase, sorted,
    # and the stamps left out (rows of the warm-up, or of events before the phase).
    latency: list[tuple[float, float]] | None = None
    latency_left_out: int = 0
    latency_sample: float | None = None  # the share of rows stamped, as submitted


class TrialSearch(Protocol):
    """A search that picks each benchmark phase's rate from the outcomes of the ones before
    (`nexmark sustainable`: scoring/sustainable.py). The protocol runs its trials as repeats
    restored from one phase checkpoint, for as long as it is not `done`."""

    done: bool
    max_trials: int

    def next_rate(self) -> float:
        """The next trial's feeding rate in events/s."""
        ...

    def observe_repeat(
        self, repeat: RepeatMeasured, samples: list[Sample], parts: PhaseParts
    ) -> None:
        """Take a finished trial (its samples), noting its verdict on `repeat`."""
        ...

    def summary(self) -> Any:
        """What the results record of the search (results.figures.Sustainable)."""
        ...


@dataclass
class Measured:
    """A query's observations: a warm-up and a benchmark phase (the last ones, or one repeat's),
    read as one record (`m.t_submit`, `m.phase_checkpoint`: whichever phase observed it), and
    every repeat of every cycle in `repeats`."""

    query: str
    started_at: float
    warmup: WarmupObserved = field(default_factory=WarmupObserved)
    benchmark: BenchmarkObserved = field(default_factory=BenchmarkObserved)
    repeats: list[RepeatMeasured] = field(default_factory=list)  # each benchmark phase run
    search: TrialSearch | None = None  # a rate search's trials ran as the repeats
    handoff: Handoff = Handoff.RESUBMIT  # how the state crossed the cut (the engine's)
    ended: dict[str, float] = field(default_factory=dict)  # cleanup, done: when entered
    profile: Profile | None = None  # the scored phases' CPU profile (`--profile`)

    def __getattr__(self, name: str) -> Any:
        # Only called for what is not a field: a phase's observation, the benchmark's first.
        if name.startswith("__"):
            raise AttributeError(name)
        for phase in (self.benchmark, self.warmup):
            if name in phase.__dataclass_fields__:
                return getattr(phase, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def of_repeat(self, benchmark: BenchmarkObserved) -> Measured:
        """This query's warm-up with `benchmark`: one repeat's observations (shared)."""
        return Measured(self.query, self.started_at, self.warmup, benchmark, handoff=self.handoff)

    @property
    def phases(self) -> dict[str, float]:
        return {**self.warmup.phases, **self.benchmark.phases, **self.ended}

    @property
    def phase_checkpoint(self) -> CheckpointInfo | None:
        return self.warmup.phase_checkpoint

    @property
    def warmup_checkpoints(self) -> list[CheckpointInfo]:
        return self.warmup.checkpoints

    @property
    def job_options(self) -> dict[str, dict[str, str]]:
        """Each phase's job's resolved options (phase -> options)."""
        seen = {"warmup": self.warmup.job_options, "benchmark": self.benchmark.job_options}
        return {phase: dict(o) for phase, o in seen.items() if o is not None}

    @property
    def state_bound(self) -> str | None:
        return self.benchmark.state_bound or self.warmup.state_bound

    @property
    def state_ttl_s(self) -> float | None:
        job = self.benchmark if self.benchmark.job_options is not None else self.warmup
        return job.state_ttl_s


@dataclass
class RepeatMeasured:
    """One benchmark phase of a query restored from its phase checkpoint (`--repeat N`).

    `measured` holds the warm-up's observations and this repeat's benchmark ones (what
    `record.build_result` needs for one sample); `samples` is the slice of the sampler's
    samples taken during this repeat (from its restore to its end)."""

    index: int  # over every run's repeats: run r's repeat k is r * repeat + k
    measured: Measured
    samples: tuple[int, int]
    status: str = "ok"  # "ok", "failed", "timeout" or "skipped" (QueryRun._restore_expired)
    reason: str | None = None
    run: int = 0  # the whole cycle (`--runs M`) it belongs to, 0 for the first
    # The slice of the sampler's samples of its run's warm-up (None: all before `samples`).
    warmup_samples: tuple[int, int] | None = None
    rate: float | None = None  # the rate it was fed at (None: read at full speed)
    sustained: bool | None = None  # a trial of a rate search: whether it kept up
    verdict: str | None = None  # why (or why not)
    lag_trend_eps: float | None = None  # the lag's trend the trial was judged by (settled)
