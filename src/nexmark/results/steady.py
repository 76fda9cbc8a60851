"""The state verdict of a scored phase, in one place: the growth bound, when two sizes judge
nothing ("not judged: ..."), why a state is not steady, when a restored state a processing-time
TTL had expired decides it, when a phase is too short to resolve and when a further repeat
would restore too old a state. The protocol judges with it (`protocol.scoring.record`,
`protocol.query.query_run`); the tables and the consistency check read its bound. It sits with the
results, below the protocol, so that both may read it (tests/unit/test_import_rules.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from nexmark.durations import format_seconds
from nexmark.results.figures import CHECKPOINT_MEASURE, LIVE_BYTES_MEASURE, LOGICAL_MEASURE
from nexmark.workload import queries

STATE_GROWTH_LIMIT = 1.2  # the proposal's bound: above it the state is "not steady"


@dataclass(frozen=True)
class StateVerdict:
    """A phase's `state_steady` (None: no growth, or not judged) and `steady_reason`.

    judged: False when the two sizes fall at different points of the state's windows' cycle;
        the record then keeps no growth and no measure (the two sizes stay recorded)."""

    steady: bool | None
    reason: str | None
    judged: bool = True


def judge(
    query: str,
    growth: float | None,
    measure: str | None,
    why_grew: Callable[[], str | None],
    span_s: float | None,
    event_rate: float | None,
    restored_age_s: float | None,
    state_ttl_s: float | None,
) -> StateVerdict:
    """The state verdict of one phase: steady when its growth (on `measure`) is within the
    bound, with `why_grew` saying why not (`steady_reason` and its notes). Two sizes at
    different points of a window-bound state's cycle judge nothing (`unaligned_reason`, over
    the benchmark part's `span_s` of event time). A processing-time TTL that had expired too
    much of the restored state by the first read (`expired_reason`) decides it whatever the
    growth."""
    if measure in (CHECKPOINT_MEASURE, LOGICAL_MEASURE):
        unaligned = unaligned_reason(query, span_s, event_rate)
        if unaligned:
            return StateVerdict(None, unaligned, judged=False)
    steady = None if growth is None else growth <= STATE_GROWTH_LIMIT
    reason = why_grew()
    expired = expired_reason(query, restored_age_s, state_ttl_s)
    return StateVerdict(False, expired) if expired else StateVerdict(steady, reason)


# State held by a processing-time TTL steadies after a few TTLs: this many.
TTLS_TO_STEADY = 3


def holds_state_by_ttl(query: str) -> bool:
    """Queries whose state grows without bound unless a TTL holds it (queries.md: 'grows').

    Pattern state (MATCH_RECOGNIZE's partial matches) is not one: no state TTL expires it."""
    kind = queries.get(query).state
    return "grows" in kind and not kind.startswith("pattern")


def expired_at_restore(query: str, state_ttl_s: float | None, age_s: float | None) -> float | None:
    """The share of a restored state that its processing-time TTL had expired by the first
    benchmark read (0..1), for queries whose state a TTL holds; None for the others.

    The TTL's clock is the wall clock and keeps running while the job is stopped: an entry
    last written `a` seconds before the cut expires `ttl - a` seconds later, so after `age_s`
    seconds from the cut about `age_s / ttl` of a steady state (written evenly over its last
    TTL) has expired. The phase then refills that share instead of running at steady size."""
    if not holds_state_by_ttl(query) or not state_ttl_s or age_s is None:
        return None
    return min(1.0, max(0.0, age_s) / state_ttl_s)


def _expiry(query: str, state_ttl_s: float | None, age_s: float | None, limit: float):
    """How much of a state `age_s` old a TTL had expired ("all", "about 40%") and the TTL that
    would keep it within the growth bound; None when it is within (`limit - 1`)."""
    share = expired_at_restore(query, state_ttl_s, age_s)
    if share is None or age_s is None or state_ttl_s is None or share <= limit - 1:
        return None
    words = "all" if share >= 1 else f"about {share:.0%}"
    return words, format_seconds(math.ceil(age_s / (limit - 1)))


def expired_reason(
    query: str, age_s: float | None, state_ttl_s: float | None, limit: float = STATE_GROWTH_LIMIT
) -> str | None:
    """Why a phase whose restored state a TTL had partly expired is not steady (None: under the
    growth limit's share, `limit - 1`)."""
    found = _expiry(query, state_ttl_s, age_s, limit)
    if found is None:
        return None
    words, keeps = found
    return (
        f"the restored state was {age_s:.1f} s old at the first benchmark read "
        f"(state TTL {format_seconds(state_ttl_s)}): the processing-time TTL had expired "
        f"{words} of what the warm-up built, so the phase refilled it; a TTL of at least "
        f"{keeps} keeps it"
    )


def repeat_skip_reason(
    query: str, age_s: float | None, state_ttl_s: float | None, limit: float = STATE_GROWTH_LIMIT
) -> str | None:
    """Why no further repeat restores a phase checkpoint `age_s` old (None: one may)."""
    found = _expiry(query, state_ttl_s, age_s, limit)
    if found is None:
        return None
    words, keeps = found
    return (
        f"the phase checkpoint is {age_s:.0f} s old, and the processing-time state TTL "
        f"({format_seconds(state_ttl_s)}) has expired {words} of its state (over "
        f"{limit - 1:.0%}); a state TTL of at least {keeps} keeps more repeats"
    )


# The watermark trails the newest event by the source's delay (4 s) and the engine's own slack
# (Flink's 2 s mini-batch boundary), both event time, and by what the pipeline carries in wall
# time (periodic watermarks, network buffers, the metric dumps both are read from, a loaded
# machine's scheduling): under a second measured quiet, two allowed, which at speed is many
# event-time seconds (1.7M events/s at the default 100K events per event-time second is 17 a
# second). A lag within the bound is the watermark following the data; above it, the
# watermark held windows open.
WATERMARK_LAG_EVENT_S = 10.0
WATERMARK_LAG_WALL_S = 2.0


def watermark_lag_bound_s(event_time_speed: float | None) -> float:
    """Event-time seconds the watermark may trail the data and still follow it, in a phase that
    reads `event_time_speed` seconds of event time a wall second (None: unknown, the fixed part)."""
    return WATERMARK_LAG_EVENT_S + WATERMARK_LAG_WALL_S * (event_time_speed or 0.0)


# A scored phase the metrics can resolve: at least this many 1 s samples (rates, cores, live
# state, the watermark) within its Time, and its end checkpoint (inside Time) at most this
# share of it. A shorter phase's throughput is mostly its fixed costs and its reads' timing.
MIN_SCORED_PHASE_S = 5.0
MAX_END_CHECKPOINT_SHARE = 0.25


def short_phase_reason(time_s: float | None, end_checkpoint_s: float | None) -> str | None:
    """Why a scored phase is too short for its figures to mean much (None: it is not)."""
    if time_s is None:
        return None
    if time_s < MIN_SCORED_PHASE_S:
        return (
            f"the scored phase lasted {time_s:.1f} s, under {MIN_SCORED_PHASE_S:.0f} s: too few "
            "one-second samples to resolve its rates, cores and state; more events resolve it"
        )
    if end_checkpoint_s is not None and end_checkpoint_s > MAX_END_CHECKPOINT_SHARE * time_s:
        return (
            f"its end checkpoint took {end_checkpoint_s:.1f} s of the phase's {time_s:.1f} s "
            f"(over {MAX_END_CHECKPOINT_SHARE:.0%}): the throughput measures the checkpoint "
            "as much as the query; more events resolve it"
        )
    return None


def short_ceiling_reason(time_s: float | None) -> str | None:
    """Why the source ceiling's timed read is too short to resolve (None: it is not), by the
    bound of the scored phases it is compared with: a read of a second or two is mostly its
    fixed costs (its first reads, its end checkpoint) and understates the ceiling."""
    if time_s is None or time_s >= MIN_SCORED_PHASE_S:
        return None
    return (
        f"the timed read lasted {time_s:.1f} s, under {MIN_SCORED_PHASE_S:.0f} s: too short to "
        "resolve the source's speed; more events resolve it"
    )


# Two sizes of a window-bound state judge it only at the same point of its windows' cycle:
# the cut and the end may be this share of a cycle apart and still count as the same point.
CYCLE_TOLERANCE = 0.1


def cycle_offset(span_s: float, cycle_s: float) -> float:
    """How far apart in their windows' cycle two points `span_s` event-time seconds apart are,
    as a share of the cycle (0: the same point; 0.5: the farthest)."""
    share = (span_s / cycle_s) % 1.0
    return min(share, 1.0 - share)


def unaligned_reason(query: str, span_s: float | None, event_rate: float | None) -> str | None:
    """Why two sizes (at the cut and at the end) cannot judge a window-bound state whose cycle
    the benchmark part does not span whole (None: they can, or the state has no cycle).

    A tumbling window's state fills from empty to a window's events and empties when the
    watermark closes it: q8's state at 10M events (the part spans 25 s of 10 s windows) is
    half a window at the cut and a whole one at the end, a ratio of 2 that says where the cut
    fell, not that the state grows."""
    spec = queries.get(query)
    if spec.processing_cycle_s is not None:  # the cut and the end fall where the clock is
        return (
            f"not judged: its state fills and empties with its processing-time windows every "
            f"{spec.processing_cycle_s:g} s of wall time, and two sizes taken at moments the "
            "run does not align with that cycle cannot be compared"
        )
    cycle = spec.window_cycle_s
    if cycle is None or span_s is None or cycle_offset(span_s, cycle) <= CYCLE_TOLERANCE:
        return None
    events = f" ({cycle * event_rate:,.0f} events at this dataset's rate)" if event_rate else ""
    return (
        f"not judged: its state fills and empties with its windows every {cycle:g} s of event "
        f"time, and the benchmark part spans {span_s:g} s, so the cut and the end fall at "
        f"different points of that cycle and their sizes cannot be compared; a dataset whose "
        f"benchmark part spans whole cycles can be judged (a multiple of {cycle:g} s{events})"
    )


def steady_reason(
    query: str,
    growth: float | None,
    measure: str | None,
    limit: float,
    warmup_s: float | None,
    state_ttl_s: float | None,
    watermark_lag_max_s: float | None,
    warmup_eps: float | None = None,
    benchmark_eps: float | None = None,
    event_time_speed: float | None = None,
) -> str | None:
    """Why a query's state grew more than `limit` in the benchmark phase; None when it did not.

    Args:
        query: The query.
        growth: The state's growth over the benchmark phase (results.query_result.QueryResult).
        measure: What it was judged on (`state_measure`).
        limit: The growth bound (1.2).
        warmup_s: Wall time of the warm-up phase.
        state_ttl_s: The job's state TTL (None: none).
        watermark_lag_max_s: Largest lag of the watermark behind the data in the benchmark phase.
        warmup_eps, benchmark_eps: The two phases' events per second (`derive.phase_pace`).
        event_time_speed: Event-time seconds the phase read a wall second: its throughput over
            the dataset's events per event-time second (None: unknown).
    """
    if growth is None or growth <= limit:
        return None
    if measure in (None, CHECKPOINT_MEASURE, LOGICAL_MEASURE):  # two points, no live trend
        grew = f"state grew {growth:.2f}x in the benchmark phase ({measure or CHECKPOINT_MEASURE})"
    else:
        grew = f"state grew {growth:.2f}x over the benchmark phase ({measure})"
    kind = queries.get(query).state
    if holds_state_by_ttl(query):
        if state_ttl_s is None:
            return f"{grew}: no state TTL, and this query's state ({kind}) grows with the data"
        if warmup_s is not None and warmup_s < TTLS_TO_STEADY * state_ttl_s:
            return (
                f"warm-up lasted {warmup_s:.0f} s, under {TTLS_TO_STEADY} state TTLs "
                f"({format_seconds(state_ttl_s)}): state could not reach steady"
            )
        faster = (benchmark_eps or 0) / warmup_eps if warmup_eps else 0
        if faster > 1 + (limit - 1) / 2:  # the processing-time TTL held more keys
            return (
                f"{grew}, and it ran {faster:.2f}x faster than the warm-up "
                f"({benchmark_eps:,.0f} vs {warmup_eps:,.0f} events/s): a processing-time TTL "
                f"({format_seconds(state_ttl_s)}) holds the keys of its last "
                f"{format_seconds(state_ttl_s)}, so a faster phase holds more"
            )
    if kind.startswith("pattern") and "grows" in kind:
        return (
            f"{grew}: partial matches that never complete stay in its pattern state, which a "
            "state TTL does not expire"
        )
    held = _windows_held(kind, watermark_lag_max_s, event_time_speed)
    if held:
        return f"{grew}: {held}"
    lasted = f"the warm-up lasted {warmup_s:.0f} s" if warmup_s is not None else "unknown warm-up"
    ttl = f", state TTL {format_seconds(state_ttl_s)}" if state_ttl_s else ", no state TTL"
    return f"{grew} although {lasted}{ttl} ({kind}): the state itself is not steady"


def _windows_held(kind: str, lag_max_s: float | None, speed: float | None) -> str | None:
    """Why a windowed query's state grew when its watermark lagged the data by more than it
    trails when it follows them (`watermark_lag_bound_s`); None when it did not."""
    if "window" not in kind or lag_max_s is None:
        return None
    bound = watermark_lag_bound_s(speed)
    if lag_max_s <= bound:
        return None
    at_speed = f", over the {bound:.0f} s it trails at this phase's speed" if speed else ""
    return (
        f"the watermark lagged the data by up to {lag_max_s:.0f} s of event time{at_speed}, "
        "holding windows open"
    )


def reads_note(
    measure: str | None,
    keys_growth: float | None,
    live_read: bool,
    unflushed: bool | None,
    pooled_repeats: int | None,
    time_s: float | None,
    min_points: int,
) -> str:
    """What a not-steady reason adds about the live reads ("": nothing): that the entries
    (`keys_growth`) stayed within the bound where the live bytes grew, or why two sizes stood in
    for a live trend: no live read in the phase (`live_read`), reads of the store's write
    buffers (`unflushed`), or under `min_points` refreshed values (`derive.LIVE_MIN_POINTS`) in
    the phase's `time_s` or in its `pooled_repeats` repeats' phases."""
    if measure == LIVE_BYTES_MEASURE and keys_growth and keys_growth <= STATE_GROWTH_LIMIT:
        return (
            f" (its entries grew {keys_growth:.2f}x: the bytes include writes not yet flushed, "
            "the store's memtables, which hold deleted and overwritten entries too)"
        )
    if measure not in (CHECKPOINT_MEASURE, LOGICAL_MEASURE):
        return ""
    where = f"{pooled_repeats} repeats' phases" if pooled_repeats else f"{time_s:.0f} s"
    if not live_read:
        return " (the engine measured no live state)"
    if unflushed:
        return (
            f" (the live state's reads in {where} were the store's memtables, writes "
            "not yet flushed with their overwrites and deletes: not a measure of the state)"
        )
    return (
        f" (the live state's reads in {where} drew no trend: under {min_points} refreshed values)"
    )
