"""`nexmark` as a user runs it: `python -m nexmark ARGS` in a process of its own, its exit code
and output captured. For what needs a real process: signals, kills, locks, a child's
environment, the entry module itself; a flag refused before any work runs in process
(the `nexmark_main` fixture of tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import psutil

from nexmark.protocol.preparation.leftovers import process_alive


def nexmark(
    *args: str,
    data: Path | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 600,
    **variables: str,
) -> subprocess.CompletedProcess:
    """Run `nexmark ARGS` to its end. Its environment is this process's, with NEXMARK_DATA_DIR
    set to `data` when given, then `env` and `variables` over it."""
    data_dir = {} if data is None else {"NEXMARK_DATA_DIR": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "nexmark", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **data_dir, **(env or {}), **variables},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def still_running(procs: Iterable[psutil.Process], timeout_s: float = 30.0) -> list[int]:
    """The pids of `procs` still running (zombies aside) once every one has exited or
    `timeout_s` has passed. A JVM told to stop as its runner ends (SIGTERM, its parent gone)
    takes a second or more to exit on a loaded machine; one left behind is still there."""
    procs = list(procs)
    deadline = time.monotonic() + timeout_s
    while True:
        running = [p.pid for p in procs if process_alive(p)]
        if not running or time.monotonic() >= deadline:
            return running
        time.sleep(0.2)
