"""A `nexmark run` in a process of its own, something killed at a cue of its output: its
stderr lines as they come and every JVM it started, for the tests of a cluster lost mid-run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from cli_process import still_running


def java_children(pid: int) -> list[psutil.Process]:
    with contextlib.suppress(psutil.Error):
        children = psutil.Process(pid).children(recursive=True)
        return [c for c in children if "java" in (c.name() or "")]
    return []


def cmdline(proc: psutil.Process) -> str:
    with contextlib.suppress(psutil.Error):
        return " ".join(proc.cmdline())
    return ""


@dataclass
class Run:
    """A `nexmark run` subprocess, its stderr lines as they come, and every JVM it started."""

    returncode: int | None = None
    lines: list[str] = field(default_factory=list)
    jvms: dict[int, psutil.Process] = field(default_factory=dict)
    commands: dict[int, str] = field(default_factory=dict)
    fired: bool = False
    fired_at: float = 0.0
    after_kill_s: float = 0.0  # from the kill to the end of the run

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def errors(self) -> list[str]:
        return [ln.rstrip("\n") for ln in self.lines if ln.startswith("error:")]

    def left(self) -> list[int]:
        """The run's JVMs still running once every one has exited (or 30 s have passed)."""
        return still_running(self.jvms.values())


def run_and_kill(
    args: list[str],
    data: Path,
    on_line: str,
    kill: Callable[[Run, int], None],
    timeout_s: float = 240,
) -> Run:
    """Run `nexmark *args`; the first time a stderr line contains `on_line`, call
    `kill(run, nexmark's pid)`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        env={**os.environ, "NEXMARK_DATA_DIR": str(data), "COLUMNS": "200"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    run = Run()

    def read() -> None:
        for line in proc.stderr:
            run.lines.append(line)
            if not run.fired and on_line in line:
                run.fired, run.fired_at = True, time.monotonic()
                kill(run, proc.pid)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout_s
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            for jvm in java_children(proc.pid):
                if jvm.pid not in run.jvms:
                    run.jvms[jvm.pid] = jvm
                    run.commands[jvm.pid] = cmdline(jvm)
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join(30)
    assert time.monotonic() < deadline, f"the run did not end in time:\n{run.stderr[-3000:]}"
    run.returncode = proc.returncode
    run.after_kill_s = time.monotonic() - run.fired_at
    return run
