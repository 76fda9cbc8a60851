"""Checkpoints as the protocol sees them: a checkpoint's record and the opaque snapshot a job
can be restored from."""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True)
class Snapshot:
    """An opaque handle from a phase checkpoint to the restore.

    Only the engine that made it reads `ref` (Flink: the retained checkpoint's path; Spark:
    the query's checkpoint directory). The protocol passes it back unchanged in
    `JobSpec.restore` and compares it with `Job.restored_from()`; `id` is the engine's
    checkpoint id (None where the engine has none), `str()` is what results show.

    Where the engine declares `Capabilities.repeatable_restore`, the same snapshot may be
    passed to several jobs one after the other (the repeats of a benchmark phase), each of
    which must restore exactly the state it holds; `Job.restored_from()` of each must then be
    `same_as` it (a private copy keeps the id).
    """

    id: int | None
    ref: str

    def same_as(self, other: Snapshot | None) -> bool:
        """The same snapshot: the same reference, or the same (known) id."""
        if other is None:
            return False
        return self.ref == other.ref or (self.id is not None and self.id == other.id)

    def __str__(self) -> str:
        return self.ref


class CheckpointStatus(str, enum.Enum):
    """Where a checkpoint is (str-valued: recorded and shown as its value)."""

    COMPLETED = "completed"
    FAILED = "failed"
    IN_PROGRESS = "in_progress"


@dataclass
class CheckpointInfo:
    """One completed (or failed, or still running) checkpoint."""

    id: int
    status: CheckpointStatus
    trigger_ts: float  # unix seconds
    ack_ts: float | None  # unix seconds when the last task acknowledged; None if not completed
    duration_s: float | None
    checkpointed_bytes: int | None  # what this checkpoint wrote (incremental size)
    state_bytes: int | None  # full state size
    snapshot: Snapshot | None = None  # what a job can be restored from (completed only)
