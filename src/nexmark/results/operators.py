"""Where a scored phase's time went, per operator (a Flink job vertex: the operators chained into
one task; on Spark a part of the micro-batch or a state operator): each one's share of time
busy, back-pressured and idle and its records per second, from the counters read through the
phase (`Job.operator_load`), and the busiest of them, the bottleneck. A figure the engine does
not report (Spark's back-pressure) stays None.

Each figure is a counter's advance per second of the time the vertex's tasks ran, summed over
the intervals between consecutive reads of the phase. An interval in which the run time did not
advance (the same metric dump served twice, no micro-batch ended) or went back, or in which a
record count fell (a restarted task counts from zero again), is left out. The times telescope:
a busy time read high at one read (Flink books an idle or back-pressured stretch under way up
to 5 s late) is taken back at the next, so only the stretches under way at the phase's first
and last reads are off, by at most 5 s each.

The same intervals give each vertex's share of time busy through the phase (`busy_over_time`):
one point per interval, neighbouring intervals merged into one where the phase has more than
`MAX_BUSY_POINTS` of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nexmark.engines.status import VertexLoad


@dataclass
class OperatorLoad:
    """One vertex over a scored phase (docs/results.md, "Where the time goes").

    Attributes:
        vertex: Its name as the engine shows it (Flink: the chained operators, `A -> B`;
            Spark: `addBatch`, `stateStoreSave`).
        parallelism: Its subtasks.
        busy: Time busy, ms per second (0-1000), the mean over its subtasks.
        backpressured: Time blocked by its outputs, ms per second.
        idle: Time waiting for input, ms per second.
        records_in_per_s: Records its tasks received per second, over all its subtasks.
        records_out_per_s: Records its tasks emitted per second.
        measured_s: The run time the figures cover (the phase's first to last read).
    """

    vertex: str
    parallelism: int | None = None
    busy: float | None = None
    backpressured: float | None = None
    idle: float | None = None
    records_in_per_s: float | None = None
    records_out_per_s: float | None = None
    measured_s: float | None = None


def summarise(reads: Sequence[Sequence[VertexLoad]]) -> list[OperatorLoad] | None:
    """Each vertex's figures over a phase's reads (in order), in the order the engine lists
    them; None when the phase has no read (the engine reports no operators)."""
    if not reads:
        return None
    by_vertex: dict[str, list[VertexLoad]] = {}
    for read in reads:
        for vertex in read:
            by_vertex.setdefault(vertex.id, []).append(vertex)
    return [_summary(seen) for seen in by_vertex.values()]


def _summary(seen: list[VertexLoad]) -> OperatorLoad:
    steps = [(a, b, _counted_ran(a, b)) for a, b in zip(seen, seen[1:], strict=False)]
    counted = [(a, b, ran) for a, b, ran in steps if ran > 0]
    last = seen[-1]
    return OperatorLoad(
        vertex=last.name,
        parallelism=last.parallelism,
        busy=_within_a_second(_per_second(counted, lambda v: v.busy_ms)),
        backpressured=_within_a_second(_per_second(counted, lambda v: v.backpressured_ms)),
        idle=_within_a_second(_per_second(counted, lambda v: v.idle_ms)),
        records_in_per_s=_per_second(counted, lambda v: v.records_in),
        records_out_per_s=_per_second(counted, lambda v: v.records_out),
        measured_s=round(sum(ran for _, _, ran in counted) / 1000, 3) if counted else None,
    )


# The most points a vertex's busy share keeps over a phase: one per 1 s read up to two minutes;
# a longer phase merges neighbouring intervals, so that results.json stays small.
MAX_BUSY_POINTS = 120


@dataclass
class BusySeries:
    """One vertex's share of time busy through a scored phase (docs/results.md, "Where the time
    goes").

    Attributes:
        vertex: Its name, as in `operators[].vertex`.
        points: `[t, share]` pairs, one per interval between reads: `t` the read that ends it,
            seconds since the query started (as `timeseries[].t`); `share` its busy time over
            its run time in that interval (0-1).
    """

    vertex: str
    points: list[list[float]] = field(default_factory=list)


def busy_over_time(
    reads: Sequence[tuple[float, Sequence[VertexLoad]]], max_points: int = MAX_BUSY_POINTS
) -> list[BusySeries] | None:
    """Each vertex's share of time busy over the intervals between a phase's reads (each read
    with its time, in order), in the order the engine lists them; no points for a vertex without
    busy time; None when the phase has no read."""
    if not reads:
        return None
    by_vertex: dict[str, list[tuple[float, VertexLoad]]] = {}
    for t, read in reads:
        for vertex in read:
            by_vertex.setdefault(vertex.id, []).append((t, vertex))
    return [_busy_series(seen, max_points) for seen in by_vertex.values()]


def _busy_series(seen: list[tuple[float, VertexLoad]], max_points: int) -> BusySeries:
    """The counted intervals (`_counted_ran`, as `_summary` counts them) merged to at most
    `max_points`."""
    steps: list[tuple[float, float, float]] = []  # (t at its end, busy ms gained, ms ran)
    for (_, a), (t, b) in zip(seen, seen[1:], strict=False):
        ran = _counted_ran(a, b)
        if ran > 0 and None not in (a.busy_ms, b.busy_ms):
            steps.append((t, (b.busy_ms or 0.0) - (a.busy_ms or 0.0), ran))
    size = max(1, math.ceil(len(steps) / max_points))
    merged = [
        (group[-1][0], sum(g for _, g, _ in group), sum(r for _, _, r in group))
        for group in (steps[i : i + size] for i in range(0, len(steps), size))
    ]
    return BusySeries(seen[-1][1].name, _shares(merged))


def _shares(steps: list[tuple[float, float, float]]) -> list[list[float]]:
    """Each interval's busy share, kept to 0-1: what a busy time read high (an idle stretch
    booked late) puts over an interval's run time is carried into the next, where Flink takes
    it back, so the points' busy time still adds up to the busy time counted."""
    points: list[list[float]] = []
    carried = 0.0
    for t, gained, ran in steps:
        busy = gained + carried
        kept = min(max(busy, 0.0), ran)
        carried = busy - kept
        points.append([round(t, 3), round(kept / ran, 4)])
    return points


