"""The COLLECT sink's folder, put back as a snapshot left it before each restore of it.

Flink's file sink keeps in its state the names of the files it has not finished: pending
files (committed by a rename when the checkpoint completes, or by the restored job) and,
with auto-compaction, the files waiting to be compacted (read, merged, then deleted once a
later checkpoint completes). The folder is part of what a snapshot restores. A benchmark
phase's repeats restore the same snapshot one after the other
(`Capabilities.repeatable_restore`): the first restored job compacts and deletes the files
the snapshot names, and the second would then fail with a FileNotFoundException on
`.uncompacted-part-...`. So the first restore of a snapshot keeps a copy of the folder as the
snapshot left it, and every later restore of that snapshot puts the copy back first.

The copy is only as good as the folder at the first restore: a checkpoint the warm-up job
completed after the phase checkpoint would have deleted what that checkpoint names. So a
COLLECT warm-up stops at its phase checkpoint (`FlinkJob.trigger_phase_checkpoint(stop=True)`);
one that goes on (a Kafka source) takes a checkpoint first, and its savepoint names no such file
unless rows reached the sink between the two. The latency stamps need no copy: no snapshot
names a stamp file (`ddl.stamps_written`).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from nexmark.engines.checkpoints import Snapshot


class SinkFolders:
    """The copies of sink folders kept per snapshot, for one engine's lifetime."""

    def __init__(self) -> None:
        self._copies: dict[tuple[str, Path], Path] = {}

    def as_snapshot_left_them(self, snapshot: Snapshot, folders: list[Path]) -> None:
        """Before a job restored from `snapshot` that writes into `folders` is submitted."""
        for folder in folders:
            folder = folder.resolve()
            key = (snapshot.ref, folder)
            copy = self._copies.get(key)
            if copy is None:
                digest = hashlib.sha256(snapshot.ref.encode()).hexdigest()[:12]
                copy = folder.parent / f".{folder.name}.at-snapshot-{digest}"
                shutil.rmtree(copy, ignore_errors=True)
                if folder.is_dir():
                    shutil.copytree(folder, copy, symlinks=True)
                else:
                    copy.mkdir(parents=True)
                self._copies[key] = copy
                continue
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(copy, folder, symlinks=True)

    def forget(self) -> None:
        """Drop the copies (the engine closes; the work folders are the protocol's)."""
        for copy in self._copies.values():
            shutil.rmtree(copy, ignore_errors=True)
        self._copies.clear()
