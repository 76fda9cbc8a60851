"""What a run shows while it works: suite progress, a bar per phase, phase and checkpoint events.

On a terminal this is a live Rich display; elsewhere (CI logs, pipes) it prints one plain line per
phase change and checkpoint, so a long run is never silent.
"""

from __future__ import annotations

from rich.markup import escape
from rich.progress import TaskID

from nexmark.console import err, human_bytes, progress


class RunDisplay:
    """Progress for a suite of queries; a no-op-safe object the runner calls at each step."""

    def __init__(self, total_queries: int, enabled: bool = True) -> None:
        self.enabled = enabled
        self.live = enabled and err.is_terminal
        self._progress = progress()
        self._suite: TaskID | None = None
        self._phase_task: TaskID | None = None
        self._query = ""
        self.total_queries = total_queries

    def __enter__(self) -> RunDisplay:
        if self.live:
            self._progress.start()
            self._suite = self._progress.add_task("suite", total=self.total_queries)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self._progress.stop()

    def message(self, text: str) -> None:
        """A line above the bars (or a plain log line)."""
        if self.enabled:
            (self._progress.console if self.live else err).print(text, highlight=False)

    def query_started(self, query: str, index: int) -> None:
        self._query = query
        self.message(f"[bold]{query}[/] ({index + 1}/{self.total_queries})")

    def phase(self, name: str, events_total: int | None = None) -> None:
        """A new phase; a phase that reads events gets a bar."""
        self.message(f"  {self._query} {name}")
        if not self.live:
            return
        if self._phase_task is not None:
            self._progress.remove_task(self._phase_task)
            self._phase_task = None
        if events_total:
            self._phase_task = self._progress.add_task(f"{self._query} {name}", total=events_total)

    def events(self, done: int) -> None:
        if self.live and self._phase_task is not None:
            self._progress.update(self._phase_task, completed=done)

    def checkpoint(self, cid: int, status: str, duration_s: float | None, size: int | None) -> None:
        dur = "-" if duration_s is None else f"{duration_s:.2f}s"
        sz = "-" if size is None else human_bytes(size)
        self.message(f"    checkpoint {cid} {status} ({dur}, {sz})")

    def query_finished(self, status: str, summary: str) -> None:
        colour = "green" if status == "ok" else "red"
        self.message(f"  {self._query} [{colour}]{status}[/] {escape(summary)}")
        if self.live:
            if self._phase_task is not None:
                self._progress.remove_task(self._phase_task)
                self._phase_task = None
            if self._suite is not None:
                self._progress.advance(self._suite)
