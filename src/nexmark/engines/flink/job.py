"""A submitted Flink job, watched and controlled through the REST API only."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nexmark.engines.base import Job
from nexmark.engines.checkpoints import CheckpointInfo, CheckpointStatus, Snapshot
from nexmark.engines.flink.collect import (
    ResultColumn,
    read_rows,
    read_stamps,
    uncommitted_files,
)
from nexmark.engines.flink.ddl import KAFKA_SOURCE_NAME, SOURCE_TABLE
from nexmark.engines.flink.metric_dumps import NO_WATERMARK, MetricDumps
from nexmark.engines.flink.operators import VertexLoads
from nexmark.engines.flink.recovery import Restore, all_read_since, file_events, restore_of
from nexmark.engines.flink.rest import FlinkRest, RestError, RestUnreachableError
from nexmark.engines.flink.snapshots import POLL_S, JobSnapshots, checkpoint_info, seconds
from nexmark.engines.flink.state_metrics import LiveStateReader
from nexmark.engines.semantics import Change
from nexmark.engines.status import (
    EventCount,
    InjectedFailure,
    JobState,
    JobStatus,
    LiveState,
    Recovery,
    VertexLoad,
    WatermarkRead,
)
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError
from nexmark.workload.feed import Feed

_TERMINAL = {
    "FINISHED": JobState.FINISHED,
    "FAILED": JobState.FAILED,
    "CANCELED": JobState.CANCELED,
    "SUSPENDED": JobState.FAILED,
}
_TASK_UP = {"RUNNING", "FINISHED"}
# Where a job's checkpoints go (its options, as submitted): its phase savepoint goes beside.
CHECKPOINT_DIR_KEY = "execution.checkpointing.dir"
COMMIT_WAIT_S = 20.0  # for the COLLECT sink to commit what a completed checkpoint covers
COMPACT_GRACE_S = 1.0  # for the compactor to merge them before a checkpoint is asked for
# After a restart, how long the restored readers may take to log their splits once running;
# none by then: every file was read to its end before the restored checkpoint.
_SPLITS_LOGGED_S = 3.0
# How often a restarted job's count may ask the logs whether its readers are done: Flink's
# metric store sometimes never shows the new attempt's counts (seen after a third failover in
# one cluster), and a phase must still end.
_FINISHED_CHECK_S = 2.0

# The Kafka source reader's metric of a partition's offset in the last committed checkpoint.
_COMMITTED = re.compile(
    r"\.KafkaSourceReader\.topic\.(?P<topic>.+)\.partition\.(?P<partition>\d+)\.committedOffset$"
)


class FlinkJob(Job):
    """One job on a Flink cluster. It is READY when every task of every vertex is RUNNING (or
    already FINISHED), as Flink's REST API reports them; a restored job's tasks run only once
    they have loaded their state. The status poll that first sees it READY releases its feed
    (`workload.feed.Feed`): its readers start reading then. Flink's file source hands whole
    files to whichever reader asks first: a reader still starting when another has read a
    small file to its end would find every file taken (its fast peer reads two, its event time
    jumps back, and the late one never emits a watermark: seen about once in 25 restored jobs
    of the test suite before the feed). Released once every reader waits, each gets one.

    Args:
        rest: The cluster's REST client.
        job_id: Flink's job id.
        on_unreachable: Called when the REST API stops answering; raises a clearer EngineError
            if it knows why (e.g. the embedded JVM died).
        collect_dir: Where a COLLECT sink writes (None for other sinks).
        columns: The result columns, to type collected rows.
        source_dir: The directory its source reads (where a restart's position is counted):
            the part itself, or `staged.dir`.
        staged: The feed of its open source, released once every task runs; None when the
            source reads the part itself.
        restartable: A failover run's job: it restarts after a failure, and its events are
            counted on from each restart's restored position (`recovery`).
        kill_worker: Kills the process running its tasks (a failover run on a cluster the
            engine started); None: `inject_failure` is refused.
        reads_kafka: Its source is a Kafka topic (`source_offsets` reads its readers' offsets).
    """

    def __init__(
        self,
        rest: FlinkRest,
        job_id: str,
        on_unreachable: Callable[[], None],
        collect_dir: Path | None = None,
        columns: list[ResultColumn] | None = None,
        source_dir: Path | None = None,
        staged: Feed | None = None,
        rate_fed: bool = False,
        stamps_dir: Path | None = None,
        restartable: bool = False,
        kill_worker: Callable[[FlinkJob], InjectedFailure] | None = None,
        reads_kafka: bool = False,
    ):
        self.rest = rest
        self.reads_kafka = reads_kafka  # a KafkaSource: `source_offsets` answers
        self.source_dir = source_dir
        self._staged = staged
        self._rate_fed = rate_fed  # the protocol releases `staged` (JobSpec.rate_fed)
        self.stamps_dir = stamps_dir  # where its latency stamps go (JobSpec.latency)
        self.restartable = restartable
        self._kill_worker = kill_worker
        self._counted: tuple[int, int] = (0, 0)  # (restarts, events) last reported
        self._at_restore: dict[int, Restore] = {}  # restarts -> what that restart restored
        self._finished_checked = 0.0  # last time the logs were asked whether readers are done
        self._running_seen: dict[int, float] = {}  # restarts -> first poll seeing it run
        self.id = job_id
        self.collect_dir = collect_dir
        self.columns = columns or []
        self._on_unreachable = on_unreachable
        self._final: JobStatus | None = None
        self._events = 0
        self._events_at: float | None = None  # when `_events` was true (its metric dump)
        self._metrics = MetricDumps(rest, job_id, self._get)
        self._snapshots = JobSnapshots(rest, job_id, self._get, on_unreachable)
        self._checkpoints: dict[int, CheckpointInfo] = {}
        self._restored: Snapshot | None = None
        self._history_complete = False
        self._vertices: list[str] | None = None
        self._created_at = time.time()  # files older than this are an earlier job's
        self._live = LiveStateReader(self._get, job_id, lambda: sum(self._vertex_ids(), []))
        self._operators = VertexLoads(self._get, job_id)

    def _get(self, path: str, **params: str) -> Any:
        try:
            return self.rest.get(path, **params)
        except RestUnreachableError:
            self._on_unreachable()
            raise

    def status(self) -> JobStatus:
        if self._final is not None:
            return self._final
        job = self._get(f"/jobs/{self.id}")
        state = job.get("state", "")
        if state in _TERMINAL:
            failure = self._root_cause() if _TERMINAL[state] == JobState.FAILED else None
            self._final = JobStatus(_TERMINAL[state], failure)
            return self._final
        if state in ("RUNNING", "CANCELLING") and all(
            set(k for k, n in v.get("tasks", {}).items() if n) <= _TASK_UP
            for v in job.get("vertices", [])
        ):
            if self._staged is not None and not self._rate_fed:  # every reader waits: hand out
                self._staged.release()
            return JobStatus(JobState.READY)
        return JobStatus(JobState.STARTING)

    def feed(self) -> Feed | None:
        return self._staged if self._rate_fed else None

    def _root_cause(self) -> str:
        try:
            exc = self._get(f"/jobs/{self.id}/exceptions", maxExceptions="1")
        except EngineError as err:
            return f"(root cause unavailable: {err})"
        entries = (exc.get("exceptionHistory") or {}).get("entries") or []
        trace = exc.get("root-exception") or (entries[0].get("stacktrace") if entries else "")
        # The last "Caused by" is the root; keep its first line.
        lines = [ln.strip() for ln in (trace or "").splitlines() if ln.strip()]
        causes = [ln[len("Caused by: ") :] for ln in lines if ln.startswith("Caused by: ")]
        return (causes[-1] if causes else lines[0] if lines else "unknown failure")[:500]

    def events_emitted(self) -> int:
        return self.events_emitted_at().events

    def events_emitted_at(self) -> EventCount:
        """The source's count and the time of the metric dump it comes from (`metric_dumps`):
        None where a task does not say (not started, busy time disabled) and after a
        restart."""
        if self._final is not None:
            return EventCount(self._events, self._events_at)
        if self.restartable:
            subtasks = self._source_subtasks()
            restarts = max((a for a, _, _ in subtasks), default=0)
            if restarts > 0:
                self._events_at = None
                return EventCount(self._events_after_restart(restarts, subtasks))
        total, seen, times = self._metrics.source_counts(self._source_vertices())
        # Metrics vanish once tasks end; keep the last count rather than dropping to zero.
        if seen and total >= self._events:
            self._events = total
            # Several source vertices: the oldest dump is when every count was true.
            known = [t for t in times if t is not None]
            self._events_at = min(known) if len(known) == len(times) else None
        return EventCount(self._events, self._events_at)

    # -- failover ---------------------------------------------------------------------------

    def _source_subtasks(self) -> list[tuple[int, str, int]]:
        """(attempt, status, records read by that attempt) of every source subtask. Unlike the
        operator metric, the vertex's per-attempt counts never show a dead attempt's value."""
        out = []
        for vertex_id in self._source_vertices():
            for sub in self._get(f"/jobs/{self.id}/vertices/{vertex_id}").get("subtasks", []):
                records = int((sub.get("metrics") or {}).get("read-records", 0))
                out.append((int(sub.get("attempt", 0)), str(sub.get("status")), records))
        return out

    def _events_after_restart(self, restarts: int, subtasks: list[tuple[int, str, int]]) -> int:
        """The restored position plus what the current attempts read; the last count stands
        until the position is known (events are never counted twice)."""
        base = self._restored_events(restarts, subtasks)
        if base is None:
            return self._events
        count = base + sum(n for _, _, n in subtasks)
        if self._all_read(restarts):
            count = sum(self._file_events().values())
        if self._counted[0] == restarts:
            count = max(count, self._counted[1])  # counts vanish as tasks end
        self._counted = (restarts, count)
        self._events = count
        return count

    def _file_events(self) -> dict[Path, int]:
        """Events of each file its source reads, by the path the job reads it under."""
        if self._staged is not None:
            return self._staged.file_events
        return file_events(self.source_dir) if self.source_dir is not None else {}

    def _restored_events(self, restarts: int, subtasks: list[tuple[int, str, int]]) -> int | None:
        if restarts in self._at_restore:
            return self._at_restore[restarts].events
        if self.source_dir is None or not all(st == "RUNNING" for _, st, _ in subtasks):
            return None
        now = time.time()
        running = self._running_seen.setdefault(restarts, now)
        since = self._failed_since(running)
        restore = restore_of(self.rest, self.source_dir, since, self._file_events())
        if restore is None and now - running >= _SPLITS_LOGGED_S:  # every file was done
            restore = Restore(sum(self._file_events().values()), frozenset(), now)
        if restore is not None:
            self._at_restore[restarts] = restore
        return None if restore is None else restore.events

    def _failed_since(self, running: float) -> float:
        return self._latest_failure()[0] or running - 60

    def _all_read(self, restarts: int) -> bool:
        """Every split the restart gave back has been read to its end (the logs say so)."""
        restore = self._at_restore.get(restarts)
        now = time.time()
        if restore is None or now - self._finished_checked < _FINISHED_CHECK_S:
            return False
        self._finished_checked = now
        return all_read_since(self.rest, restore.split_ids, restore.logged_at)

    def _latest_failure(self) -> tuple[float | None, str | None]:
        """(time, cause) of the job's latest failure, from its exception history."""
        history = self._get(f"/jobs/{self.id}/exceptions", maxExceptions="1")
        entries = (history.get("exceptionHistory") or {}).get("entries") or []
        if not entries:
            return None, None
        latest = max(entries, key=lambda e: e.get("timestamp") or 0)
        trace = (latest.get("stacktrace") or "").strip().splitlines()
        cause = trace[0] if trace else latest.get("exceptionName")
        return seconds(latest.get("timestamp")), (cause or "")[:300]

    def recovery(self) -> Recovery | None:
        """Restarts (the source subtasks' attempt), the latest failure, the restored checkpoint
        and the source's position in it."""
        if not self.restartable:
            return None
        subtasks = self._source_subtasks()
        restarts = max((a for a, _, _ in subtasks), default=0)
        failed_at, cause = self._latest_failure()
        if restarts == 0:
            return Recovery(0, failed_at, cause)
        return Recovery(
            restarts,
            failed_at,
            cause,
            self._restored_checkpoint(failed_at),
            self._restored_events(restarts, subtasks),
        )

    def _restored_checkpoint(self, failed_at: float | None) -> int | None:
        restored = (self._get(f"/jobs/{self.id}/checkpoints").get("latest") or {}).get("restored")
        if not restored or failed_at is None:
            return None
        at = seconds(restored.get("restore_timestamp")) or 0
        return int(restored["id"]) if at >= failed_at - 1 else None

    def inject_failure(self) -> InjectedFailure:
        if self._kill_worker is None:
            raise EngineError(f"job {self.id}: this Flink target cannot kill a TaskManager")
        return self._kill_worker(self)

    def taskmanagers(self) -> list[str]:
        """Ids of the TaskManagers running this job's source tasks."""
        ids = []
        for vertex_id in self._source_vertices():
            listed = self._get(f"/jobs/{self.id}/vertices/{vertex_id}/taskmanagers")
            for tm in listed.get("taskmanagers", []):
                tm_id = tm.get("taskmanager-id") or tm.get("taskmanagerId")
                if tm_id and tm_id not in ids:
                    ids.append(tm_id)
        return ids

    def running_since(self) -> float | None:
        """The latest RUNNING timestamp over every subtask of every vertex
        (`/vertices/<v>/subtasktimes`): exact, where the job status the runner polls is cached
        by the REST API (web.refresh-interval) and seen up to that much late."""
        latest = 0
        for vertex_id in (v for ids in self._vertex_ids() for v in ids):
            times = self._get(f"/jobs/{self.id}/vertices/{vertex_id}/subtasktimes") or {}
            for subtask in times.get("subtasks", []):
                running = (subtask.get("timestamps") or {}).get("RUNNING")
                if not running:
                    return None  # a subtask not running yet
                latest = max(latest, int(running))
        return latest / 1000 if latest else None

    def events_per_reader(self) -> list[int] | None:
        """Each source subtask's numRecordsIn (one request per subtask); None after a restart
        (a restored reader counts from its restored position)."""
        if self._final is not None or self._counted[0] > 0:
            return None
        counts = []
        for vertex_id in self._source_vertices():
            metric = self._metrics.source_metric(vertex_id)
            if metric is None:
                return None
            vertex = f"/jobs/{self.id}/vertices/{vertex_id}"
            for subtask in range(int(self._get(vertex).get("parallelism", 1))):
                values = self._get(f"{vertex}/subtasks/{subtask}/metrics", get=metric) or []
                counts.append(int(float(next((v["value"] for v in values), 0))))
        return counts

    def source_offsets(self) -> dict[str, list[int]] | None:
        """Per topic, each partition's offset as of the latest completed checkpoint: the
        Kafka source reader's `committedOffset` metric, which it sets once the offsets of a
        completed checkpoint (the next offset to read of each split) are committed to Kafka
        (KafkaSourceReader.notifyCheckpointComplete). A partition is read by one subtask, so
        the maximum over subtasks is its reader's value; -1 where none was committed yet.
        None: not a Kafka source, or the job has ended (its metrics are gone)."""
        if not self.reads_kafka or self._final is not None:
            return None
        found: dict[str, dict[int, int]] = {}
        for vertex_id in self._source_vertices():
            path = f"/jobs/{self.id}/vertices/{vertex_id}/subtasks/metrics"
            names = [m["id"] for m in self._get(path) or [] if _COMMITTED.search(m["id"])]
            if not names:
                continue
            values = self.rest.metric_aggregates(path, names, "max")
            for name in names:
                match = _COMMITTED.search(name)
                assert match is not None
                value = int(values.get(name, {}).get("max", -1))
                found.setdefault(match["topic"], {})[int(match["partition"])] = value
        return {topic: [by.get(p, -1) for p in range(max(by) + 1)] for topic, by in found.items()}

    def live_state(self) -> LiveState | None:
        """Summed native metrics of the state backend (`state_metrics`); None once the job
        ended, or where its backend has none (the heap backend)."""
        if self._final is not None:
            return None
        try:
            return self._live.read()
        except RestError:  # the job went away between two calls
            return None

    def operator_load(self) -> list[VertexLoad] | None:
        """Each vertex's task times and records so far (`operators`); None once the job ended."""
        if self._final is not None:
            return None
        try:
            return self._operators.read()
        except RestError:  # the job went away between two calls
            return None

    def _source_vertices(self) -> list[str]:
        return self._vertex_ids()[0]

    def _vertex_ids(self) -> tuple[list[str], list[str]]:
        """(source vertices, the others). A job's vertices never change: asked once."""
        if self._vertices is None:
            vertices = self._get(f"/jobs/{self.id}").get("vertices", [])
            marks = (f"{SOURCE_TABLE}[", KAFKA_SOURCE_NAME)  # a file source's, a topic's
            sources = [v["id"] for v in vertices if any(m in v.get("name", "") for m in marks)]
            self._vertices = (sources, [v["id"] for v in vertices if v["id"] not in sources])
        return self._vertices

    def watermark_ms(self) -> int | None:
        return self.watermark_at().ms

    def watermark_at(self) -> WatermarkRead:
        """Min over every subtask of every non-source vertex of its input watermark, and the
        time of the metric dump it comes from (as the count's: `metric_dumps`).

        The count and the watermark are two requests to a metric store that each request
        only asks to refresh, so one may answer from a newer dump than the other: at 1.7M
        events/s (17 s of event time a second) a dump a second apart made a lag of +-17 s.
        Dated, the two are compared at one time (`protocol.scoring.figures`).

        A source vertex has no input watermark (its WatermarkAssigner is chained inside it), so
        a job of one chained vertex (q0-q2) reports None: it has no event-time operator.
        Behind a processing-time mini-batch (queries without event-time operators, e.g. q20)
        the planner's batch markers travel as watermarks stamped with the wall clock; such
        values are not event time and are left out.
        """
        values = self._input_watermarks()
        if not values or min(v for v, _ in values) <= NO_WATERMARK:
            return WatermarkRead(None)
        times = [t for _, t in values]
        at = min(times) if None not in times else None  # the oldest dump: when all were true
        return WatermarkRead(min(v for v, _ in values), at)

    def late_records_dropped(self) -> int | None:
        if self._final is not None:
            return None
        return self._metrics.late_records(sum(self._vertex_ids(), []))

    def awaits_watermark(self) -> bool:
        values = self._input_watermarks()
        return bool(values) and min(v for v, _ in values) <= NO_WATERMARK

    def _input_watermarks(self) -> list[tuple[int, float | None]]:
        """Each non-source vertex's least input watermark over its subtasks, where it is event
        time (Long.MIN_VALUE: a subtask has received none yet), with its dump's time; empty
        once the job has ended."""
        if self._final is not None:
            return []
        return self._metrics.input_watermarks(self._vertex_ids()[1])

    def trigger_checkpoint(self, timeout_s: float) -> CheckpointInfo:
        """Take a checkpoint and wait for it; COLLECT jobs take two (see below)."""
        deadline = time.monotonic() + timeout_s
        info = self._checkpoint_once(timeout_s)
        if self.collect_dir is not None:
            # The sink publishes a checkpoint's files only when told it completed, after the
            # REST API says so. A second checkpoint's barrier reaches the sink after that
            # notice, so once it completes the first one's rows are visible; and its own state
            # holds the same events, so it is an equally good phase checkpoint.
            info = self._checkpoint_once(max(1.0, deadline - time.monotonic()))
        return info

    def trigger_phase_checkpoint(self, timeout_s: float, stop: bool = False) -> CheckpointInfo:
        """The cut as a savepoint in the state backend's own format, beside the job's
        checkpoints: a retained checkpoint is deleted once `execution.checkpointing.
        num-retained` newer ones complete (with a short interval, periodic ones did so before
        the cancel), a savepoint never.

        With `stop` the job ends at it (stop-with-savepoint, not drained): no later checkpoint
        completes, so a file sink's folder stays as the savepoint names it. One that went on
        would commit rows written after the cut (the restored job writes them again) and its
        compactor would delete files the savepoint still names (the restore then fails).
        A plain savepoint's completion is not announced to the tasks: a job that goes on and
        acts on that notice (the COLLECT sink commits, a Kafka reader commits its offsets)
        takes one checkpoint first, whose notice the savepoint's barrier follows (as in
        `trigger_checkpoint`)."""
        where = (self.setup.options if self.setup is not None else {}).get(CHECKPOINT_DIR_KEY)
        if where is None:  # a job submitted without its setup (none of the engine's)
            return self.trigger_checkpoint(timeout_s)
        deadline = time.monotonic() + timeout_s
        target = f"{where.rstrip('/')}/{self.id}/phase"
        if stop:
            info = self._snapshots.stop_with_native_savepoint(target, timeout_s)
            self._checkpoints[info.id] = info
            self.wait(max(1.0, deadline - time.monotonic()))
            return info
        if self.collect_dir is not None or self.reads_kafka:
            self._checkpoint_once(timeout_s)
        info = self._snapshots.native_savepoint(target, max(1.0, deadline - time.monotonic()))
        self._checkpoints[info.id] = info
        return info

    def _checkpoint_once(self, timeout_s: float) -> CheckpointInfo:
        info = self._snapshots.checkpoint(timeout_s)
        self._checkpoints[info.id] = info
        return info

    def logical_state_bytes(self, timeout_s: float) -> int | None:
        """A canonical savepoint's size: Flink writes every state entry once, in a format
        no backend's files shape (no SST levels, no dead entries, no memtables). It goes
        beside the job's last checkpoint (removed with them); the size is the one Flink's
        statistics give it, so a remote cluster's or an object store's answers alike."""
        done = [c for c in self._checkpoints.values() if c.snapshot is not None]
        if not done:
            return None
        last = max(done, key=lambda c: c.id).snapshot
        assert last is not None
        return self._snapshots.canonical_savepoint_bytes(last, timeout_s)

    def checkpoints(self) -> list[CheckpointInfo]:
        if not self._history_complete:
            final = self._final is not None  # read before the request: no stats lost
            try:
                stats = self._get(f"/jobs/{self.id}/checkpoints")
            except EngineError:
                if not final:
                    raise
                stats = {}
            for entry in stats.get("history", []):
                if entry.get("is_savepoint"):  # `logical_state_bytes`' measure: no checkpoint
                    continue
                self._checkpoints[int(entry["id"])] = checkpoint_info(entry)
            self._note_restore(stats)
            # Once a read after the job's end succeeded, the history cannot change any more.
            self._history_complete = final and bool(stats)
        return [self._checkpoints[k] for k in sorted(self._checkpoints)]

    def _note_restore(self, stats: dict) -> None:
        restored = (stats.get("latest") or {}).get("restored")
        if restored and self._restored is None:
            checkpoint_id = restored.get("id")
            self._restored = Snapshot(
                None if checkpoint_id is None else int(checkpoint_id),
                restored.get("external_path") or "",
            )

    def restored_from(self) -> Snapshot | None:
        if self._restored is None:
            self._note_restore(self._get(f"/jobs/{self.id}/checkpoints"))
        return self._restored

    def cancel(self, timeout_s: float = 60.0) -> None:
        if self.status().state.terminal:
            return
        try:
            self.rest.patch(f"/jobs/{self.id}", mode="cancel")
        except RestUnreachableError:
            self._on_unreachable()
            raise
        self.wait(timeout_s)

    def wait(self, timeout_s: float, poll_s: float = POLL_S) -> JobStatus:
        """Block until the job is terminal; raise QueryTimeoutError after `timeout_s`."""
        last: list[JobStatus] = []

        def terminal() -> JobStatus | None:
            last[:] = [self.status()]
            return last[0] if last[0].state.terminal else None

        return poll_until(
            terminal,
            timeout_s,
            poll_s,
            lambda: f"job {self.id} still {last[0].state.value} after {timeout_s:.0f} s",
        )

    def collected_rows(self) -> list[Change]:
        if self.collect_dir is None:
            raise EngineError(f"job {self.id} has no COLLECT sink")
        self._wait_for_commit()
        return read_rows(self.collect_dir, self.columns)

    def latency_stamps(self) -> list[tuple[int, float]]:
        if self.stamps_dir is None:
            raise EngineError(f"job {self.id} stamps no rows")
        self._wait_for_commit(self.stamps_dir)
        return read_stamps(self.stamps_dir)

    def _wait_for_commit(
        self, folder: Path | None = None, timeout_s: float = COMMIT_WAIT_S
    ) -> None:
        """Wait until the files the last completed checkpoint covers are committed.

        The sink renames them only after Flink's completion notice reaches it, which on a
        loaded machine can come seconds after the checkpoint is reported complete: reading
        before would miss the rows of the last epoch (the benchmark phase's window firings).
        """
        folder = folder or self.collect_dir
        done = [
            c for c in self.checkpoints() if c.status is CheckpointStatus.COMPLETED and c.ack_ts
        ]
        if not done or folder is None:
            return
        written_before, deadline = done[-1].ack_ts, time.monotonic() + timeout_s

        def committed() -> bool:
            return not uncommitted_files(folder, written_before, self._created_at)

        # A committed file stays hidden (`.uncompacted-*`) until a later checkpoint completes,
        # after the compactor has merged it into a visible one (just after the notice): with
        # a long interval the next periodic checkpoint is tens of seconds away, so a running
        # job is asked for one. (A job still writing after that checkpoint may leave a fresh
        # file that only the next checkpoint commits: the wait ends at the limit and the
        # committed rows are read.)
        while not poll_until(committed, min(COMPACT_GRACE_S, timeout_s), 0.1, error=None):
            left = deadline - time.monotonic()
            if left <= 0 or self.status().state.terminal:
                return
            try:
                self._checkpoint_once(left)
            except EngineError:  # the job ending meanwhile: wait out the limit as it was
                poll_until(committed, max(0.0, deadline - time.monotonic()), 0.1, error=None)
                return
