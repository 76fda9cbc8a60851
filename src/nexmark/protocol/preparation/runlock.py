"""One `nexmark run` per results directory: a lock file there, held while the run lives.

The lock is an advisory `flock` on `.nexmark-run.lock`, which the kernel drops when its process
ends however it ends (SIGKILL, a closed terminal): a lock left by a killed runner is taken over,
never refused. The file holds the holder's pid, start time and command, so a refusal says who
holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path

import psutil

from nexmark.errors import UsageError

LOCK_NAME = ".nexmark-run.lock"


def _holder() -> dict:
    me = psutil.Process()
    return {
        "pid": me.pid,
        "started": me.create_time(),
        "command": " ".join(["nexmark", *sys.argv[1:]])[:300],
    }


def describe(holder: dict) -> str:
    """'pid 123, started 2024-05-01 12:00:03' of a lock file's content."""
    started = holder.get("started")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if started else "?"
    return f"pid {holder.get('pid', '?')}, started {when}"


class RunLock:
    """The lock of one results directory (created if missing), as a context manager.

    Attributes:
        taken_over: What a killed runner left in the lock file (its pid and start time), when
            the lock was taken over from one; None when the file was new or cleanly released.
    """

    def __init__(self, results_dir: Path) -> None:
        self.dir = Path(results_dir)
        self.path = self.dir / LOCK_NAME
        self.taken_over: dict | None = None
        self._fd: int | None = None
        self._made_dir = False

    def __enter__(self) -> RunLock:
        self._made_dir = not self.dir.exists()
        self.dir.mkdir(parents=True, exist_ok=True)
        while self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read(fd)
                os.close(fd)
                self._remove_dir_if_made()
                raise UsageError(
                    f"{self.dir} is in use by another nexmark run ({describe(holder)}); wait "
                    "for it to end, or choose another --results directory"
                ) from None
            if _same_file(fd, self.path):
                self._fd = fd
            else:  # its holder released it (and removed the file) between our open and lock
                os.close(fd)
        left = _read(self._fd)
        self.taken_over = left or None
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, (json.dumps(_holder()) + "\n").encode(), 0)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()  # before unlocking: a waiting run re-opens a fresh file
        os.close(self._fd)
        self._fd = None
        self._remove_dir_if_made()

    def _remove_dir_if_made(self) -> None:
        if self._made_dir:
            with contextlib.suppress(OSError):  # only when nothing else was written there
                self.dir.rmdir()


def _read(fd: int) -> dict:
    try:
        text = os.pread(fd, 4096, 0).decode(errors="replace")
        holder = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False