def _counted_ran(a: VertexLoad, b: VertexLoad) -> float:
    """How long the tasks ran from read `a` to read `b`, ms, where that interval counts; 0
    where it does not (no time known to pass, or a task restarted in it)."""
    ran = _ran(a, b)
    return ran if ran > 0 and not _restarted(a, b) else 0.0


def _ran(a: VertexLoad, b: VertexLoad) -> float:
    """How long the tasks ran from read `a` to read `b`, ms (0: unknown)."""
    return 0.0 if a.ran_ms is None or b.ran_ms is None else b.ran_ms - a.ran_ms


def _restarted(a: VertexLoad, b: VertexLoad) -> bool:
    """A record count fell between the two reads: its tasks started again from zero."""
    pairs = ((a.records_in, b.records_in), (a.records_out, b.records_out))
    return any(x is not None and y is not None and y < x for x, y in pairs)


def _per_second(
    counted: list[tuple[VertexLoad, VertexLoad, float]],
    value: Callable[[VertexLoad], float | None],
) -> float | None:
    """`value`'s advance per second of run time (ms per second for a time) over the counted
    intervals in which both reads give it; None: in none."""
    gained = ran = 0.0
    for a, b, step in counted:
        before, after = value(a), value(b)
        if before is not None and after is not None:
            gained, ran = gained + after - before, ran + step
    return round(gained / ran * 1000, 3) if ran > 0 else None


def _within_a_second(ms_per_s: float | None) -> float | None:
    """A time per second kept to 0-1000 ms: a stretch booked late may carry a few ms from before
    the span's first read into it."""
    return None if ms_per_s is None else min(max(ms_per_s, 0.0), 1000.0)


def bottleneck_of(operators: Sequence[OperatorLoad] | None) -> tuple[str | None, float | None]:
    """The busiest vertex's name and its share of time busy (0-1); (None, None) when no vertex
    has a busy figure. The first listed wins a tie (the job graph's order: upstream first)."""
    timed = [o for o in operators or () if o.busy is not None]
    if not timed:
        return None, None
    top = max(timed, key=lambda o: o.busy or 0.0)
    return top.vertex, round((top.busy or 0.0) / 1000, 4)


def bottleneck_text(vertex: str | None, busy: float | None, width: int = 48) -> str:
    """'Window[4] -> Calc[5] 92% busy' (a long name cut to `width`); '-' when there is none."""
    if vertex is None:
        return "-"
    name = vertex if len(vertex) <= width else vertex[: width - 1] + "…"
    return name if busy is None else f"{name} {busy * 100:.0f}% busy"
