"""Event-time latency of a rate-fed benchmark phase (docs/protocol.md, "Event-time latency").

A row's latency is the wall time it leaves the query minus the wall time the last event it
depends on was released. The engine stamps a sample of its output rows at the sink with
(the value of one time column of the row, the wall time there) (`JobSpec.latency`,
`Job.latency_stamps`); this module says, per query, which column and what event it stands
for (`RULES`), maps that event's time to the time slice holding it and so to the wall time the
feed released the slice, and summarises the latencies.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from enum import Enum

from nexmark.workload.dataset import parse_time
from nexmark.workload.feed import FeedFile


class Depends(str, Enum):
    """What event a row's latency is measured from."""

    OWN_EVENT = "its own event"  # a stateless row: the event it was made from
    WINDOW_END = "its window's end"  # a window row: the event at its window's end closes it
    LATEST_EVENT = "the latest event it carries"  # a join or top-N row: its newest input


@dataclass(frozen=True)
class LatencyRule:
    """How to read a query's row for its latency.

    Attributes:
        column: The output column whose time (epoch ms) the engine stamps.
        depends: What that time stands for.
        window_ms: For WINDOW_END over a tumbling window: its size; the end is the column's
            time rounded down to a multiple of it, plus it (the column is then an event in the
            window, or its start). None: the column is the end itself.
        sample: The share of output rows stamped: per-event rows are many (0.1% keeps the
            sink's cost out of the throughput: Flink's q0 ran x0.98 with 0.1% stamped and
            x0.82 with 1%, the cost being per stamped row), window rows are few (all of them).
    """

    column: str
    depends: Depends
    window_ms: int | None = None
    sample: float = 0.001

    def dependency_ms(self, column_ms: int) -> int:
        """The event time of the last event the row depends on."""
        if self.window_ms is None:
            return column_ms
        return (column_ms // self.window_ms) * self.window_ms + self.window_ms

    def describe(self) -> str:
        return f"{self.depends.value} ({self.column}" + (
            f", rounded up to its {self.window_ms // 1000} s window's end)"
            if self.window_ms
            else ")"
        )


_OWN = Depends.OWN_EVENT
_WINDOW = Depends.WINDOW_END
_LATEST = Depends.LATEST_EVENT

# Queries whose rows carry no event time (q2-q4, q6, q15-q17, q21-q23: keys and aggregates), or
# only a processing time (q12), or that write to a sink of their own (q10) have no rule: their
# latency is not measured (docs/protocol.md says why, per query).
RULES: dict[str, LatencyRule] = {
    "q0": LatencyRule("date_time", _OWN),
    "q1": LatencyRule("date_time", _OWN),
    "q13": LatencyRule("date_time", _OWN),
    "q14": LatencyRule("date_time", _OWN),
    # q7: the highest bid of a 10 s tumbling window, emitted once that window closes.
    "q7": LatencyRule("date_time", _WINDOW, window_ms=10_000, sample=1.0),
    # q8: a new seller of a 10 s tumbling window (the row carries its start).
    "q8": LatencyRule("window_start", _WINDOW, window_ms=10_000, sample=1.0),
    # q11: a session window; its end is its last bid plus the gap.
    "q11": LatencyRule("window_end", _WINDOW, sample=1.0),
    # q5's rows leave out their hopping window: its SQL carries the end for the stamps alone
    # (`Query.stamp_column`), and a window's rows are few (one or a few every 2 s).
    "q5": LatencyRule("window_end", _WINDOW, sample=1.0),
    # q9: an auction's winning bid so far, updated by each higher bid (the bid is the newer).
    "q9": LatencyRule("bid_date_time", _LATEST),
    # q18, q19: a bidder's last bid, an auction's top bids: updated by the bid itself.
    "q18": LatencyRule("date_time", _LATEST),
    "q19": LatencyRule("date_time", _LATEST),
    # q20: a bid with its auction: the bid comes after the auction it names.
    "q20": LatencyRule("bid_date_time", _LATEST),
}


def rule(query: str) -> LatencyRule | None:
    """The query's latency rule; None when its rows carry no event time to measure from."""
    return RULES.get(query)


# (first event time ms, last event time ms, release wall time s) of one released time slice.
Release = tuple[int, int, float]


def releases(steps: list[tuple[FeedFile, ...]], log: list[tuple[float, int]]) -> list[Release]:
    """The released steps (time slices) with their event-time range and release wall time.
    Empty when the part's files do not say their event times (a folder that is no dataset)."""
    out: list[Release] = []
    for step, (wall, _) in zip(steps, log, strict=False):
        firsts = [f.first_date_time for f in step if f.first_date_time]
        lasts = [f.last_date_time for f in step if f.last_date_time]
        if not lasts:
            if any(f.events for f in step):
                return []
            continue  # an empty slice holds no event
        out.append((min(map(_ms, firsts)), max(map(_ms, lasts)), wall))
    return out


def _ms(text: str) -> int:
    t = parse_time(text)
    return round((t - _EPOCH).total_seconds() * 1000)


_EPOCH = parse_time("1970-01-01 00:00:00")


def latencies(
    stamps: list[tuple[int, float]], rule_: LatencyRule, released: list[Release]
) -> tuple[list[tuple[float, float]], int]:
    """(sink wall time, latency s) of each stamp whose event was released in the phase, in
    sink order, and how many stamps were left out: rows that depend on an event before the
    phase's first (the warm-up's, or a window the warm-up opened) or left before its release
    (the warm-up job's own rows)."""
    if not released:
        return [], len(stamps)
    lasts = [last for _, last, _ in released]
    out, left_out = [], 0
    for column_ms, wall in stamps:
        event = rule_.dependency_ms(column_ms)
        k = bisect.bisect_left(lasts, event)
        if event < released[0][0] or k == len(released) or wall < released[0][2]:
            left_out += 1
            continue
        out.append((wall, wall - released[k][2]))
    out.sort()
    return out, left_out


def percentile(sorted_values: list[float], p: float) -> float:
    """The nearest-rank percentile `p` (0-100] of a sorted, non-empty list: a value observed."""
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def series(points: list[tuple[float, float]], t0: float, buckets: int = 300) -> list[list[float]]:
    """Latency over time: [seconds since `t0`, p50, max, rows] per interval of sink time (1 s,
    or wider so that there are at most `buckets`)."""
    if not points:
        return []
    span = points[-1][0] - t0
    width = max(1.0, math.ceil(span / buckets))
    grouped: dict[int, list[float]] = {}
    for wall, latency in points:
        grouped.setdefault(int((wall - t0) // width), []).append(latency)
    out = []
    for index in sorted(grouped):
        values = sorted(grouped[index])
        out.append([index * width, percentile(values, 50), values[-1], float(len(values))])
    return out
