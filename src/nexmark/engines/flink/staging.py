"""A dataset part shown to a job's open source only once every task of the job runs.

Flink's file source hands whole files to whichever reader asks first. A reader whose task is
still starting (restoring its state) when another reader has read a small file to its end
finds every file taken: the fast reader reads two files one after the other (its event time
jumps back) and the late one none, so it never emits a watermark and no window of the job ever
fires. Seen in the test suite about once in 25 restored jobs: reader 1 registered, took and read
its 2,500-event file in 30 ms and took the second file 43 ms before reader 0 registered.

So an open source watches a directory of the job's own (in its work directory) that is empty
when the job is submitted; once every task runs, every reader has registered and asked for a
file, and the files are linked in (hard links, else symbolic links). The enumerator's next
listing (`ddl.MONITOR_INTERVAL` later) hands one file to each waiting reader. Every event is
then read within the scored Time, which starts when every task runs (docs/protocol.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from nexmark.engines.flink.recovery import file_events
from nexmark.errors import EngineError


class StagedPart:
    """The files of `part_dir`, linked into `stage_dir` by `release()`.

    Args:
        part_dir: The dataset part.
        stage_dir: An empty directory is made here (anything there before is removed).
    """

    def __init__(self, part_dir: Path, stage_dir: Path):
        self.part_dir = Path(part_dir).resolve()
        self.dir = Path(stage_dir).resolve()
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        # Events of each file as the job sees it (its staged path): counted from the manifest.
        self.file_events = {self.dir / p.name: n for p, n in file_events(self.part_dir).items()}
        self.released = False

    def release(self) -> None:
        """Link every file in (once; the link appears whole, so a listing never sees half)."""
        if self.released:
            return
        for staged in sorted(self.file_events):
            _link(self.part_dir / staged.name, staged)
        self.released = True


def _link(source: Path, link: Path) -> None:
    """A hard link, else (another file system, or links not allowed there) a symbolic one."""
    try:
        os.link(source, link)
        return
    except OSError:
        pass
    try:
        link.symlink_to(source)
    except OSError as exc:
        raise EngineError(f"cannot link {source} into {link.parent}: {exc}") from None
