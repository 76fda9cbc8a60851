"""Where a suite stands: query k of n, the time elapsed, and an estimate of what remains.

The estimate is made from this run's own measurements only: the wall seconds per event of the
queries that finished `ok` so far (from their start to their result, warm-up, checkpoints,
restore and scored phases included), applied to the events the remaining queries read. Before
any query finished there is no estimate, and the line says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from nexmark.console import format_eta


class SuiteProgress:
    """The suite's clock and its estimate.

    Args:
        total: Queries this run will run.
        events_per_query: Events one query reads (warm-up and every scored phase); None
            when not known (no estimate then).
        clock: Monotonic seconds; injectable for tests.
    """

    def __init__(
        self,
        total: int,
        events_per_query: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.events_per_query, self.clock = total, events_per_query, clock
        self.started = clock()
        self._query_started: float | None = None
        self._index = 0
        self._spent_s = 0.0  # wall seconds of the queries that finished ok
        self._spent_events = 0

    def query_started(self, index: int) -> None:
        self._index, self._query_started = index, self.clock()

    def query_finished(self, status: str) -> None:
        """An `ok` query's wall time joins the rate; a failed, timed-out or unsupported one
        says nothing about how long the others take."""
        if self._query_started is not None and status == "ok" and self.events_per_query:
            self._spent_s += self.clock() - self._query_started
            self._spent_events += self.events_per_query
        self._query_started = None

    def remaining_s(self, finished: int) -> float | None:
        """Seconds left for the queries after the first `finished`; None without a rate."""
        if not self._spent_events or not self.events_per_query:
            return None
        return self._spent_s / self._spent_events * self.events_per_query * (self.total - finished)

    def line(self, query: str) -> str:
        """At a query's start: 'suite: query 3 of 24 (q5), 1 h 02 min elapsed, about 4 h
        10 min left (estimate: ...)'."""
        elapsed = format_eta(self.clock() - self.started)
        head = f"suite: query {self._index + 1} of {self.total} ({query}), {elapsed} elapsed"
        return f"{head}, {self.estimate(self._index)}"

    def estimate(self, finished: int) -> str:
        left = self.remaining_s(finished)
        if left is None:
            return "no estimate yet (none of this run's queries has finished ok)"
        per_million = self._spent_s / self._spent_events * 1e6
        n = self.total - finished
        return (
            f"about {format_eta(left)} left (estimate: {n} quer{'y' if n == 1 else 'ies'} x "
            f"{self.events_per_query:,} events at {per_million:.3g} s per million events, this "
            f"run's rate over its {self._spent_events // self.events_per_query} finished "
            "ok)"
        )

    def short(self) -> str:
        """The terminal's suite bar: 'suite 3/24, ~4 h 10 min left (estimate)'."""
        left = self.remaining_s(self._index)
        tail = f", ~{format_eta(left)} left (estimate)" if left is not None else ""
        return f"suite {self._index + 1}/{self.total}{tail}"

    def closing_line(self, finished: int) -> str:
        took = format_eta(self.clock() - self.started)
        return f"suite: {finished} of {self.total} queries in {took}"
