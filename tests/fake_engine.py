"""A scripted fake engine: the whole `Engine` interface in Python, no JVM, driven by a clock.

Each query follows a `Script` (how fast the job gets ready and reads, what it costs, and what
goes wrong: a failed job, a job that never gets ready, a lost or wrong restore, a failed
checkpoint, Ctrl-C). Time comes from an injectable clock, so with `FakeClock` a whole two-phase
run takes no wall time and every timestamp is known; with the real clock it runs in
milliseconds.

Its state is which dataset parts it has read: the phase checkpoint writes that to a snapshot
file, and a restored job reads it back. With a COLLECT sink it commits rows at each checkpoint,
computed by the verifier's reference on the events it has read (so verification of the fake
tests the plumbing, not the SQL): the warm-up job commits the rows of the warm-up events, the
restored benchmark job retracts those and adds the rows of every event it knows of. A job that
did not restore knows only the benchmark part, as a real engine that lost its state would.
By default it declares other result semantics than Flink (windows fire at their end, the final
watermark is the maximum over readers, averages are fractional, no watermark slack), so a
verifier that assumed Flink's rules would fail on it.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc

from nexmark.engines.base import Engine, Job
from nexmark.engines.capabilities import (
    Capabilities,
    EngineInfo,
    FailoverSupport,
    Handoff,
    StateTtlSupport,
    TargetOption,
)
from nexmark.engines.checkpoints import CheckpointInfo, CheckpointStatus, Snapshot
from nexmark.engines.semantics import (
    Change,
    Emission,
    FinalWatermark,
    IntegerAverage,
    ResultSemantics,
    RowKind,
    SideLookup,
    WindowFiring,
)
from nexmark.engines.source import Source, as_source, local_folder
from nexmark.engines.spec import JobSetup, JobSpec, SinkKind
from nexmark.engines.status import (
    EventCount,
    InjectedFailure,
    JobState,
    JobStatus,
    LiveState,
    Recovery,
)
from nexmark.errors import DatasetError, EngineError
from nexmark.verify.reference import EventData, load_events, reference
from nexmark.workload.dataset import Dataset
from nexmark.workload.feed import Feed, PartFeed
from nexmark.workload.generator import event_time_ms

# Queries the fake can answer from the reference (q6 has none; q10 writes its own files; q9,
# q18 and q19 may have ties the reference only projects).
FAKE_QUERIES = frozenset(
    f"q{n}" for n in (0, 1, 2, 3, 4, 5, 7, 8, 11, 12, 13, 14, 15, 16, 17, 20, 21, 22, 23)
)

SPARK_LIKE = ResultSemantics(
    emission=Emission.CHANGELOG,
    window_firing=WindowFiring.END,
    final_watermark=FinalWatermark.MAX_OVER_INPUT,
    integer_average=IntegerAverage.FRACTIONAL,
    side_lookup=SideLookup.ON_ARRIVAL,
    watermark_slack_ms=0,
    idle_sources=frozenset(),
)


class FakeClock:
    """Time that moves only when someone sleeps (or `advance`s it). As a real sleep, even a
    sleep of zero takes a moment (1 ms), so a loop that sleeps always reaches its deadline."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(0.001, seconds)

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Script:
    """What the fake does for one query. Phases are "warmup" and "benchmark".

    Attributes:
        ready_s: Seconds from submission until the job is READY.
        eps: Events per second read once ready.
        cores: CPU the engine uses while a job runs.
        checkpoint_s: How long a triggered checkpoint takes (the clock moves that much).
        bytes_per_event: State size per event read.
        fail_in: The job FAILS in that phase once it has read half its events.
        never_ready_in: The job stays STARTING in that phase.
        restore: "confirm" (reports its snapshot), "silent" (reports none), "other" (reports
            another snapshot).
        interrupt_in: Ctrl-C (KeyboardInterrupt) while polling events in that phase.
        checkpoint_fails: Every triggered checkpoint fails.
        die_in: The engine's process dies in that phase: every later call on it fails.
        finish_at: The job FINISHES by itself once it has read this share of its part (1.0: at
            the end of its input, as Spark's availableNow queries do).
        periodic_s: Periodic checkpoints every that many seconds once ready (None: none); each
            completes `checkpoint_s` after its trigger and covers the events read at it.
        detect_s: After `inject_failure`, seconds until the job leaves READY (and its recovery
            counts the restart, failed at that time).
        restart_s: Then seconds until it is READY again, reading on from its latest periodic
            checkpoint's events.
        never_recovers: After a failure the job stays STARTING.
        watermark_after_s: The benchmark job has event time: its first watermark (past every
            window) arrives this many seconds after it read its last event; until then it
            awaits one, and a checkpoint commits none of the benchmark rows (as Flink's
            restored event-time operators emit nothing before their first watermark).
            None: no event time (no watermark, rows committed at the first checkpoint).
        watermark_stalls: The first that many benchmark jobs of the query never get their
            first watermark (with `watermark_after_s`).
        one_reader_in: In that phase one source reader reads every file of the part and the
            others none (what Flink's file source does when a reader starts late).
        late_dropped: Records each benchmark job's event-time operators drop behind the
            watermark (`Job.late_records_dropped`); None: no such operator.
        live: The job's live state (`Job.live_state`) as a function of its phase and the
            seconds since it was ready; None: the engine measures none.
        logical: The job's logical state size (`Job.logical_state_bytes`) as a function of
            its phase (a snapshot taking `checkpoint_s`; it may raise); None: none.
    """

    ready_s: float = 0.2
    eps: float = 100_000.0
    cores: float = 1.5
    checkpoint_s: float = 0.1
    bytes_per_event: int = 100
    fail_in: str | None = None
    never_ready_in: str | None = None
    restore: str = "confirm"
    interrupt_in: str | None = None
    checkpoint_fails: bool = False
    die_in: str | None = None
    finish_at: float | None = None
    periodic_s: float | None = None
    detect_s: float = 1.0
    restart_s: float = 2.0
    never_recovers: bool = False
    watermark_after_s: float | None = None
    watermark_stalls: int = 0
    one_reader_in: str | None = None
    late_dropped: int | None = None
    live: Callable[[str, float], LiveState | None] | None = None
    logical: Callable[[str], int | None] | None = None
    # Events read beyond the counter at a kill (as Spark's micro-batch in flight, counted only
    # when it commits): reported by inject_failure as `events_read`.
    reads_ahead: int = 0
    # Benchmark jobs (0: the first repeat) that fail once they have read half their events.
    fail_repeats: tuple[int, ...] = ()
    # The read rate of each benchmark job in turn (repeats), instead of `eps`.
    repeat_eps: tuple[float, ...] = ()
    # The count is published on this interval (as Flink's metric store is refreshed): a job
    # reports the events read at its latest refresh, stamped with that refresh's time, so
    # polls closer together than this see the same count. None: a live count, no time.
    metric_refresh_s: float | None = None
    # As Flink's REST API: a request only asks the store to refresh (when its last refresh is
    # older than `metric_refresh_s`) and is answered from the store as it was, so at one poll a
    # second each poll sees the count of the poll before.
    metric_fetch_on_request: bool = False
    # A rate-fed benchmark job (JobSpec.rate_fed) reads what its feed has released, at most at
    # `eps` (its capacity): a backlog builds up when the feed releases faster.
    # With latency stamps (JobSpec.latency), a rate-fed job reads each released slice whole,
    # in order, at `eps`, and every row of it (one per event, stamped with that event's time)
    # reaches the sink `latency_s` after the slice is read: a slice of n events released when
    # the job is idle has rows of latency n / eps + latency_s exactly.
    latency_s: float = 0.0
    # The capacity of a rate-fed benchmark job when not `eps` (an engine that keeps up with
    # less than its full-speed throughput, e.g. one paying a fixed cost per arriving file).
    fed_eps: float | None = None


