"""What a run shows while it works: suite progress, a bar per phase, phase and checkpoint events.

On a terminal this is a live Rich display. Elsewhere (a log file, CI, `nohup`, ssh without a
terminal) it prints plain lines (`console.LogProgress`): each phase change and checkpoint, and,
every `console.progress_interval()` seconds (15 s; NEXMARK_PROGRESS_INTERVAL), a line of the
phase's progress (events done / total, rate, the engine's cores, ETA), a closing line when a
phase has read its events, and `still working` lines through long waits, so a long run is never
silent. `nexmark --quiet` keeps the phase and checkpoint lines only.

Each query starts with the suite's line (progress/suite_progress.py): query k of n, the time
elapsed and an estimate of what remains from this run's own rate; on a terminal the suite's bar
carries the same estimate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import TaskID

from nexmark.console import LogProgress, err, human_bytes, quiet, rich_progress
from nexmark.protocol.progress.suite_progress import SuiteProgress


class RunDisplay:
    """Progress for a suite of queries; a no-op-safe object the runner calls at each step.

    Args:
        total_queries: Queries the suite will run.
        enabled: False prints nothing at all (verification, the contract suite).
        log: The plain-line progress to use off a terminal (tests pass one with a fake clock and
            their own console); default a `LogProgress` on stderr, none with `--quiet`.
        events_per_query: Events each query reads, for the suite's estimate (None: none).
        clock: The suite's clock (default the log's, else monotonic time).
    """

    def __init__(
        self,
        total_queries: int,
        enabled: bool = True,
        log: LogProgress | None = None,
        events_per_query: int | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.enabled = enabled
        self.live = enabled and log is None and err.is_terminal and not quiet()
        self._progress = rich_progress()
        self._log: LogProgress | None = None
        if enabled and not self.live and (log is not None or not quiet()):
            self._log = log or LogProgress()
        self._console: Console = self._log.console if self._log is not None else err
        self._suite: TaskID | None = None
        self._phase_task: TaskID | None = None
        self._log_task: int | None = None
        self._query = ""
        self.total_queries = total_queries
        clock = clock or (log.clock if log is not None else None)
        self.suite = SuiteProgress(total_queries, events_per_query, clock or time.monotonic)

    def __enter__(self) -> RunDisplay:
        if self.live:
            self._progress.start()
            self._suite = self._progress.add_task("suite", total=self.total_queries)
        elif self._log is not None:
            self._log.start()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self.live:
            self._progress.stop()
        elif self._log is not None:
            self._log.stop(closing_lines=exc_type is None)  # an error says it in its own line

    def message(self, text: str) -> None:
        """A line above the bars (or a plain log line)."""
        if not self.enabled:
            return
        if self.live:
            self._progress.console.print(text, highlight=False)
        elif self._log is not None:
            self._log.log(text)
        else:
            self._console.print(text, highlight=False)

    def query_started(self, query: str, index: int) -> None:
        self._query = query
        self.message(f"[bold]{query}[/] ({index + 1}/{self.total_queries})")
        self.suite.query_started(index)
        self.message(escape(self.suite.line(query)))
        if self.live and self._suite is not None:
            self._progress.update(self._suite, description=escape(self.suite.short()))

    def phase(self, name: str, events_total: int | None = None) -> None:
        """A new phase; a phase that reads events gets a bar (or its progress lines), a phase
        that waits gets `so far` lines while it lasts."""
        self._end_log_task()
        self.message(f"  {self._query} {name}")
        if self._log is not None:
            self._log_task = self._log.add_task(f"  {self._query} {name}", total=events_total)
        if not self.live:
            return
        if self._phase_task is not None:
            self._progress.remove_task(self._phase_task)
            self._phase_task = None
        if events_total:
            self._phase_task = self._progress.add_task(f"{self._query} {name}", total=events_total)

    def events(self, done: int, cpu_s: float | None = None, cpu_at: float | None = None) -> None:
        """The phase's events so far, and the engine's CPU seconds with when they were read
        (for the cores of a line)."""
        if self.live and self._phase_task is not None:
            self._progress.update(self._phase_task, completed=done)
        elif self._log is not None and self._log_task is not None:
            self._log.update(self._log_task, completed=done, cpu_s=cpu_s, cpu_at=cpu_at)

    def checkpoint(self, cid: int, status: str, duration_s: float | None, size: int | None) -> None:
        dur = "-" if duration_s is None else f"{duration_s:.2f}s"
        sz = "-" if size is None else human_bytes(size)
        self.message(f"    checkpoint {cid} {status} ({dur}, {sz})")

    def query_finished(self, status: str, summary: str) -> None:
        self._end_log_task()
        self.suite.query_finished("ok" if status == "match" else status)
        colour = "green" if status in ("ok", "match") else "red"  # a run's, a verification's
        self.message(f"  {self._query} [{colour}]{status}[/] {escape(summary)}")
        if self.live:
            if self._phase_task is not None:
                self._progress.remove_task(self._phase_task)
                self._phase_task = None
            if self._suite is not None:
                self._progress.advance(self._suite)

    def _end_log_task(self) -> None:
        """The current phase's closing line ("stopped" when it ended before its last event)."""
        if self._log is not None and self._log_task is not None:
            self._log.remove_task(self._log_task)
            self._log_task = None
