"""Two consoles (results to stdout, messages and progress to stderr) and a progress factory.

Progress has two forms: on a terminal, Rich's live bars; elsewhere (a log file, `nohup`, CI,
ssh without a terminal), `LogProgress`: one plain line per task every `progress_interval()`
seconds (done / total, rate, cores, ETA) and a closing line when the task ends. `--quiet`
(`set_quiet`) turns both off.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

out = Console()
err = Console(stderr=True)
# Rich assumes 80 columns when not on a terminal; result tables need more to stay readable.
for _console in (out, err):
    if not _console.is_terminal:
        _console.width = 120


class RateColumn(ProgressColumn):
    """Events per second, from Rich's own speed estimate."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        text = "-" if speed is None else f"{human_count(speed)} ev/s"
        return Text(text, style="progress.data.speed")


def human_count(n: float) -> str:
    """1234567 -> '1.23M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.0f}"


def human_bytes(n: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


# Seconds between two plain progress lines of one task (NEXMARK_PROGRESS_INTERVAL overrides it,
# as a duration: "10 s", "30", "1 min"; "0" prints a line at every update).
PROGRESS_INTERVAL_S = 15.0
PROGRESS_INTERVAL_ENV = "NEXMARK_PROGRESS_INTERVAL"

_quiet = False


def set_quiet(quiet: bool) -> None:
    """`nexmark --quiet`: no progress bars or progress lines (messages are still printed)."""
    global _quiet
    _quiet = quiet


def quiet() -> bool:
    return _quiet


def progress_interval() -> float:
    """The seconds between two plain progress lines: NEXMARK_PROGRESS_INTERVAL, else 15 s."""
    text = os.environ.get(PROGRESS_INTERVAL_ENV, "").strip()
    if not text:
        return PROGRESS_INTERVAL_S
    from nexmark.durations import parse_seconds

    return max(0.0, parse_seconds(text, PROGRESS_INTERVAL_ENV))


def progress(transient: bool = False) -> Progress | LogProgress:
    """A progress display for event counts: on a terminal, Rich's bar, done/total, rate,
    elapsed and ETA; elsewhere plain log lines (`LogProgress`); nothing with `--quiet`."""
    if err.is_terminal or _quiet:
        return rich_progress(transient)
    return LogProgress()


def rich_progress(transient: bool = False) -> Progress:
    """Rich's live bars on stderr; disabled when stderr is not a terminal or with `--quiet`."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err,
        transient=transient,
        disable=not err.is_terminal or _quiet,
    )


def process_tree_cpu() -> float:
    """CPU seconds (user + system) of this process and its live children, and of the children
    it has waited for: the cores of work done here (dataset generation, verification)."""
    me = psutil.Process()
    total = 0.0
    try:
        t = me.cpu_times()
        total += t.user + t.system + t.children_user + t.children_system
        for child in me.children(recursive=True):
            try:
                c = child.cpu_times()
                total += c.user + c.system
            except psutil.Error:
                pass  # gone between the listing and the read
    except psutil.Error:
        pass
    return total


