"""Reference matches of the CEP queries (cep0..cep3), computed in Python (DuckDB has no
MATCH_RECOGNIZE).

Written from the queries' semantics and Flink's documented and observed rules
(docs/verification.md, "The CEP queries"), not from the engine's code:

- Rows are matched per (auction, bidder) in event time; equal times are ordered by price (the
  queries' secondary ORDER BY key). Rows equal in both are identical for every pattern and every
  output column, so their order does not matter.
- A row is matched once the watermark has reached it (its time <= the watermark); rows above the
  final watermark are never matched.
- Every row may start a match. Each of the four patterns has at most one live branch per start
  row (greedy quantifiers whose exit condition excludes the loop's).
- A completed match is emitted only when no partial match that started earlier is still alive
  (the earlier one may still complete and make it void); then the skip strategy prunes
  the partial and completed matches that the emitted match skips.
- WITHIN: a partial match is dropped when time - its first row's time >= the bound, at a row's
  time or at the watermark; a completed match waiting behind it may then be emitted.
- At the end (the final watermark), partial matches are dropped unreported, and so are the
  completed matches still waiting behind one.

Each emitted match keeps the watermark at which it was released (the time of the row that
released it, or the start + WITHIN of the partial match whose timeout did), so that matches
released within the engine's watermark slack can be optional.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

Row = tuple[int, int]  # (time in epoch ms, price): all a pattern and its outputs read


class Skip(enum.Enum):
    """Where matching resumes after a match (AFTER MATCH SKIP ...)."""

    PAST_LAST_ROW = "past last row"  # drop partial matches started at or before its last row
    TO_NEXT_ROW = "to next row"  # drop partial matches started at or before its first row
    TO_LAST = "to last"  # drop partial matches started before its last row (the named one)


class Step(enum.Enum):
    EXTEND = "extend"
    COMPLETE = "complete"
    DIE = "die"


@dataclass
class Partial:
    """One partial match: its first row's position and time, the rows it holds, and what the
    pattern keeps about them."""

    start: int  # position of its first row in the partition (processing order)
    start_ms: int
    rows: list[int] = field(default_factory=list)  # positions of its rows
    memo: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Pattern:
    """A pattern as three functions over a partition's rows.

    Attributes:
        begin: Whether a row may start a match (and the memo it starts with), or None.
        step: The next row's effect on a partial match: EXTEND (the row joins it), COMPLETE (the
            row joins it and ends the match) or DIE.
        output: The measures of a completed match (its rows' positions).
        skip: The skip strategy; with TO_LAST, `last_of` gives the position matching resumes at.
        within_ms: The WITHIN bound (None: no bound).
    """

    begin: Callable[[Sequence[Row], int], dict | None]
    step: Callable[[Sequence[Row], Partial, int], Step]
    output: Callable[[Sequence[Row], Partial], tuple]
    skip: Skip
    last_of: Callable[[Partial], int] | None = None
    within_ms: int | None = None


@dataclass(frozen=True)
class Match:
    """A match's measures and the watermark (epoch ms) at which it was emitted."""

    values: tuple
    released_ms: int


def match_partition(pattern: Pattern, rows: Sequence[Row], watermark_ms: int) -> list[Match]:
    """Every match emitted on one partition's rows (sorted by time, then price) once the
    watermark has reached `watermark_ms`."""
    partials: list[Partial] = []  # in start order
    completed: list[Partial] = []  # in start order
    emitted: list[Match] = []

    def release(clock_ms: int) -> None:
        # Emit completed matches that no earlier-started partial match can still void.
        while completed and (not partials or completed[0].start <= partials[0].start):
            done = completed.pop(0)
            emitted.append(Match(pattern.output(rows, done), clock_ms))
            bound = _prune_bound(pattern, done)
            partials[:] = [p for p in partials if not bound(p.start)]
            completed[:] = [c for c in completed if not bound(c.start)]

    def expire(now_ms: int) -> None:
        if pattern.within_ms is None:
            return
        timed_out = [p for p in partials if now_ms - p.start_ms >= pattern.within_ms]
        for p in timed_out:
            if not any(q is p for q in partials):
                continue  # pruned by a match released by an earlier timeout
            partials[:] = [q for q in partials if q is not p]
            # The earliest watermark at which this timeout is seen.
            release(p.start_ms + pattern.within_ms)

    for i, (time_ms, _price) in enumerate(rows):
        if time_ms > watermark_ms:
            break
        expire(time_ms)
        alive: list[Partial] = []
        for p in partials:
            step = pattern.step(rows, p, i)
            if step is Step.DIE:
                continue
            p.rows.append(i)
            if step is Step.COMPLETE:
                completed.append(p)
            else:
                alive.append(p)
        memo = pattern.begin(rows, i)
        if memo is not None:
            alive.append(Partial(i, time_ms, [i], memo))
        partials[:] = alive
        completed.sort(key=lambda c: c.start)
        release(time_ms)
    expire(watermark_ms)
    return emitted


def _prune_bound(pattern: Pattern, done: Partial) -> Callable[[int], bool]:
    """Which starts the emitted match `done` skips."""
    if pattern.skip is Skip.PAST_LAST_ROW:
        last = done.rows[-1]
        return lambda start: start <= last
    if pattern.skip is Skip.TO_NEXT_ROW:
        first = done.rows[0]
        return lambda start: start <= first
    resume = pattern.last_of(done) if pattern.last_of else done.rows[-1]
    return lambda start: start < resume


def match_all(
    pattern: Pattern, partitions: Iterable[tuple[tuple, Sequence[Row]]], watermark_ms: int
) -> list[tuple[tuple, Match]]:
    """Matches of every partition: (partition key, match)."""
    return [
        (key, m) for key, rows in partitions for m in match_partition(pattern, rows, watermark_ms)
    ]


# -- the four patterns ---------------------------------------------------------------------------

CHEAP_AVERAGE = 10_000  # cep1, cep2: the running average stays under this
DROP = 50  # cep3: a drop is a price below the first price minus this
DROP_WITHIN_MS = 5_000  # cep3: WITHIN INTERVAL '5' SECOND


def _v_begin(rows: Sequence[Row], i: int) -> dict:
    return {"falls": []}  # positions of the falling rows so far


def _v_step(rows: Sequence[Row], p: Partial, i: int) -> Step:
    # START FALL+ RISE, strict contiguity (the reference runner's cep q0): FALL below the row
    # before (the start, or the previous fall); RISE above the fall before the last one
    # (`LAST(V_FALL.price, 1)`), so only after two falls or more. The two exclude each other:
    # a fall is below the last fall, which is below the one before.
    price, before = rows[i][1], rows[p.rows[-1]][1]
    falls = p.memo["falls"]
    if price < before:
        falls.append(i)
        return Step.EXTEND
    if len(falls) >= 2 and price > rows[falls[-2]][1]:
        return Step.COMPLETE
    return Step.DIE


def _v_output(rows: Sequence[Row], p: Partial) -> tuple:
    return (rows[p.rows[0]][0], rows[p.memo["falls"][-1]][0], rows[p.rows[-1]][0])


def _cheap_begin(rows: Sequence[Row], i: int) -> dict | None:
    price = rows[i][1]
    return {"sum": price, "count": 1, "last": i} if price < CHEAP_AVERAGE else None


def _cheap_step(rows: Sequence[Row], p: Partial, i: int) -> Step:
    # CHEAP+ ENDING, CHEAP greedy: a row that keeps the average (with it) under the bound is
    # CHEAP; any other row is ENDING (a greedy loop's exit excludes the loop's condition).
    total, count = p.memo["sum"] + rows[i][1], p.memo["count"] + 1
    if total < CHEAP_AVERAGE * count:  # AVG < bound, truncated or not (prices are >= 0)
        p.memo.update(sum=total, count=count, last=i)
        return Step.EXTEND
    return Step.COMPLETE


def _cheap_output(rows: Sequence[Row], p: Partial) -> tuple:
    # The average as (sum, count): the reference divides as the engine's AVG does (Flink's
    # AVG of a BIGINT is a BIGINT, truncated).
    return (rows[p.rows[0]][0], rows[p.memo["last"]][0], p.memo["sum"], p.memo["count"])


def _drop_begin(rows: Sequence[Row], i: int) -> dict:
    return {}


def _drop_step(rows: Sequence[Row], p: Partial, i: int) -> Step:
    # FIRST_BID HELD* DROPPED: HELD above first - 50, DROPPED below it; equal kills the match.
    first, price = rows[p.start][1], rows[i][1]
    if price > first - DROP:
        return Step.EXTEND
    if price < first - DROP:
        return Step.COMPLETE
    return Step.DIE


def _drop_output(rows: Sequence[Row], p: Partial) -> tuple:
    return (rows[p.rows[-1]][0], rows[p.start][1] - rows[p.rows[-1]][1])


PATTERNS: dict[str, Pattern] = {
    "cep0": Pattern(_v_begin, _v_step, _v_output, Skip.TO_LAST, last_of=lambda p: p.rows[-1]),
    "cep1": Pattern(_cheap_begin, _cheap_step, _cheap_output, Skip.PAST_LAST_ROW),
    "cep2": Pattern(_cheap_begin, _cheap_step, _cheap_output, Skip.TO_NEXT_ROW),
    "cep3": Pattern(
        _drop_begin, _drop_step, _drop_output, Skip.PAST_LAST_ROW, within_ms=DROP_WITHIN_MS
    ),
}
