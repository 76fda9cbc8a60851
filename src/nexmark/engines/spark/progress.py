"""What a Spark micro-batch's progress report (`StreamingQueryProgress`, as JSON) says of its
state stores and its checkpoint: rows held, their size, the time its commit took."""

from __future__ import annotations

from datetime import datetime

from nexmark.engines.status import LiveState


def epoch_ms(text: str | None) -> int | None:
    """A progress report's ISO time as epoch ms; None for none."""
    if not text:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(value.timestamp() * 1000)


def state_rows(progress: dict) -> int:
    return sum(int(op.get("numRowsTotal") or 0) for op in progress.get("stateOperators") or [])


def state_bytes(progress: dict) -> int | None:
    """Full state size of a batch: the state stores' live SST files (RocksDB), else memory."""
    ops = progress.get("stateOperators") or []
    if not ops:
        return None
    total = 0
    for op in ops:
        custom = op.get("customMetrics") or {}
        sst = custom.get("rocksdbSstFileSize")
        total += int(sst) if sst else int(op.get("memoryUsedBytes") or 0)
    return total


def live_state(progress: dict) -> LiveState | None:
    """The state of a batch's stores as it reported them (None for a stateless query): rows
    held (exact, `numRowsTotal`), memory (`memoryUsedBytes`) and, on RocksDB, the files."""
    ops = progress.get("stateOperators") or []
    if not ops:
        return None
    files = [int((op.get("customMetrics") or {}).get("rocksdbSstFileSize") or 0) for op in ops]
    return LiveState(
        bytes=None,  # Spark gives no estimate of the live data itself
        keys=state_rows(progress),
        files_bytes=sum(files) if any(files) else None,
        memory_bytes=sum(int(op.get("memoryUsedBytes") or 0) for op in ops),
    )


def commit_seconds(progress: dict) -> float:
    """Time the batch spent making its checkpoint: offsets WAL, state commits, commit log."""
    d = progress.get("durationMs") or {}
    ms = (d.get("walCommit") or 0) + (d.get("commitOffsets") or 0)
    ms += sum(op.get("commitTimeMs") or 0 for op in progress.get("stateOperators") or [])
    return ms / 1000.0