@dataclass
class FakeWorld:
    """What every fake engine of one test shares: the scripts, the clock, and a call log."""

    scripts: dict[str, Script] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    log: list[tuple] = field(default_factory=list)
    engines: list[FakeEngine] = field(default_factory=list)
    # What enable_failover answers, and what the capabilities declare (NONE: it refuses).
    failover: FailoverSupport = FailoverSupport.INJECT
    # The Java runtime its info reports, as a JVM engine's does (None: no JVM).
    java: str | None = None
    # Restores leave the snapshot as it was (a private copy per restored job, as Spark's
    # engine makes); False: the restored job writes into the snapshot itself, which then
    # cannot be restored again, and the engine says so (`repeatable_restore`).
    repeatable_restore: bool = True
    # How the state crosses the cut: resubmitted from the snapshot (as Flink and Spark), or
    # kept in place by the warm-up job going on (`Job.continue_with`).
    handoff: Handoff = Handoff.RESUBMIT
    # Refuse a part whose files are not one per source reader unless the job is rate-fed (as
    # Flink's file source, which hands each reader whole files, does).
    one_file_per_reader: bool = False
    # What a state TTL means on it (NONE: `--state-ttl` refused).
    state_ttl: StateTtlSupport = StateTtlSupport.NONE
    # Each phase checkpoint's `stop` (nothing more asked of the job after the cut).
    cut_stops: list[bool] = field(default_factory=list)

    def script(self, query: str) -> Script:
        return self.scripts.get(query, Script())


