"""A file sink's folders, put back as a snapshot left them before each restore of it.

Flink's file sink keeps in its state the names of the files it has not finished: in-progress
files (resumed by truncating them to the checkpointed length) and, with auto-compaction, the
files waiting to be compacted (read, merged, then deleted). The folder is part of what a
snapshot restores. A benchmark phase's repeats restore the same snapshot one after the other
(`Capabilities.repeatable_restore`): the first restored job compacts and deletes the files
the snapshot names, and the second then fails with a FileNotFoundException on
`.uncompacted-part-...`. So the first restore of a snapshot keeps a copy of each sink folder
as the snapshot left it (nothing has run since the job that made it stopped), and every
later restore of that snapshot puts the copy back first. The folders are small (the latency
stamps are a sample; collected rows are verification-sized).
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
