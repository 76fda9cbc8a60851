"""What an engine declares about itself, as data, without starting: what it can run and how
(`Capabilities`), its target options, and what a result records about it (`EngineInfo`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class StateTtlSupport(str, enum.Enum):
    """What a state TTL means on an engine."""

    NONE = "none"  # the engine cannot expire state by time: a TTL other than none is refused
    PROCESSING_TIME = "processing time"  # state idle that long (wall clock) may be dropped


class Handoff(str, enum.Enum):
    """How a query's state crosses the cut between the warm-up and the benchmark phase."""

    # The warm-up job is cancelled after the phase checkpoint and the benchmark job is
    # submitted restored from that checkpoint's snapshot (Flink, Spark): the restore is proven
    # by the checkpoint id the restored job reports, and timed as the recovery.
    RESUBMIT = "resubmit"
    # The warm-up job goes on: after the phase checkpoint it is handed the benchmark part
    # (`Job.continue_with`) with its state where it is, as an engine whose state lives in a
    # service reached over a network would; no restore to prove or time.
    IN_PLACE = "in-place"


class FailoverSupport(str, enum.Enum):
    """What an engine can do about a worker that dies during a job (docs/failover.md)."""

    NONE = "none"  # a failure fails the job: no failover run
    # It restarts a failed job from its latest checkpoint and reports it (`Job.recovery`), but
    # something else must cause the failure (e.g. the user kills a worker of a remote cluster).
    OBSERVE = "observe"
    # It also kills, without warning, the process running a job's tasks (`Job.inject_failure`).
    INJECT = "inject"


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do, as data (known without starting it).

    Attributes:
        queries: The queries the engine has an implementation of; `unsupported_reason` may
            still refuse one of them (e.g. its planner rejects it).
        state_ttl: What `JobSpec.state_ttl` means on this engine.
        targets: Where it can run, e.g. ("embedded", "remote").
        ready: When a submitted (or restored) job counts as `JobState.READY`, in one line.
        failover: What it can do when a worker dies (`FailoverSupport`); on a target it cannot
            kill processes of, `Engine.enable_failover` may lower INJECT to OBSERVE.
        formats: The dataset file formats its source reads (docs/dataset-format.md); the run
            refuses a `--format` outside them before generating anything.
        files_per_reader: Files of a time slice each source reader reads: the dataset gets
            readers x this many files per slice (1: Flink's file source hands each reader whole
            files, and one each keeps them reading in step).
        repeatable_restore: A snapshot may be restored more than once (`nexmark run
            --repeat N`): restoring it, and everything the restored job does afterwards (its
            own checkpoints, their retention), leaves the snapshot as it was. An engine whose
            restored job writes into what it restored from makes its own private copy first.
            False: the protocol restores each snapshot once.
        rate_feed: Its jobs can leave their feed to the protocol (`JobSpec.rate_fed`,
            `Job.feed`): a benchmark phase fed at a set rate (`nexmark run --rate`).
        latency_stamps: Its jobs can stamp a sample of their output rows at the sink
            (`JobSpec.latency`, `Job.latency_stamps`): a rate-fed phase's event-time latency.
        handoff: How the state crosses the cut between the phases (`Handoff`); IN_PLACE
            engines implement `Job.continue_with`, and run one benchmark phase per warm-up.
        sources: The kinds of `JobSpec.source` its jobs read (engines/source.py: "files",
            "kafka"); the run refuses `--source` outside them before loading anything.
    """

    queries: frozenset[str]
    state_ttl: StateTtlSupport
    targets: tuple[str, ...]
    ready: str
    failover: FailoverSupport = FailoverSupport.NONE
    formats: tuple[str, ...] = ("parquet", "csv")
    files_per_reader: int = 1
    repeatable_restore: bool = False
    rate_feed: bool = False
    latency_stamps: bool = False
    handoff: Handoff = Handoff.RESUBMIT
    sources: tuple[str, ...] = ("files",)


@dataclass(frozen=True)
class TargetOption:
    """A command-line option an engine owns to choose its target, e.g. `--flink-rest URL`.

    The `run` and `verify` commands offer every engine's target options and pass the ones given
    to the chosen engine's constructor as `param=value`; they never name an engine themselves.
    """

    flag: str  # "--flink-rest"
    param: str  # the engine constructor's keyword argument, "rest_url"
    help: str
    metavar: str = "TEXT"


@dataclass
class Worker:
    """A worker process of a cluster the jobs ran on: a Flink TaskManager, a Spark executor.

    Attributes:
        id: The engine's name for it (a TaskManager's resource id, an executor's id).
        kind: "taskmanager" or "executor".
        host: The host it runs on, as the engine reports it.
        slots: Tasks it runs at once (Flink task slots, a Spark executor's cores).
        cpus: The CPUs of its machine (Flink's `hardware.cpuCores`), when known.
        memory_bytes: Its memory (a TaskManager's process size, an executor's storage memory).
        removed: Why it left during the run (a Spark executor lost), when the engine says.
    """

    id: str
    kind: str | None = None
    host: str | None = None
    slots: int | None = None
    cpus: int | None = None
    memory_bytes: int | None = None
    removed: str | None = None


@dataclass
class EngineInfo:
    """What a result records about the engine."""

    name: str
    version: str
    target: str  # "embedded", "remote <url>", ...
    config: dict[str, str] = field(default_factory=dict)  # the full effective configuration
    # The Java runtime it runs on ("17.0.12"); None: no JVM. The result's machine records it.
    java: str | None = None
    # A cluster's workers, as the result's setup records them (empty: not a cluster).
    workers: list[Worker] = field(default_factory=list)