class _ClockedFeed(Feed):
    """A feed that notes, on the fake's clock, when each release happened: what a real
    engine's source sees as files appearing."""

    def __init__(self, *args, clock: Callable[[], float], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.clock = clock
        self.history: list[tuple[float, int]] = []  # (time, events released by then)

    def release(self, files=None):
        made = super().release(files)
        if made:
            self.history.append((self.clock(), self.released_events))
        return made


class FakeJob(Job):
    def __init__(self, engine: FakeEngine, spec: JobSpec, setup: JobSetup, job_id: str) -> None:
        self.engine, self.spec, self.setup, self.id = engine, spec, setup, job_id
        self.world = engine.world
        self.script = self.world.script(spec.query)
        part = local_folder(spec.source, "fake")
        self.phase = part.name  # "warmup" or "benchmark"
        dataset = Dataset(part.parent)
        self.first, self.last = dataset.part_range(self.phase)
        self.file_events = [f.events for f in dataset.files(self.phase)]
        self.submitted = self.world.clock()
        self.canceled = False
        self._fetched: float | None = None  # the metric store's last refresh (on request)
        self.failed: str | None = None
        self.finished = False
        self.checkpoint_list: list[CheckpointInfo] = []
        self.known_parts = [self.phase]  # the fake's state: the parts it has read
        self.restored: Snapshot | None = None
        self.killed_at: float | None = None  # inject_failure's time
        self.killed_events = 0  # events read then
        # Which benchmark job of this query it is (0 for the first); submit logged it already.
        self.benchmark_index = (
            sum(1 for e in self.world.log if e[:3] == ("submit", spec.query, "benchmark")) - 1
        )
        if spec.restore is not None:
            state = Path(spec.restore.ref) / "state.json"
            if not state.is_file():
                raise EngineError(f"fake: no snapshot at {spec.restore.ref}")
            if json.loads(state.read_text()).get("consumed_by"):
                raise EngineError(f"fake: snapshot {spec.restore.ref} was consumed by a restore")
            if self.world.repeatable_restore:  # a private copy, written into by this job
                private = Path(spec.work_dir) / "fake-restored" / job_id
                shutil.copytree(spec.restore.ref, private)
                state = private / "state.json"
            self.known_parts = json.loads(state.read_text())["parts"] + [self.phase]
            state.write_text(json.dumps({"parts": self.known_parts, "consumed_by": job_id}))
            self.restored = spec.restore
        # Rate-fed: the feed the protocol releases, and what has been read of it by when.
        self._feed: Feed | None = None
        self._fed_read, self._fed_at = 0.0, None
        if spec.rate_fed:
            into = Path(spec.work_dir) / "fake-feed" / job_id
            self._feed = _ClockedFeed(PartFeed.of(part), into, clock=self.world.clock)
            if self.script.fed_eps is not None:
                self.script = dataclasses.replace(self.script, eps=self.script.fed_eps)
        self._config = dataset.params.generator_config
        if self.phase == "benchmark" and self.benchmark_index in self.script.fail_repeats:
            self.script = dataclasses.replace(self.script, fail_in="benchmark")
        if self.phase == "benchmark" and self.benchmark_index < len(self.script.repeat_eps):
            eps = self.script.repeat_eps[self.benchmark_index]
            self.script = dataclasses.replace(self.script, eps=eps)

    # -- progress ---------------------------------------------------------------------------

    def _ready_at(self) -> float | None:
        if self.script.never_ready_in == self.phase:
            return None
        return self.submitted + self.script.ready_s

    def status(self) -> JobStatus:
        self.engine.check_alive()
        if self.canceled:
            return JobStatus(JobState.CANCELED)
        if self.failed:
            return JobStatus(JobState.FAILED, self.failed)
        self._events()
        if self.finished:
            return JobStatus(JobState.FINISHED)
        ready = self._ready_at()
        if ready is None or self.world.clock() < ready:
            return JobStatus(JobState.STARTING)
        if self.killed_at is not None and self._detected() and not self._restarted():
            return JobStatus(JobState.STARTING)
        return JobStatus(JobState.READY)

    # -- failover ---------------------------------------------------------------------------

    def _detected(self) -> bool:
        return self.killed_at is not None and self.world.clock() >= self._detected_at()

    def _detected_at(self) -> float:
        assert self.killed_at is not None
        return self.killed_at + self.script.detect_s

    def _restart_at(self) -> float | None:
        if self.killed_at is None or self.script.never_recovers:
            return None
        return self._detected_at() + self.script.restart_s

    def _restarted(self) -> bool:
        restart = self._restart_at()
        return restart is not None and self.world.clock() >= restart

    def _restored_events(self) -> int:
        """Events of the latest periodic checkpoint completed before the kill."""
        done = [c for c in self._periodic() if c.ack_ts is not None and c.ack_ts <= self.killed_at]
        return (done[-1].checkpointed_bytes or 0) if done else 0

    def inject_failure(self) -> InjectedFailure:
        self.world.log.append(("kill", self.spec.query, self.phase))
        self.killed_events = self._events()
        self.killed_at = self.world.clock()
        ahead = self.script.reads_ahead
        read = self.killed_events + ahead if ahead else None
        return InjectedFailure(self.killed_at, "fake worker 1 (2 tasks)", events_read=read)

    def recovery(self) -> Recovery | None:
        if not self._detected():
            return Recovery()
        return Recovery(
            restarts=1,
            failed_at=self._detected_at(),
            cause="fake: worker lost",
            events_at_restore=self._restored_events() if self._restarted() else None,
        )

    def events_emitted(self) -> int:
        return self.events_emitted_at().events

    def events_emitted_at(self) -> EventCount:
        self.engine.check_alive()
        if self.script.interrupt_in == self.phase:
            raise KeyboardInterrupt
        events, every, ready = self._events(), self.script.metric_refresh_s, self._ready_at()
        now = self.world.clock()
        if every is None or ready is None or now < ready:
            return EventCount(events)
        if self.script.metric_fetch_on_request:
            fetched = self._fetched
            if fetched is None or now - fetched > every:
                self._fetched = now  # answered from the store as it was before
            if fetched is None:
                return EventCount(0, now)
            return EventCount(min(events, self._read_at(fetched, self.last - self.first)), fetched)
        refreshed = ready + every * int((now - ready) / every)
        return EventCount(min(events, self._read_at(refreshed, self.last - self.first)), refreshed)

    def _events(self) -> int:
        """Events read by now, as scripted (and what happens once enough are read)."""
        total = self.last - self.first
        events = self._read_at(self.world.clock(), total)
        if self.script.finish_at is not None:
            events = min(events, int(total * self.script.finish_at))
            self.finished = events >= int(total * self.script.finish_at)
        if self.script.die_in == self.phase and events >= total // 2:
            self.engine.dead = True
            self.engine.check_alive()
        if self.script.fail_in == self.phase:  # reads half its events, then fails
            events = min(events, total // 2)
            if events >= total // 2 and not self.canceled:
                self.failed = f"scripted failure of {self.spec.query} in the {self.phase} phase"
        return events

    def events_per_reader(self) -> list[int] | None:
        """One reader per file, each through its file at the same pace (as scripted)."""
        read, total = self._events(), sum(self.file_events)
        if self.script.one_reader_in == self.phase:
            return [read] + [0] * (len(self.file_events) - 1)
        return [n * read // total for n in self.file_events]

    def _read_at(self, now: float, total: int) -> int:
        """Events read by `now`: from the ready time, and after a restart from the restored
        checkpoint's events; frozen at the kill's count while the job is down."""
        ready = self._ready_at()
        if ready is None or now < ready:
            return 0
        if self._feed is not None:
            return self._read_fed(now, ready)
        if self.killed_at is None or now < self.killed_at:
            return min(total, int((now - ready) * self.script.eps))
        restart = self._restart_at()
        if restart is None or now < restart:
            return self.killed_events
        return min(total, self._restored_events() + int((now - restart) * self.script.eps))

    def _read_fed(self, now: float, ready: float) -> int:
        """Rate-fed: since the previous call, read the released backlog at most at `eps`."""
        assert self._feed is not None
        since = ready if self._fed_at is None else max(ready, self._fed_at)
        if now > since:
            room = self._fed_read + (now - since) * self.script.eps
            self._fed_read = min(float(self._feed.released_events), room)
            self._fed_at = now
        return int(self._fed_read)

    def feed(self) -> Feed | None:
        return self._feed

    def latency_stamps(self) -> list[tuple[int, float]]:
        """Every 1/sample-th event's row, once it has reached the sink by now (see
        `Script.latency_s`); rows of a job that was not rate-fed are not modelled (none)."""
        if self.spec.latency is None:
            raise EngineError(f"job {self.id} stamps no rows")
        if not isinstance(self._feed, _ClockedFeed):
            return []
        every = max(1, round(1 / self.spec.latency.sample))
        now, eps, busy, before = self.world.clock(), self.script.eps, 0.0, 0
        stamps = []
        for released_at, released in self._feed.history:
            busy = max(busy, released_at) + (released - before) / eps
            wall = busy + self.script.latency_s
            if wall > now:
                break
            for n in range(before + (-before) % every, released, every):
                stamps.append((int(event_time_ms(self.first + n, self._config)), wall))
            before = released
        return stamps

    def continue_with(self, source: Source) -> None:
        """IN_PLACE: the same job reads the next part, its state (the parts read) kept; it
        counts the new part's events from now, with no restart."""
        if self.world.handoff is not Handoff.IN_PLACE:
            raise EngineError("fake: this engine resubmits; it does not continue in place")
        part = local_folder(source, "fake")
        self.world.log.append(("continue", self.spec.query, part.name))
        self.spec = dataclasses.replace(self.spec, source=as_source(source))
        self.phase = part.name
        dataset = Dataset(part.parent)
        self.first, self.last = dataset.part_range(self.phase)
        self.file_events = [f.events for f in dataset.files(self.phase)]
        self.submitted = self.world.clock() - self.script.ready_s  # running: no ready delay
        self.known_parts = [*self.known_parts, self.phase]

    def _periodic(self) -> list[CheckpointInfo]:
        """The scripted periodic checkpoints so far (events read at the trigger stand in the
        incremental size, so a restart can read them back)."""
        ready, every = self._ready_at(), self.script.periodic_s
        if ready is None or every is None:
            return []
        now, total = self.world.clock(), self.last - self.first
        out, n = [], 1
        until = self.killed_at if self.killed_at is not None else now
        while ready + n * every + self.script.checkpoint_s <= until:
            trigger = ready + n * every
            events = min(total, int((trigger - ready) * self.script.eps))
            ack = trigger + self.script.checkpoint_s
            done, size = CheckpointStatus.COMPLETED, events * self.script.bytes_per_event
            out.append(CheckpointInfo(1000 + n, done, trigger, ack, self.script.checkpoint_s,
                                      events, size))  # fmt: skip
            n += 1
        return out

    def _watermark_arrived(self) -> bool:
        after = self.script.watermark_after_s
        if after is None or self.phase != "benchmark":
            return True
        if self.benchmark_index < self.script.watermark_stalls:
            return False
        ready, total = self._ready_at(), self.last - self.first
        if ready is None or self.script.eps <= 0:
            return False
        return self.world.clock() >= ready + total / self.script.eps + after

    def live_state(self) -> LiveState | None:
        self.engine.check_alive()
        ready = self._ready_at()
        if self.script.live is None or ready is None or self.world.clock() < ready:
            return None
        return self.script.live(self.phase, self.world.clock() - ready)

    def logical_state_bytes(self, timeout_s: float) -> int | None:
        self.engine.check_alive()
        if self.script.logical is None:
            return None
        self.world.log.append(("logical", self.spec.query, self.phase))
        _advance(self.world.clock, self.script.checkpoint_s)
        return self.script.logical(self.phase)

    def watermark_ms(self) -> int | None:
        if self.script.watermark_after_s is None or not self._watermark_arrived():
            return None
        return 2**62  # past every window of the data

    def awaits_watermark(self) -> bool:
        return self.script.watermark_after_s is not None and not self._watermark_arrived()

    def late_records_dropped(self) -> int | None:
        return self.script.late_dropped if self.phase == "benchmark" else None

    # -- checkpoints ------------------------------------------------------------------------

    def trigger_phase_checkpoint(self, timeout_s: float, stop: bool = False) -> CheckpointInfo:
        self.world.cut_stops.append(stop)
        return self.trigger_checkpoint(timeout_s)

    def trigger_checkpoint(self, timeout_s: float) -> CheckpointInfo:
        self.engine.check_alive()
        self.world.log.append(("checkpoint", self.spec.query, self.phase))
        trigger = self.world.clock()
        checkpoint_id = self.engine.next_checkpoint_id()
        if self.script.checkpoint_fails:
            self.checkpoint_list.append(
                CheckpointInfo(
                    checkpoint_id, CheckpointStatus.FAILED, trigger, None, None, None, None
                )
            )
            raise EngineError(f"fake: checkpoint {checkpoint_id} of job {self.id} failed")
        _advance(self.world.clock, self.script.checkpoint_s)
        path = Path(self.spec.work_dir) / "fake-checkpoints" / f"chk-{checkpoint_id}"
        path.mkdir(parents=True, exist_ok=True)
        (path / "state.json").write_text(json.dumps({"parts": self.known_parts}))
        if self.spec.sink is SinkKind.COLLECT:
            self._commit(checkpoint_id)
        state = self.script.bytes_per_event * self.events_emitted() * len(self.known_parts)
        info = CheckpointInfo(
            checkpoint_id,
            CheckpointStatus.COMPLETED,
            trigger,
            self.world.clock(),
            self.world.clock() - trigger,
            state // 2,
            state,
            Snapshot(checkpoint_id, str(path)),
        )
        self.checkpoint_list.append(info)
        return info

    def checkpoints(self) -> list[CheckpointInfo]:
        return self._periodic() + list(self.checkpoint_list)

    def restored_from(self) -> Snapshot | None:
        if self.restored is None or self.script.restore == "silent":
            return None
        if self.script.restore == "other":
            return Snapshot(-1, "/somewhere/else")
        return self.restored

    def cancel(self) -> None:
        self.world.log.append(("cancel", self.spec.query, self.phase))
        self.canceled = True

    # -- results ----------------------------------------------------------------------------

    def _collect_dir(self) -> Path:
        return Path(self.spec.collect_dir or Path(self.spec.work_dir) / "collect")

    def _commit(self, checkpoint_id: int) -> None:
        """Commit what the job has emitted since its last checkpoint (here: everything at the
        first checkpoint of the job on its current part; nothing more later)."""
        parts = len(self.known_parts)  # a job that went on in place commits again
        out = self._collect_dir() / f"{self.id}-p{parts}-{checkpoint_id}.pickle"
        done = any(self._collect_dir().glob(f"{self.id}-p{parts}-*.pickle"))
        if done or not self._watermark_arrived():
            return
        changes = [Change(RowKind.ADD, row) for row in self.engine.rows(self, self.known_parts)]
        if self.restored is not None or parts > 1:  # the warm-up's rows are superseded
            earlier = self.known_parts[:-1]
            changes = [
                Change(RowKind.RETRACT, r) for r in self.engine.rows(self, earlier)
            ] + changes
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(pickle.dumps(changes))

    def collected_rows(self) -> list[Change]:
        if self.spec.sink is not SinkKind.COLLECT:
            raise EngineError(f"job {self.id} has no COLLECT sink")
        changes: list[Change] = []
        for path in sorted(self._collect_dir().glob("*.pickle")):
            changes += pickle.loads(path.read_bytes())
        return changes


def _advance(clock: Callable[[], float], seconds: float) -> None:
    if isinstance(clock, FakeClock):
        clock.advance(seconds)


class FakeEngine(Engine):
    """The fake engine. `world` is shared by every engine a test makes (restarts included)."""

    name = "fake"
    target_options = (TargetOption("--fake-target", "target", "Where the fake runs.", "NAME"),)

    def __init__(
        self,
        world: FakeWorld | None = None,
        semantics: ResultSemantics = SPARK_LIKE,
        target: str = "in-process",
        settings: object = None,
    ) -> None:
        self.world = world or FakeWorld()
        self.world.engines.append(self)
        self._semantics = semantics
        self.target = target
        self.started = False
        self.closed = False
        self.dead = False
        self.jobs: list[FakeJob] = []
        self._checkpoint_id = 0
        self._cpu_origin: float | None = None
        self._events: dict[Path, EventData] = {}

    def capabilities(self) -> Capabilities:
        return Capabilities(
            queries=FAKE_QUERIES,
            state_ttl=self.world.state_ttl,
            targets=("in-process",),
            ready="the scripted ready time has passed since submission",
            failover=self.world.failover,
            repeatable_restore=self.world.repeatable_restore,
            rate_feed=True,
            latency_stamps=True,
            handoff=self.world.handoff,
        )

    def semantics(self) -> ResultSemantics:
        return self._semantics

    def start(self) -> None:
        self.world.log.append(("start",))
        self.started = True
        self._cpu_origin = self.world.clock()

    def close(self) -> None:
        self.world.log.append(("close",))
        for job in self.jobs:
            job.canceled = True
        self.closed = True

    def check_alive(self) -> None:
        if self.dead:
            raise EngineError("fake: the engine's process died")

    def info(self) -> EngineInfo:
        return EngineInfo("fake", "1.0", self.target, {"fake.option": "1"}, java=self.world.java)

    def enable_failover(self) -> FailoverSupport:
        self.world.log.append(("enable_failover",))
        if self.world.failover is FailoverSupport.NONE:
            return super().enable_failover()  # the interface's refusal
        return self.world.failover

    def job_setup(self, spec: JobSpec) -> JobSetup:
        ttl = spec.state_ttl.seconds if spec.state_ttl is not None else None
        parallelism = spec.parallelism or 2
        interval = spec.checkpoint_interval_s or 30.0
        options = {"fake.parallelism": str(parallelism), "fake.interval": f"{interval:g} s"}
        if spec.restore is not None:
            options["fake.restore"] = spec.restore.ref
        bound = f"fake TTL {ttl:g} s" if ttl is not None else "nothing: grows"
        return JobSetup(parallelism, interval, ttl, options, state_bound=bound)

    def submit(self, spec: JobSpec) -> FakeJob:
        if not self.started or self.closed:
            raise EngineError("fake: not started")
        self.check_alive()
        part = local_folder(spec.source, "fake")
        if not part.is_dir():
            raise DatasetError(f"dataset part not found: {part}")
        if self.world.one_file_per_reader and not spec.rate_fed:
            files = len(Dataset(part.parent).files(part.name))
            readers = self.job_setup(spec).parallelism
            if files != readers:
                raise DatasetError(
                    f"fake: {part} has {files} files for {readers} readers: each "
                    "reader needs exactly one file"
                )
        restore = spec.restore.ref if spec.restore else None
        self.world.log.append(("submit", spec.query, part.name, restore))
        job = FakeJob(self, spec, self.job_setup(spec), f"fake-{len(self.jobs)}")
        self.jobs.append(job)
        return job

    def cpu_seconds(self) -> float:
        self.check_alive()
        running = [j for j in self.jobs if not j.canceled]
        script = self.world.script(running[-1].spec.query) if running else Script()
        return script.cores * (self.world.clock() - (self._cpu_origin or self.world.clock()))

    def next_checkpoint_id(self) -> int:
        self._checkpoint_id += 1
        return self._checkpoint_id

    def rows(self, job: FakeJob, parts: list[str]) -> list[tuple]:
        """The query's result over the events of `parts`, by this engine's semantics."""
        dataset_dir = job.spec.source.path.parent
        if dataset_dir not in self._events:
            self._events[dataset_dir] = load_events(dataset_dir).for_engine(self._semantics)
        data = self._events[dataset_dir]
        dataset = Dataset(dataset_dir)
        keep = None
        for part in parts:
            first, last = dataset.part_range(part)
            numbers = data.table["event_number"]
            inside = pc.and_(pc.greater_equal(numbers, first), pc.less(numbers, last))
            keep = inside if keep is None else pc.or_(keep, inside)
        table = data.table.filter(keep)
        ref = reference(job.spec.query, EventData(**{**data.__dict__, "table": table}))
        return list(ref.rows) + [row for _, row in ref.optional]
