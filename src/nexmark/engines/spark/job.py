"""A running Spark streaming query, watched through its progress and its checkpoint directory.

Checkpoints: Spark commits one at the end of every micro-batch (offsets/N, the state stores'
version N+1, commits/N); each committed batch is a `CheckpointInfo` with id N. There is no
checkpoint on demand: `trigger_checkpoint` waits until the query has committed every file it
was given and gone idle, and returns that last commit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nexmark.engines.base import Job
from nexmark.engines.checkpoints import CheckpointInfo, CheckpointStatus, Snapshot
from nexmark.engines.py4j_errors import java_message
from nexmark.engines.semantics import Change, RowKind
from nexmark.engines.source import KafkaSource
from nexmark.engines.spark.checkpoint_dir import (
    dir_bytes,
    kafka_offsets,
    last_commit,
    log_ids,
    plain_path,
    read_since,
    source_log_files,
    source_offset,
)
from nexmark.engines.spark.collect import read_rows, read_stamps
from nexmark.engines.spark.operators import batch_loads, task_slots
from nexmark.engines.spark.progress import commit_seconds, epoch_ms, live_state, state_bytes
from nexmark.engines.spec import JobSpec
from nexmark.engines.status import (
    EventCount,
    InjectedFailure,
    JobState,
    JobStatus,
    LiveState,
    Recovery,
    VertexLoad,
)
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError, QueryTimeoutError
from nexmark.storage import files
from nexmark.storage.files import Location
from nexmark.workload.feed import Feed

PHASE_FILE = "nexmark-phase.json"  # in the checkpoint: what the last trigger_checkpoint saw
IN_FLIGHT_WAIT_S = 5.0  # failover: how long the kill waits for a micro-batch in flight


class SparkJob(Job):
    """One streaming query.

    Args:
        query: PySpark's StreamingQuery.
        name: The query name (q0..q23).
        checkpoint: Its checkpoint location.
        file_events: Staged file path -> events in it (what progress counts).
        restored_batch: The last batch committed before this query started (None: fresh).
        on_failure: Gives a clearer error when the JVM is gone (raises), else returns.
        collect_dir, keys: The COLLECT sink's directory and an update query's key columns.
        feed: A rate-fed query's staged, unreleased feed (`JobSpec.rate_fed`): the protocol
            releases it, and the query is ready once it waits for data.
    """

    def __init__(
        self,
        query: Any,
        name: str,
        checkpoint: Location,
        file_events: dict[str, int],
        restored_batch: int | None,
        on_failure: Callable[[], None],
        collect_dir: Path | None = None,
        keys: tuple[str, ...] = (),
        columns: list[str] | None = None,
        feed: Feed | None = None,
        stamps_dir: Path | None = None,
        kafka: KafkaSource | None = None,
    ):
        self.query = query
        # Reading a load's topic (the checkpoint's offsets count its events), else files.
        self.kafka = kafka
        self._feed = feed
        self.stamps_dir = stamps_dir  # where its latency stamps go (JobSpec.latency)
        self.id = f"{name}:{query.id}:{query.runId}"
        self.name = name
        self.checkpoint = checkpoint
        self.file_events = file_events
        self.restored_batch = restored_batch
        # The snapshot's directory it was restored from (the engine runs it on a private copy
        # of it, `checkpoint`, so that the snapshot can be restored again).
        self.restored_ref: str | None = None
        self.collect_dir = collect_dir
        self.keys = keys
        self.columns = columns
        self._on_failure = on_failure
        self._progress: dict[int, dict] = {}
        self._final: JobStatus | None = None
        self._events = 0
        self._events_at: float | None = None  # when `_events` became true: its commit
        self._counted_to: int | None = None
        self._low: int | None = None
        self._sizes: dict[int, tuple[int | None, int | None]] = {}
        self.t_started = time.time()
        # The restore proof the engine ran before starting this query (None if none ran).
        self.restore_check: dict | None = None
        # (engine, batch, expected rows): the proof to run once this job stopped.
        self.pending_restore_check: tuple | None = None
        # Failover (supervise): the engine's kill and restart, and what the restarts did.
        self._spec: JobSpec | None = None
        self._kill: Callable[[], InjectedFailure] | None = None
        self._restart: Callable[[JobSpec, Location], Any] | None = None
        self._recovery = Recovery()
        self._ready_marks: tuple[int, int] | None = None  # (last commit, last offsets) then

    def supervise(
        self,
        spec: JobSpec,
        kill: Callable[[], InjectedFailure],
        restart: Callable[[JobSpec, Location], Any],
    ) -> None:
        """Failover runs: `inject_failure` kills the driver through `kill`, and a status poll
        that finds the driver gone restarts the query through `restart` (a new driver, the
        query started again on this checkpoint directory), as a supervisor would."""
        self._spec, self._kill, self._restart = spec, kill, restart

    # -- progress --------------------------------------------------------------------------

    def _poll(self) -> None:
        try:
            for p in self.query.recentProgress:
                self._progress.setdefault(int(p.batchId), json.loads(p.json))
        except Exception:  # noqa: BLE001 - the JVM may be gone; status() says why
            self._on_failure()

    def progress(self) -> list[dict]:
        """Every batch's progress seen so far, by batch id."""
        self._poll()
        return [self._progress[k] for k in sorted(self._progress)]

    def live_state(self) -> LiveState | None:
        """The last batch's state stores (`live_state`); refreshed by a batch, not a call.
        Reads the progress the sampler's watermark poll just fetched (no second poll)."""
        for k in sorted(self._progress, reverse=True):
            if self._progress[k].get("stateOperators"):
                return live_state(self._progress[k])
        return None

    def operator_load(self) -> list[VertexLoad] | None:
        """Each micro-batch part's and state operator's time so far (`operators.batch_loads`),
        from the progress the sampler's watermark poll just fetched (no second poll)."""
        progress = [self._progress[k] for k in sorted(self._progress)]
        return batch_loads(progress, task_slots(self.setup))

    def status(self) -> JobStatus:
        if self._final is not None:
            return self._final
        try:
            active = self.query.isActive
            error = self.query.exception() if not active else None
        except Exception:  # noqa: BLE001
            if self._restart is not None and self._driver_died():
                return self._restart_after_failure()
            self._on_failure()
            raise EngineError(f"Spark query {self.name} is unreachable") from None
        if not active:
            self._poll()
            if error is not None:
                self._final = JobStatus(JobState.FAILED, _spark_message(error))
            else:
                self._final = JobStatus(getattr(self, "_stopped_as", JobState.FINISHED))
            return self._final
        # Running once this query has written its first batch's offsets: its source listed the
        # directory and the batch (which loads the restored state) is executing.
        ids = log_ids(self.checkpoint / "offsets")
        if self._ready_marks is not None:  # restarted after a failure
            commit, offsets = self._ready_marks
            done = last_commit(self.checkpoint)
            # Ready once the batch in flight at the failure ran again, or a new batch started;
            # with none in flight and no data left, once the query is waiting for data.
            ready = (done is not None and done > commit) or (bool(ids) and ids[-1] > offsets)
            if not ready and offsets == commit:
                with contextlib.suppress(Exception):
                    ready = str(self.query.status.get("message", "")).startswith("Waiting")
            return JobStatus(JobState.READY if ready else JobState.STARTING)
        first = -1 if self.restored_batch is None else self.restored_batch
        if ids and ids[-1] > first:
            return JobStatus(JobState.READY)
        # Rate-fed, nothing released yet: no batch can start, so ready is the query waiting.
        return JobStatus(JobState.READY if self._waits_for_data() else JobState.STARTING)

    def _waits_for_data(self) -> bool:
        """A rate-fed query whose stream thread has read its checkpoint's logs, listed the
        directory and found nothing new (Spark's status "Waiting for data to arrive")."""
        if self._feed is None:
            return False
        try:
            s = self.query.status
        except Exception:  # noqa: BLE001 - the JVM may be gone; status() says why
            return False
        return str(s.get("message", "")).startswith("Waiting for data") and not s.get(
            "isTriggerActive"
        )

    def latency_stamps(self) -> list[tuple[int, float]]:
        if self.stamps_dir is None:
            raise EngineError(f"Spark query {self.name} stamps no rows")
        return read_stamps(self.stamps_dir) if self.stamps_dir.is_dir() else []

    def feed(self) -> Feed | None:
        return self._feed

    # -- failover ----------------------------------------------------------------------------

    def inject_failure(self) -> InjectedFailure:
        """Kill the driver while a micro-batch is in flight (waiting up to `IN_FLIGHT_WAIT_S`
        for one): under load batches run back to back, so a crash hits one; between two
        batches of a lighter phase it would cost nothing to replay. Spark counts a batch's
        events when it commits: the batch in flight was read (or being read), so its events
        count as read at the kill."""
        if self._kill is None:
            raise EngineError(f"Spark query {self.name} is not in a failover run")
        poll_until(self._events_in_flight, IN_FLIGHT_WAIT_S, 0.01, error=None)
        counted = self.events_emitted()
        in_flight = self._events_in_flight()
        killed = self._kill()
        return dataclasses.replace(killed, events_read=counted + in_flight)

    def _events_in_flight(self) -> int:
        """Events of the files (records) in batches whose offsets are written but not
        committed."""
        done = last_commit(self.checkpoint)
        ids = log_ids(self.checkpoint / "offsets")
        if not ids or (done is not None and ids[-1] <= done):
            return 0
        if self.kafka is not None:
            now = kafka_offsets(self.checkpoint, ids[-1]) or {}
            before = kafka_offsets(self.checkpoint, done) if done is not None else None
            return sum(read_since(now, before).values())
        low = source_offset(self.checkpoint, done) if done is not None else -1
        high = source_offset(self.checkpoint, ids[-1])
        if high is None:
            return 0
        return self._events_logged(-1 if low is None else low, high)

    def _events_logged(self, low: int, high: int) -> int:
        """Events of the files the source's log lists after offset `low` up to `high`."""
        return sum(
            self.file_events.get(plain_path(path), 0)
            for batch, paths in source_log_files(self.checkpoint).items()
            if low < batch <= high
            for path in paths
        )

    def _driver_died(self, grace_s: float = 2.0) -> bool:
        """Whether the driver is gone (a call that broke may come just before its exit)."""

        def gone() -> bool:
            try:
                self._on_failure()
            except EngineError:
                return True
            return False

        return poll_until(gone, grace_s, 0.05, error=None)

    def _restart_after_failure(self) -> JobStatus:
        """The driver is gone: note when that was seen, and restart the query on its
        checkpoint directory; STARTING until the restarted query has gone past the kill."""
        assert self._restart is not None and self._spec is not None
        failed_at = time.time()
        # Everything committed before the failure is restored; count it now, before the
        # restarted query commits more.
        restored_events = self.events_emitted()
        commit = last_commit(self.checkpoint)
        offsets = log_ids(self.checkpoint / "offsets")
        self.query = self._restart(self._spec, self.checkpoint)
        self._ready_marks = (
            -1 if commit is None else commit,
            offsets[-1] if offsets else -1,
        )
        self._recovery = Recovery(
            restarts=self._recovery.restarts + 1,
            failed_at=failed_at,
            cause="the driver JVM died",
            restored_checkpoint=commit,
            events_at_restore=restored_events,
        )
        return JobStatus(JobState.STARTING)

    def recovery(self) -> Recovery | None:
        return self._recovery if self._restart is not None else None

    def events_emitted(self) -> int:
        """Events in the files of the batches this query committed (the source's log)."""
        return self.events_emitted_at().events

    def events_emitted_at(self) -> EventCount:
        """The committed batches' events, true since the last of them committed: the time its
        commit file was written (the count moves only at commits; between two of them the
        batch in flight is not counted yet). None before this query committed a batch."""
        self._count()
        return EventCount(self._events, self._events_at)

    def _count(self) -> int:
        done = last_commit(self.checkpoint)
        if done is None or done == self._counted_to:
            return self._events
        if self.restored_batch is not None and done <= self.restored_batch:
            return self._events
        if self.kafka is not None:
            per_partition = self._kafka_read(done)
            if per_partition is None:
                return self._events
            with contextlib.suppress(FileNotFoundError):
                self._events_at = files.mtime(self.checkpoint / "commits" / str(done))
            self._events = sum(per_partition.values())
            self._counted_to = done
            return self._events
        high = source_offset(self.checkpoint, done)
        if high is None:
            return self._events
        with contextlib.suppress(FileNotFoundError):
            self._events_at = files.mtime(self.checkpoint / "commits" / str(done))
        if self._low is None:
            low = -1
            if self.restored_batch is not None:
                low = source_offset(self.checkpoint, self.restored_batch)
                low = -1 if low is None else low
            self._low = low
        self._events = self._events_logged(self._low, high)
        self._counted_to = done
        return self._events

    def _kafka_read(self, batch: int) -> dict[tuple[str, int], int] | None:
        """Records this query read per (topic, partition) up to `batch` (committed), from
        the offsets it resumed at (restored) or from 0."""
        now = kafka_offsets(self.checkpoint, batch)
        if now is None:
            return None
        since = None
        if self.restored_batch is not None:
            since = kafka_offsets(self.checkpoint, self.restored_batch)
        return read_since(now, since)

    def events_per_reader(self) -> list[int] | None:
        """Reading a topic: the records this query read from each partition of the source's
        topic (index = partition; a Spark task reads one partition per batch). None for
        files (Spark's file source does not tie a file to a reader) or before a commit."""
        if self.kafka is None:
            return None
        done = last_commit(self.checkpoint)
        read = self._kafka_read(done) if done is not None else None
        if read is None:
            return None
        return [read.get((self.kafka.topic, p), 0) for p in range(self.kafka.partitions)]

    def source_offsets(self) -> dict[str, list[int]] | None:
        """Reading a topic: per topic, the next offset of each partition as of the last
        committed batch (its `offsets/N`, what a restore resumes from). A restored query
        lists the warm-up topic too (it subscribes to it: restore.kafka_subscription)."""
        if self.kafka is None:
            return None
        done = last_commit(self.checkpoint)
        offsets = kafka_offsets(self.checkpoint, done) if done is not None else None
        if offsets is None:
            return None
        return {
            topic: [parts.get(p, 0) for p in range(max(parts) + 1 if parts else 0)]
            for topic, parts in offsets.items()
        }

    def watermark_ms(self) -> int | None:
        progress = self.progress()
        for p in reversed(progress):
            wm = epoch_ms((p.get("eventTime") or {}).get("watermark"))
            if wm is not None and wm > 0:
                return wm
        return None

    # -- checkpoints ----------------------------------------------------------------------

    def _info(self, p: dict, sizes: tuple[int | None, int | None] | None = None) -> CheckpointInfo:
        start = epoch_ms(p.get("timestamp")) or 0
        duration_ms = (p.get("durationMs") or {}).get("triggerExecution") or 0
        checkpointed, full = sizes if sizes else (None, state_bytes(p))
        return CheckpointInfo(
            id=int(p["batchId"]),
            status=CheckpointStatus.COMPLETED,
            trigger_ts=start / 1000.0,
            ack_ts=(start + duration_ms) / 1000.0,
            duration_s=commit_seconds(p),
            checkpointed_bytes=checkpointed,
            state_bytes=full,
            snapshot=Snapshot(int(p["batchId"]), str(self.checkpoint)),
        )

    def checkpoints(self) -> list[CheckpointInfo]:
        """Every committed batch. Sizes are measured when a batch is first seen: the bytes
        written since it started, and the state directory as it is then."""
        done = last_commit(self.checkpoint)
        infos = []
        for p in self.progress():
            batch = int(p["batchId"])
            if done is None or batch > done:
                continue
            if batch not in self._sizes:
                self._sizes[batch] = self._measure(p)
            infos.append(self._info(p, self._sizes[batch]))
        return infos

    def _measure(self, p: dict) -> tuple[int, int]:
        start = (epoch_ms(p.get("timestamp")) or 0) / 1000.0
        return dir_bytes(self.checkpoint, since=start), dir_bytes(self.checkpoint / "state")

    def trigger_checkpoint(self, timeout_s: float) -> CheckpointInfo:
        """Wait until every given file is committed and the query is idle; that last commit.

        Idle: no batch running and no data left, twice in a row a trigger interval apart, so a
        trailing no-data batch (windows the watermark closed) is included.
        """
        deadline = time.monotonic() + timeout_s
        calm = 0
        while calm < 2:
            state = self.status().state
            if state.terminal:
                raise EngineError(f"Spark query {self.name} is {state.value}")
            s = self.query.status
            offsets = log_ids(self.checkpoint / "offsets")
            commits = log_ids(self.checkpoint / "commits")
            idle = not s["isTriggerActive"] and not s["isDataAvailable"]
            settled = bool(commits) and offsets[-1] == commits[-1]
            calm = calm + 1 if idle and settled else 0
            if time.monotonic() > deadline:
                raise QueryTimeoutError(
                    f"Spark query {self.name} did not go idle in {timeout_s:.0f} s"
                )
            time.sleep(0.25)
        batch = commits[-1]
        deadline2 = time.monotonic() + 10
        while batch not in self._progress and time.monotonic() < deadline2:
            self._poll()
            time.sleep(0.05)
        p = self._progress.get(batch)
        if p is None:
            raise EngineError(f"Spark query {self.name} posted no progress for batch {batch}")
        sizes = self._sizes[batch] = self._measure(p)
        rows = [int(op.get("numRowsTotal") or 0) for op in p.get("stateOperators") or []]
        if not rows:  # a no-data batch may carry no operators' metrics: take the last that did
            for q in reversed(self.progress()):
                if q.get("stateOperators") and int(q["batchId"]) <= batch:
                    rows = [int(op.get("numRowsTotal") or 0) for op in q["stateOperators"]]
                    break
        files.write_text(
            self.checkpoint / PHASE_FILE, json.dumps({"batch": batch, "state_rows": rows})
        )
        return self._info(p, sizes)

    def restored_from(self) -> Snapshot | None:
        """The commit this query resumed after: its first batch id follows it."""
        if self.restored_batch is None:
            return None
        progress = self.progress()
        if not progress:
            ids = log_ids(self.checkpoint / "offsets")
            if (not ids or ids[-1] <= self.restored_batch) and self._waits_for_data():
                # Rate-fed, nothing released yet: the query resumed the log after the
                # restored batch (its first batch's id is checked once it has run).
                return Snapshot(self.restored_batch, self.restored_ref or str(self.checkpoint))
            if not ids or ids[-1] <= self.restored_batch:
                return None
            first = min(i for i in ids if i > self.restored_batch)
        else:
            first = int(progress[0]["batchId"])
        if first != self.restored_batch + 1:
            raise EngineError(
                f"the restored query's first batch is {first}, not {self.restored_batch + 1}"
            )
        return Snapshot(self.restored_batch, self.restored_ref or str(self.checkpoint))

    # -- stop ------------------------------------------------------------------------------

    def cancel(self, timeout_s: float = 60.0) -> None:
        if self._final is not None:
            return
        try:
            if self.query.isActive:
                self._stopped_as = JobState.CANCELED
                self.query.stop()
                self.query.awaitTermination(timeout_s)
        except Exception:  # noqa: BLE001
            self._on_failure()
        self._poll_quietly()
        self.status()
        if self.pending_restore_check is not None:
            engine, batch, expected = self.pending_restore_check
            self.pending_restore_check = None
            self.restore_check = engine.check_restored_state(self.checkpoint, batch, expected)

    def _poll_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self._poll()

    def collected_rows(self) -> list[Change]:
        if self.collect_dir is None:
            raise EngineError(f"Spark query {self.name} has no COLLECT sink")
        kinds = {"+I": RowKind.ADD, "+U": RowKind.ADD, "-U": RowKind.RETRACT}
        return [
            Change(kinds[k], row) for k, row in read_rows(self.collect_dir, self.columns, self.keys)
        ]


def _spark_message(exc: Any) -> str:
    # PySpark's captured exceptions keep the Java message in `desc`; a raw Py4JJavaError
    # (another engine's py4j hook installed last) is read from its throwable.
    desc = getattr(exc, "desc", None)
    return java_message(exc, str(desc) if desc else None)
