"""A Flink job's snapshots on demand, through the REST API: a checkpoint or a savepoint
triggered and waited for, and the statistics Flink keeps of it read back."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from nexmark.engines.checkpoints import CheckpointInfo, CheckpointStatus, Snapshot
from nexmark.engines.flink.rest import FlinkRest, RestError, RestUnreachableError
from nexmark.engines.py4j_errors import java_message
from nexmark.engines.support import poll_until
from nexmark.errors import EngineError

# How often a checkpoint, its statistics or a cancel are polled for: the status cache
# (`web.refresh-interval`) is 50 ms; each wait is harness time between phases (not scored:
# `t_end` is the checkpoint's own acknowledgement time).
POLL_S = 0.05


def seconds(ms: Any) -> float | None:
    """A REST time or duration in ms as seconds; None where Flink gives none (0 or less)."""
    return None if ms is None or ms <= 0 else ms / 1000.0


def checkpoint_info(entry: dict) -> CheckpointInfo:
    """A CheckpointInfo from a REST checkpoint entry (history item or details)."""
    name = str(entry.get("status", "")).lower()
    try:
        status = CheckpointStatus(name)
    except ValueError:
        raise EngineError(f"Flink reported checkpoint {entry.get('id')} as {name!r}") from None
    completed = status is CheckpointStatus.COMPLETED
    path = entry.get("external_path") if completed else None
    return CheckpointInfo(
        id=int(entry["id"]),
        status=status,
        trigger_ts=seconds(entry.get("trigger_timestamp")) or 0.0,
        ack_ts=seconds(entry.get("latest_ack_timestamp")) if completed else None,
        duration_s=seconds(entry.get("end_to_end_duration")) if completed else None,
        checkpointed_bytes=entry.get("checkpointed_size"),
        state_bytes=entry.get("state_size"),
        snapshot=Snapshot(int(entry["id"]), path) if path else None,
    )


class JobSnapshots:
    """Checkpoints and savepoints of one job, taken when asked.

    Args:
        rest: The cluster's REST client.
        job_id: Flink's job id.
        get: The job's REST GET (`FlinkJob._get`: an API that stops answering is explained).
        on_unreachable: Called when the REST API stops answering a trigger; raises a clearer
            EngineError if it knows why.
    """

    def __init__(
        self,
        rest: FlinkRest,
        job_id: str,
        get: Callable[..., Any],
        on_unreachable: Callable[[], None],
    ) -> None:
        self.rest = rest
        self.job_id = job_id
        self._get = get
        self._on_unreachable = on_unreachable

    def trigger(
        self,
        kind: str,
        what: str,
        timeout_s: float,
        body: dict | None = None,
        action: str | None = None,
    ) -> tuple[dict, float]:
        """Trigger a snapshot (`kind`: checkpoints or savepoints; `action`: the endpoint that
        triggers it when not `kind`'s own, e.g. stop) and wait for its operation to complete:
        (its `operation`, the deadline). Raises on a timeout or a failure."""
        try:
            trigger = self.rest.post(f"/jobs/{self.job_id}/{action or kind}", body)
        except RestUnreachableError:
            self._on_unreachable()
            raise
        request = trigger["request-id"]
        deadline = time.monotonic() + timeout_s

        def completed() -> dict | None:
            answer = self._get(f"/jobs/{self.job_id}/{kind}/{request}")
            return answer if answer.get("status", {}).get("id") == "COMPLETED" else None

        answer = poll_until(
            completed,
            timeout_s,
            POLL_S,
            f"{what} of job {self.job_id} did not complete within {timeout_s:.0f} s",
        )
        operation = answer.get("operation") or {}
        failure = operation.get("failureCause") or operation.get("failure-cause")  # 2.x, 1.x
        if failure:
            trace = failure.get("stack-trace") or failure.get("class") or "no cause given"
            # its first line and its root cause ("java.io.IOException: No space left on device")
            raise EngineError(
                f"{what} of job {self.job_id} failed: {java_message(RuntimeError(trace))}"
            )
        return operation, deadline

    def checkpoint(self, timeout_s: float) -> CheckpointInfo:
        """One checkpoint, triggered and waited for, with its statistics."""
        operation, deadline = self.trigger("checkpoints", "checkpoint", timeout_s)
        if "checkpointId" not in operation:  # neither an id nor a cause: say what Flink said
            raise EngineError(
                f"checkpoint of job {self.job_id} gave no checkpoint: {operation}"[:500]
            )
        return checkpoint_info(self._details(operation["checkpointId"], deadline))

    def _details(self, checkpoint_id: int, deadline: float) -> dict:
        # The REST API caches statistics for a few seconds: a fresh checkpoint may be a 404.
        # Worse, while this job's statistics are stale the details handler falls back to a
        # cluster-wide cache keyed by checkpoint id alone, answering with an earlier job's
        # checkpoint of the same number. Only an answer whose path names this job counts.
        def this_jobs() -> dict | None:
            try:
                details = self._get(f"/jobs/{self.job_id}/checkpoints/details/{checkpoint_id}")
                if f"/{self.job_id}/" in (details.get("external_path") or ""):
                    return details
            except RestError as exc:
                if exc.status != 404:
                    raise
            return None

        return poll_until(
            this_jobs,
            deadline - time.monotonic(),
            POLL_S,
            f"no statistics of checkpoint {checkpoint_id} of job {self.job_id} in time",
            EngineError,
        )

    def native_savepoint(self, target: str, timeout_s: float) -> CheckpointInfo:
        """A savepoint in the state backend's own format (RocksDB: its files), written under
        `target`, with its statistics. Flink never subsumes a savepoint: no checkpoint the job
        completes later deletes it, so it outlives the job's stop whatever the interval."""
        body = {"target-directory": target, "cancel-job": False, "formatType": "NATIVE"}
        # Named as the step the user knows it by: "phase checkpoint of job ... failed: ...".
        return checkpoint_info(self._savepoint("phase checkpoint", body, timeout_s))

    def stop_with_native_savepoint(self, target: str, timeout_s: float) -> CheckpointInfo:
        """The job stopped at a savepoint in the backend's own format (`native_savepoint`),
        without draining: the sources stop, the savepoint is taken, and its completion is
        announced to the tasks before they finish (a synchronous savepoint, unlike a plain
        one), so sinks commit what it holds and nothing the job does after it completes
        another checkpoint. The job is FINISHED once its tasks have stopped."""
        body = {"targetDirectory": target, "drain": False, "formatType": "NATIVE"}
        return checkpoint_info(self._savepoint("phase checkpoint", body, timeout_s, "stop"))

    def canonical_savepoint_bytes(self, last: Snapshot, timeout_s: float) -> int | None:
        """A canonical savepoint's size, as Flink's statistics give it: the savepoint goes
        beside the checkpoint `last` (removed with the job's checkpoints)."""
        target = f"{last.ref.rstrip('/').rsplit('/', 1)[0]}/canonical"
        body = {"target-directory": target, "cancel-job": False, "formatType": "CANONICAL"}
        return self._savepoint("canonical savepoint", body, timeout_s).get("state_size")

    def _savepoint(
        self, what: str, body: dict, timeout_s: float, action: str | None = None
    ) -> dict:
        """A savepoint triggered and waited for: its entry in the job's checkpoint history."""
        operation, deadline = self.trigger("savepoints", what, timeout_s, body, action)
        location = operation.get("location")
        if not location:  # neither a location nor a cause: say what Flink said
            raise EngineError(f"{what} of job {self.job_id} gave no savepoint: {operation}"[:500])

        # Its statistics appear in the job's history a moment later (the REST cache).
        def listed() -> dict | None:
            for entry in self._get(f"/jobs/{self.job_id}/checkpoints").get("history", []):
                if entry.get("is_savepoint") and entry.get("external_path") == location:
                    return entry
            return None

        return poll_until(
            listed,
            deadline - time.monotonic(),
            POLL_S,
            f"no statistics of savepoint {location} in time",
            EngineError,
        )