def format_eta(seconds: float) -> str:
    """12 -> '12 s', 200 -> '3 min 20 s', 4000 -> '1 h 06 min'."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


@dataclass
class _LogTask:
    description: str
    total: float | None
    visible: bool
    unit: str  # "events" or "bytes"
    cpu: Callable[[], float] | None  # CPU seconds so far (a pull), or pushed with update(cpu_s=)
    started: float
    cpu_started: float | None
    cpu_started_at: float = 0.0  # when `cpu_started` was read
    completed: float = 0.0
    cpu_now: float | None = None
    cpu_now_at: float = 0.0  # when `cpu_now` was read
    line_at: float = 0.0  # when its last line was printed (or it started)
    line_done: float = 0.0
    line_cpu: float | None = None
    line_cpu_at: float = 0.0
    closed: bool = False


class LogProgress:
    """Rich `Progress`'s calls as plain log lines, for output that is not a terminal.

    A visible task prints, at most once per `interval_s`, a line of its progress since its
    previous line: `generating: 2,000,000 / 10,000,000 events (20%), 1.1M ev/s, 1.9 cores,
    ETA 8 s`; and, when it reaches its total or is removed, a closing line over its whole life:
    `generating done: 10,000,000 events in 9.1 s, 1.1M ev/s, 1.9 cores`. A task without a
    total is a wait: `q5 restore: 30 s so far`. A heartbeat thread (`start()`) prints those lines
    while nobody updates a task (a long wait), and, with no task at all, a line saying what the
    last line was about and for how long (`still working`).

    Args:
        console: Where the lines go (stderr's console by default).
        interval_s: Seconds between two lines of a task (default `progress_interval()`).
        clock: Monotonic seconds; injectable for tests.
        heartbeat: Run the heartbeat thread between `start()` and `stop()`.
    """

    def __init__(
        self,
        console: Console | None = None,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        heartbeat: bool = True,
    ) -> None:
        self.console = console or err
        self.interval_s = progress_interval() if interval_s is None else interval_s
        self.clock = clock
        self._tasks: dict[int, _LogTask] = {}
        self._next_id = 0
        self._lock = threading.RLock()
        self._heartbeat = heartbeat
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._said_at = clock()  # the last line printed
        self._said = ""  # the last message (`log`), as plain text
        self._said_since = self._said_at  # when it was printed

    # -- Rich Progress's interface (what the commands call) --------------------------------

    def __enter__(self) -> LogProgress:
        self.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        # Left by an error: its own line says what happened, and says it alone (one line).
        self.stop(closing_lines=exc_type is None)

    def start(self) -> None:
        if self._heartbeat and self._thread is None and self.interval_s > 0:
            self._stop.clear()
            self._thread = threading.Thread(target=self._beat, name="progress", daemon=True)
            self._thread.start()

    def stop(self, closing_lines: bool = True) -> None:
        """Stops the heartbeat; an unfinished task gets its closing line ("stopped"), unless
        `closing_lines` is False."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        with self._lock:
            for task_id in list(self._tasks):
                if closing_lines:
                    self.remove_task(task_id)
                else:
                    self._tasks.pop(task_id)

    def add_task(
        self,
        description: str,
        total: float | None = None,
        visible: bool = True,
        unit: str = "events",
        cpu: Callable[[], float] | None = None,
        **_fields: object,
    ) -> int:
        with self._lock:
            now = self.clock()
            cpu_start = cpu() if cpu else None
            task = _LogTask(description, total, visible, unit, cpu, now, cpu_start, now)
            task.line_at, task.line_cpu, task.line_cpu_at = now, cpu_start, now
            self._next_id += 1
            self._tasks[self._next_id] = task
            return self._next_id

    def advance(self, task_id: int, advance: float = 1) -> None:
        with self._lock:
            task = self._tasks.get(task_id)
            if task is not None:
                self.update(task_id, completed=task.completed + advance)

    def update(
        self,
        task_id: int,
        completed: float | None = None,
        total: float | None = None,
        description: str | None = None,
        cpu_s: float | None = None,
        cpu_at: float | None = None,
        **_fields: object,
    ) -> None:
        """`cpu_at`: when `cpu_s` was read (None: now). A pushed reading may be older than
        this call (a sample's), and cores over the call's time would count it short."""
        with self._lock:
            task = self._tasks.get(task_id)
            if task is None or task.closed:
                return
            if total is not None:
                task.total = total
            if description is not None:
                task.description = description
            if cpu_s is not None:
                read_at = self.clock() if cpu_at is None else cpu_at
                if task.cpu_started is None:  # the baseline: cores from here on
                    task.cpu_started = task.line_cpu = cpu_s
                    task.cpu_started_at = task.line_cpu_at = read_at
                task.cpu_now, task.cpu_now_at = cpu_s, read_at
            if completed is not None:
                task.completed = completed
            if task.total is not None and task.completed >= task.total:
                self._close(task, "done")
            else:
                self._maybe_line(task, self.clock())

    def remove_task(self, task_id: int) -> None:
        with self._lock:
            task = self._tasks.pop(task_id, None)
            if task is not None and not task.closed and task.total is not None:
                self._close(task, "stopped")

    # -- lines ------------------------------------------------------------------------------

    def log(self, text: str) -> None:
        """A line of its own (a message, Rich markup); the heartbeat names the last one while
        nothing else is printed."""
        with self._lock:
            self._print(text, markup=True)
            self._said = Text.from_markup(text).plain.strip()
            self._said_since = self._said_at

    def tick(self) -> None:
        """Print what is due: a line per visible task whose interval has passed, or, with no
        task, a `still working` line when nothing was printed for the interval."""
        with self._lock:
            now = self.clock()
            visible = [t for t in self._tasks.values() if t.visible and not t.closed]
            for task in visible:
                self._maybe_line(task, now)
            quiet_for = now - self._said_at
            if not visible and self._said and quiet_for >= max(self.interval_s, 1e-9):
                since = format_eta(now - self._said_since)
                self._print(f"  still working, {since} since: {self._said}")

    def _beat(self) -> None:
        while not self._stop.wait(min(self.interval_s, 5.0) / 2 or 0.5):
            self.tick()

    def _print(self, text: str, markup: bool = False) -> None:
        self.console.print(text, highlight=False, markup=markup, soft_wrap=True)
        self._said_at = self.clock()

    def _cpu(self, task: _LogTask) -> float | None:
        if task.cpu is not None:
            try:
                task.cpu_now, task.cpu_now_at = task.cpu(), self.clock()
            except Exception:  # noqa: BLE001 - a figure of a progress line is never worth a failure
                return None
        return task.cpu_now

    def _maybe_line(self, task: _LogTask, now: float) -> None:
        if not task.visible or task.closed or now - task.line_at < self.interval_s:
            return
        cpu = self._cpu(task)
        elapsed = now - task.line_at
        if task.total is None:
            line = f"{task.description}: {format_eta(now - task.started)} so far"
        else:
            rate = (task.completed - task.line_done) / elapsed if elapsed > 0 else None
            parts = [
                f"{self._amount(task, task.completed)} / {self._amount(task, task.total)} "
                f"{self._unit_word(task)}({task.completed / task.total:.0%})"
                if task.total
                else f"{self._amount(task, task.completed)} {self._unit_word(task)}".rstrip(),
                self._rate(task, rate),
                self._cores(cpu, task.line_cpu, task.cpu_now_at - task.line_cpu_at),
                self._eta(task, rate),
            ]
            line = f"{task.description}: " + ", ".join(parts)
        task.line_at, task.line_done = now, task.completed
        if cpu is not None:
            task.line_cpu, task.line_cpu_at = cpu, task.cpu_now_at
        self._print(line)

    def _close(self, task: _LogTask, how: str) -> None:
        task.closed = True
        if not task.visible:
            return
        now = self.clock()
        elapsed = now - task.started
        cpu = self._cpu(task)
        rate = task.completed / elapsed if elapsed > 0 else None
        done = f"{self._amount(task, task.completed)}"
        if how != "done" and task.total:
            done += f" / {self._amount(task, task.total)}"
        parts = [
            f"{done} {self._unit_word(task)}in {elapsed:.1f} s",
            self._rate(task, rate),
            self._cores(cpu, task.cpu_started, task.cpu_now_at - task.cpu_started_at),
        ]
        self._print(f"{task.description} {how}: " + ", ".join(parts))

    @staticmethod
    def _amount(task: _LogTask, n: float) -> str:
        return human_bytes(n) if task.unit == "bytes" else f"{n:,.0f}"

    @staticmethod
    def _unit_word(task: _LogTask) -> str:
        return "" if task.unit == "bytes" else f"{task.unit} "

    @staticmethod
    def _rate(task: _LogTask, rate: float | None) -> str:
        if rate is None:
            return "- /s"
        if task.unit == "bytes":
            return f"{human_bytes(rate)}/s"
        return f"{human_count(rate)} ev/s" if task.unit == "events" else f"{human_count(rate)}/s"

    @staticmethod
    def _cores(cpu: float | None, since: float | None, elapsed: float) -> str:
        if cpu is None or since is None or elapsed <= 0:
            return "- cores"
        return f"{max(0.0, cpu - since) / elapsed:.2f} cores"

    @staticmethod
    def _eta(task: _LogTask, rate: float | None) -> str:
        if not task.total:
            return "ETA -"
        if not rate or rate <= 0:
            return "ETA - (no progress)"
        return f"ETA {format_eta(max(0.0, task.total - task.completed) / rate)}"
