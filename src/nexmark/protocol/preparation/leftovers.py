"""What a killed runner leaves behind, and the next run's clean-up of it.

A runner killed outright (SIGKILL, a closed terminal) runs no `finally`: its engine's processes
may live on (a frozen JVM, a local cluster's TaskManagers, a Kafka broker: none of them watch
for their parent's end), its unfinished query's work directory stays, and so does the engine's
scratch directory. So the run keeps, in the results directory, a side file naming the processes
it started (pid, start time, a digest of the command line) and their scratch directories; the
next run on that directory (it holds the run lock, so the writer is gone) stops those still
alive that match all three, never a process that merely reuses a pid, and removes the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import psutil

from nexmark.errors import EngineError

PROCESSES_NAME = ".nexmark-engine-processes.json"
_SAME_START_S = 1.0  # create times read by two processes may differ by a clock tick
_SCRATCH_PREFIX = "nexmark-"


def _digest(cmdline: list[str]) -> str:
    return hashlib.sha256("\0".join(cmdline).encode()).hexdigest()[:16]


def _scratch_of(cmdline: list[str]) -> str | None:
    """The engine's scratch directory: the parent of a JVM's `java.io.tmpdir` when it is one
    of ours (a `nexmark-*` directory in the system's temporary directory)."""
    for arg in cmdline:
        if arg.startswith("-Djava.io.tmpdir="):
            scratch = Path(arg.split("=", 1)[1]).parent
            if _is_scratch(scratch):
                return str(scratch)
    return None


def _is_scratch(path: Path) -> bool:
    temp = Path(tempfile.gettempdir()).resolve()
    return path.name.startswith(_SCRATCH_PREFIX) and path.resolve().parent == temp


def record(results_dir: Path) -> None:
    """Write down this runner's live child processes (the engine's, called after it starts
    and before each query); the file goes when the run ends (`forget`)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            cmdline = child.cmdline()
            found.append(
                {
                    "pid": child.pid,
                    "started": child.create_time(),
                    "name": child.name(),
                    "cmdline": _digest(cmdline),
                    "scratch": _scratch_of(cmdline),
                }
            )
        except psutil.Error:
            continue  # ended between the listing and the read: nothing to leave behind
    path = Path(results_dir) / PROCESSES_NAME
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):  # a full disk must not stop the run over a side file
        tmp.write_text(json.dumps({"runner": os.getpid(), "processes": found}, indent=1))
        os.replace(tmp, path)


def forget(results_dir: Path) -> None:
    """The run ended through its own `finally`: the engine is closed, nothing is left."""
    with contextlib.suppress(OSError):
        (Path(results_dir) / PROCESSES_NAME).unlink()


def _ours(entry: dict) -> psutil.Process | None:
    """The recorded process if it still runs as recorded: same pid, start time and command."""
    try:
        proc = psutil.Process(int(entry["pid"]))
        if abs(proc.create_time() - float(entry["started"])) > _SAME_START_S:
            return None  # the pid was reused by another process
        if _digest(proc.cmdline()) != entry["cmdline"] or proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except (psutil.Error, KeyError, TypeError, ValueError):
        return None


def reap(results_dir: Path) -> list[str]:
    """Stop what a killed run on `results_dir` left running and remove its scratch
    directories; one line per thing done (none when the last run ended cleanly)."""
    path = Path(results_dir) / PROCESSES_NAME
    try:
        entries = json.loads(path.read_text())["processes"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    lines, victims = [], []
    for entry in entries:
        proc = _ours(entry)
        if proc is None:
            continue
        with contextlib.suppress(psutil.Error):
            victims += [proc, *proc.children(recursive=True)]
        lines.append(f"{entry.get('name', '?')} (pid {proc.pid})")
    _kill(victims)
    done = []
    if lines:
        done.append(
            f"stopped {len(lines)} engine process{'es' if len(lines) > 1 else ''} a killed "
            f"run on {results_dir} left running: {', '.join(lines)}"
        )
    for scratch in sorted({e["scratch"] for e in entries if e.get("scratch")}):
        if Path(scratch).is_dir() and _is_scratch(Path(scratch)):
            shutil.rmtree(scratch, ignore_errors=True)
            done.append(f"removed the killed run's engine scratch directory {scratch}")
    path.unlink(missing_ok=True)
    return done


def _kill(victims: list[psutil.Process], wait_s: float = 10.0) -> None:
    """SIGKILL (the killed run's jobs are lost anyway; a frozen JVM would not heed SIGTERM),
    then wait until each is gone or a zombie (an orphan's new parent may never reap it)."""
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    deadline = time.monotonic() + wait_s
    while left := [p for p in victims if process_alive(p)]:
        if time.monotonic() > deadline:
            raise EngineError(
                f"a killed run's engine process (pid {left[0].pid}) did not end on SIGKILL; "
                "end it, then run again"
            )
        time.sleep(0.05)


def process_alive(proc: psutil.Process) -> bool:
    """Whether `proc` still runs (a zombie, reaped or not, does not)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def remove_unfinished_work(results_dir: Path, finished: set[str]) -> list[str]:
    """Remove the work directories of queries with no result (a killed run's unfinished
    query, its source ceiling): they are redone from the start. The names removed."""
    work = Path(results_dir) / "work"
    if not work.is_dir():
        return []
    removed = []
    for entry in sorted(work.iterdir()):
        if entry.name not in finished:
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return removed
