"""What a Spark query's restore needs: the checkpoint directory it runs on (a private copy of the
one to restart from, or a fresh one), the topics a restored Kafka query subscribes to, and the
restore proof: the rows its state stores hold at a batch (read with Spark's state data source)
against those the warm-up reported."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from nexmark.engines.source import KafkaSource
from nexmark.engines.spark.checkpoint_dir import kafka_offsets, last_commit
from nexmark.engines.spark.job import PHASE_FILE, _spark_message
from nexmark.engines.spec import JobSpec
from nexmark.errors import EngineError
from nexmark.storage import files
from nexmark.storage.files import Location
from nexmark.storage.s3 import StorageError


def kafka_subscription(src: KafkaSource, checkpoint: Location, restored: int | None) -> list[str]:
    """The topics a query over `src` subscribes to: its own topic, and, restored, the topics
    the checkpoint holds offsets of (the warm-up's, for the benchmark phase).

    Why both (docs/kafka.md, Spark): a restored query resumes from its checkpoint's offsets
    and, at each batch, compares them with the partitions its subscription has now
    (KafkaOffsetReaderAdmin.getOffsetRangesFromResolvedOffsets): a partition that is new is
    read from its earliest offset (and must start at 0, else "data loss"); a partition of the
    checkpoint that is gone is data loss too, which fails the query unless failOnDataLoss is
    false. Subscribed to both topics, the warm-up topic's partitions are not gone (they stay
    at their end offsets: nothing more is read from them) and the benchmark topic's are new,
    read from their first record; failOnDataLoss stays on, so a topic that really lost
    records (a shorter retention, a reloaded topic) still fails the query."""
    topics = [src.topic]
    if restored is not None:
        topics += [t for t in kafka_offsets(checkpoint, restored) or {} if t != src.topic]
    return topics


def checkpoint_to_run_on(spec: JobSpec, in_place: bool) -> tuple[Location, int | None]:
    """The checkpoint directory a query of `spec` runs on and the batch it restores from.
    Restored: a private copy of the snapshot's directory (`private_copy`; `in_place`, a
    failover restart, the directory itself), its last committed batch. Fresh (None): a fresh
    directory, the spec's own on a store, else `checkpoint` in its work folder."""
    if spec.restore is not None:
        # A snapshot's ref is text, opaque to all but its engine (`Snapshot`): read here.
        checkpoint = files.location(spec.restore.ref)
        if not in_place:
            checkpoint = private_copy(checkpoint)
        restored = last_commit(checkpoint)
        if restored is None:
            raise EngineError(f"no committed batch to restore from in {checkpoint}")
        return checkpoint, restored
    checkpoint = spec.checkpoint_dir or spec.work_dir / "checkpoint"
    files.remove_tree(checkpoint)
    return checkpoint, None


def private_copy(checkpoint: Location) -> Location:
    """A copy of a query's checkpoint directory beside it (`checkpoint-restore-N`: the same
    parent, so the copy's query watches the same source directory), for one restore; on a
    store, a prefix of server-side copies. The stopped query's state store maintenance may
    still write a snapshot into the original while it is copied: a file that vanished
    mid-copy is retried once."""
    if not files.children(checkpoint):
        raise EngineError(f"no checkpoint directory to restore from at {checkpoint}")
    taken = {p.name for p in files.children(checkpoint.parent)}
    n = 1
    while f"{checkpoint.name}-restore-{n}" in taken:
        n += 1
    copy = checkpoint.parent / f"{checkpoint.name}-restore-{n}"
    for attempt in range(2):
        try:
            files.copy_tree(checkpoint, copy)
            return copy
        except (FileNotFoundError, StorageError) as exc:
            files.remove_tree(copy)
            if attempt:
                raise EngineError(
                    f"cannot copy checkpoint {checkpoint} to restore it: {exc}"
                ) from None
    return copy


def state_rows(spark: Any, checkpoint: Location, batch: int) -> list[int]:
    """Rows per stateful operator in the checkpoint's state at `batch` (statestore reader)."""
    path = files.as_engine_path(checkpoint)
    meta = spark.read.format("state-metadata").load(path).collect()
    operators: dict[int, list[str]] = {}
    for row in meta:
        operators.setdefault(int(row["operatorId"]), []).append(row["stateStoreName"])
    counts = []
    for op_id in sorted(operators):
        names = operators[op_id]
        reader = spark.read.format("statestore").option("batchId", batch)
        reader = reader.option("operatorId", op_id)
        if any(n.startswith("left-") for n in names):  # a stream-stream join
            total = 0
            for side in ("left", "right"):
                total += reader.option("joinSide", side).load(path).count()
            counts.append(total)
        else:
            counts.append(reader.load(path).count())
    return counts


def phase_state(checkpoint: Location, batch: int) -> list[int] | None:
    """The state rows per operator the warm-up reported at `batch` (its phase file in the
    checkpoint), or None: nothing to compare (a stateless query, or no phase checkpoint
    there)."""
    try:
        phase = json.loads(files.read_text(checkpoint / PHASE_FILE))
    except FileNotFoundError:
        return None
    if phase.get("batch") != batch or not phase.get("state_rows"):
        return None
    return list(phase["state_rows"])


def check_state(
    spark: Any,
    checkpoint: Location,
    batch: int,
    expected: list[int],
    check_alive: Callable[[], None],
) -> dict:
    """The restore proof: the state stores at `batch` hold the rows the warm-up reported. What
    it found (with the seconds it took), or the error that kept it from reading them (after
    `check_alive`, which raises when the driver is gone).

    Raises:
        EngineError: They do not.
    """
    t0 = time.monotonic()
    try:
        found = state_rows(spark, checkpoint, batch)
    except Exception as exc:  # noqa: BLE001 - e.g. the version was purged (minBatchesToRetain)
        check_alive()
        return {
            "batch": batch,
            "expected": expected,
            "found": None,
            "error": _spark_message(exc),
        }
    check = {
        "batch": batch,
        "expected": expected,
        "found": found,
        "seconds": round(time.monotonic() - t0, 3),
    }
    if found != expected:
        raise EngineError(
            f"the checkpoint at batch {batch} holds {found} state rows per operator, but the "
            f"warm-up reported {expected}"
        )
    return check
