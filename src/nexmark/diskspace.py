"""A full disk, recognised wherever it shows: an OSError's errno, or the text of an engine's
Java exception ("java.io.IOException: No space left on device"); and the one line that says
where, how much was needed and how much is free."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from nexmark import console
from nexmark.errors import UsageError

_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
FREE_BYTES_ENV = "NEXMARK_FREE_BYTES"  # test hook: pretend this many bytes are free
_TEXTS = ("no space left on device", "disk quota exceeded", "enospc")


def is_disk_full(error: BaseException | str | None) -> bool:
    """True if `error` (an exception, with its causes, or an engine's message) says that a
    file system is full."""
    seen: set[int] = set()
    while isinstance(error, BaseException) and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in _ERRNOS:
            return True
        if any(t in str(error).lower() for t in _TEXTS):
            return True
        error = error.__cause__ or error.__context__
    return isinstance(error, str) and any(t in error.lower() for t in _TEXTS)


def free_space(path: str | os.PathLike[str]) -> str:
    """'12.0 KiB free of 16.0 MiB on /mnt' for the file system holding `path` (its nearest
    existing ancestor), or 'free space unknown'."""
    probe = Path(path).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        usage = shutil.disk_usage(probe)
    except OSError:
        return "free space unknown"
    return (
        f"{console.human_bytes(usage.free)} free of {console.human_bytes(usage.total)} "
        f"on {mount_point(probe)}"
    )


def free_bytes(path: str | os.PathLike[str]) -> int:
    """Free bytes on the file system that holds (or will hold) `path`: its nearest existing
    ancestor's. NEXMARK_FREE_BYTES pretends a number (how tests make a disk too small)."""
    override = os.environ.get(FREE_BYTES_ENV)
    if override:
        if not override.isdigit():
            raise UsageError(f"{FREE_BYTES_ENV} must be a number of bytes, got {override!r}")
        return int(override)
    probe = Path(path).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return shutil.disk_usage(probe).free


def mount_point(path: str | os.PathLike[str]) -> Path:
    """The mount point of the file system holding `path` (or its nearest existing ancestor)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    path = path.resolve()
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path
