"""The CEP reference matcher (verify/patterns.py) on constructed sequences, every expected match
worked out by hand: each pattern's edge cases (ties in time, equal prices, the WITHIN bound,
a completed match held behind an earlier partial one, the watermark, a match across the phase
boundary) and the way the reference reads the bids (ties in time ordered by price)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from nexmark.engines.semantics import IntegerAverage, SideLookup, WindowFiring
from nexmark.verify.patterns import PATTERNS, Match, match_partition
from nexmark.verify.reference import EventData, events_from_rows, reference
from nexmark.workload import queries

# The rules these hand-made cases are written for (Flink's), stated: the reference assumes none.
RULES = dict(
    window_firing=WindowFiring.LAST_MS,
    integer_average=IntegerAverage.TRUNCATED,
    side_lookup=SideLookup.VERSIONED_AT_WATERMARK,
)

END = 10**12  # a watermark past every row


def run(query, rows, watermark=END):
    return match_partition(PATTERNS[query], rows, watermark)


def values(matches):
    return [m.values for m in matches]


# -- cep0: V shapes (the reference's: a rise above the fall before the last one), AFTER MATCH
# SKIP TO LAST rising row ----


def test_cep0_two_falls_then_a_rise_above_the_fall_before_the_last():
    rows = [(0, 10), (1, 8), (2, 6), (3, 9)]  # 9 > 8: the fall before the last one
    assert run("cep0", rows) == [Match((0, 2, 3), 3)]


def test_cep0_a_rise_above_the_last_fall_only_is_no_match():
    # 7 rises above the bottom (6) but not above the fall before it (8): no V, where a rise
    # above the last fall alone (LAST(V_FALL.price)) would have matched (0, 2, 3).
    assert run("cep0", [(0, 10), (1, 8), (2, 6), (3, 7)]) == []
    # Rising exactly to the fall before the last one is not above it either.
    assert run("cep0", [(0, 10), (1, 8), (2, 6), (3, 8)]) == []


def test_cep0_one_fall_is_not_enough():
    # After a single fall the offset LAST(V_FALL.price, 1) is null: no bid is a rise, however
    # high (12 is above the start too).
    assert run("cep0", [(0, 10), (1, 8), (2, 9)]) == []
    assert run("cep0", [(0, 10), (1, 8), (2, 12)]) == []


def test_cep0_the_rise_is_judged_against_the_last_two_falls_of_a_long_fall():
    # Falls 9, 7, 5, 3: a rise must beat 5 (the fall before the bottom), not 9 or 7.
    rows = [(0, 10), (1, 9), (2, 7), (3, 5), (4, 3), (5, 6)]
    assert values(run("cep0", rows)) == [(0, 4, 5)]


def test_cep0_the_rising_row_starts_the_next_match():
    # 10 8 6 9 | 9 7 5 12: the second V starts at the first V's rising bid (SKIP TO LAST), which
    # SKIP PAST LAST ROW would have skipped.
    rows = [(0, 10), (1, 8), (2, 6), (3, 9), (4, 7), (5, 5), (6, 12)]
    assert values(run("cep0", rows)) == [(0, 2, 3), (3, 5, 6)]


def test_cep0_equal_prices_neither_fall_nor_rise():
    # The 10 -> 10 step ends the first attempt; the second 10 starts the V.
    assert values(run("cep0", [(0, 10), (1, 10), (2, 8), (3, 6), (4, 9)])) == [(1, 3, 4)]
    # A flat step after the falls ends that attempt, and 8 -> 6 -> 9 has one fall: no V.
    assert run("cep0", [(0, 10), (1, 8), (2, 8), (3, 6), (4, 9)]) == []


def test_cep0_no_match_without_a_fall_or_without_a_rise():
    assert run("cep0", [(0, 1), (1, 2), (2, 3)]) == []
    assert run("cep0", [(0, 3), (1, 2), (2, 1)]) == []


def test_cep0_waits_for_the_watermark_to_reach_the_rising_row():
    rows = [(0, 10), (1, 8), (2, 6), (3, 9)]
    assert run("cep0", rows, watermark=2) == []
    assert values(run("cep0", rows, watermark=3)) == [(0, 2, 3)]  # time <= watermark


# -- cep1 / cep2: cheap runs, SKIP PAST LAST ROW / SKIP TO NEXT ROW ----


def test_cep1_a_run_ended_by_the_bid_that_lifts_the_average():
    # 5000, 6000 (average 5500), then 30000 lifts it to 13666: the run is the first two bids.
    rows = [(0, 5000), (1, 6000), (2, 30000), (3, 1000), (4, 50000)]
    # (start, end, sum, count); the next match starts after the ending bid.
    assert values(run("cep1", rows)) == [(0, 1, 11000, 2), (3, 3, 1000, 1)]


def test_cep1_an_average_of_exactly_10000_ends_the_run():
    assert values(run("cep1", [(0, 9000), (1, 11000)])) == [(0, 0, 9000, 1)]


def test_cep1_an_expensive_bid_starts_nothing():
    assert run("cep1", [(0, 10000), (1, 20000), (2, 1)]) == []


def test_a_completed_match_waits_behind_an_earlier_partial_one():
    # From 1000: 1000 9000 12000 stay under 10,000 on average (7333); 20000 ends it (10500).
    # From 9000: 9000 then 12000 (10500) ends it at the third bid, but the run from 1000 is
    # still alive then, so that match waits; when the run from 1000 ends (fourth bid):
    rows = [(0, 1000), (1, 9000), (2, 12000), (3, 20000)]
    # cep1 skips past the emitted match's last row: the waiting match is void.
    assert run("cep1", rows) == [Match((0, 2, 22000, 3), 3)]
    # cep2 resumes after its first row: the waiting match is emitted too, released at 3 (not 2).
    assert run("cep2", rows) == [Match((0, 2, 22000, 3), 3), Match((1, 1, 9000, 1), 3)]


def test_cep2_overlapping_matches_one_per_start():
    rows = [(0, 2000), (1, 4000), (2, 40000)]
    assert values(run("cep2", rows)) == [(0, 1, 6000, 2), (1, 1, 4000, 1)]


def test_partial_matches_at_the_end_are_dropped():
    # The run from 1000 never ends, so nothing is emitted, not even the match from 9000
    # that completed behind it.
    rows = [(0, 1000), (1, 9000), (2, 12000)]
    assert run("cep1", rows) == []
    assert run("cep2", rows) == []


# -- cep3: a drop within 5 s ----


def test_cep3_held_bids_then_a_drop():
    # 980 and 960 stay above 1000 - 50; 900 is below it: a drop of 100.
    rows = [(0, 1000), (100, 980), (200, 960), (300, 900)]
    assert run("cep3", rows) == [Match((300, 100), 300)]


def test_cep3_a_price_of_exactly_first_minus_50_ends_the_attempt():
    rows = [(0, 1000), (1, 950), (2, 890)]
    # From 1000: 950 is neither above nor below 950. From 950: 890 < 900, a drop of 60.
    assert values(run("cep3", rows)) == [(2, 60)]


def test_cep3_within_is_strict():
    assert values(run("cep3", [(0, 1000), (4999, 900)])) == [(4999, 100)]
    assert run("cep3", [(0, 1000), (5000, 900)]) == []


def test_cep3_a_timeout_releases_the_match_waiting_behind_it():
    # From 1000 at 0: 2000 and 1900 are held. From 2000 at 1: 1900 < 1950 completes at 2, but
    # waits behind the attempt from 0, which times out when the watermark reaches 5000.
    rows = [(0, 1000), (1, 2000), (2, 1900)]
    assert run("cep3", rows, watermark=4999) == []
    assert run("cep3", rows, watermark=5000) == [Match((2, 100), 5000)]


# -- through the reference: ties, columns, the phase boundary ----

BASE = datetime(2024, 1, 1, 12, 0, 0)


def bid(auction, bidder, price, seconds):
    return {"event_type": 2, "b_auction": auction, "b_bidder": bidder, "b_price": price,
            "b_channel": "Google", "b_url": "https://x/a/b/c/i.htm", "extra": "",
            "date_time": BASE + timedelta(seconds=seconds)}  # fmt: skip


def at(seconds):
    return BASE + timedelta(seconds=seconds)


def events(rows, watermark_s, segments=None):
    return EventData(events_from_rows(rows, segments), at(watermark_s), **RULES)


def test_ties_in_time_are_ordered_by_price():
    # 11 arrives before 6 in the same millisecond: ordered by price the bids read 12, 10, 6, 11
    # (a V: 11 > 10); in arrival order they would read 12, 10, 11, 6 (no rise).
    rows = [bid(1, 7, 12, 0), bid(1, 7, 10, 1), bid(1, 7, 11, 2), bid(1, 7, 6, 2)]
    ref = reference("cep0", events(rows, 10))
    assert ref.rows == [(1, 7, at(0), at(2), at(2))]


def test_partitions_are_auction_and_bidder():
    # Bidder 7's bids make a V; bidder 8's bid between them would break it in one sequence.
    rows = [bid(1, 7, 10, 0), bid(1, 7, 8, 1), bid(1, 7, 6, 2), bid(1, 8, 7, 3), bid(1, 7, 9, 4)]
    assert reference("cep0", events(rows, 10)).rows == [(1, 7, at(0), at(2), at(4))]
    # The same prices split over two bidders make no V.
    rows = [bid(1, 7, 10, 0), bid(1, 8, 8, 1), bid(1, 7, 6, 2), bid(1, 7, 9, 4)]
    assert reference("cep0", events(rows, 10)).rows == []


def test_a_match_across_the_phase_boundary():
    # Segment 0 is the warm-up file, segment 1 the benchmark file: the reference reads one
    # stream, so a V that starts in the warm-up and rises in the benchmark is one match.
    rows = [bid(1, 7, 10, 0), bid(1, 7, 8, 1), bid(1, 7, 6, 2), bid(1, 7, 9, 20)]
    ref = reference("cep0", events(rows, 30, segments=[0, 0, 0, 1]))
    assert ref.rows == [(1, 7, at(0), at(2), at(20))]


def test_matches_released_within_the_watermark_slack_are_optional():
    rows = [bid(1, 7, 10, 0), bid(1, 7, 8, 1), bid(1, 7, 6, 2), bid(1, 7, 9, 9)]
    data = EventData(events_from_rows(rows), at(10), watermark_slack_ms=2000, **RULES)
    ref = reference("cep0", data)
    assert ref.rows == []
    assert ref.optional == [(int((at(9) - datetime(1970, 1, 1)).total_seconds() * 1000),
                             (1, 7, at(0), at(2), at(9)))]  # fmt: skip


def test_cep1_average_is_truncated():
    data = events([bid(1, 7, 5000, 0), bid(1, 7, 5001, 1), bid(1, 7, 90000, 2)], 10)
    assert reference("cep1", data).rows == [(1, 7, at(0), at(1), 5000)]


@pytest.mark.parametrize("query", queries.CEP, ids=lambda q: q.name)
def test_cep_columns_align_with_the_query_registry(query):
    data = events([bid(1, 7, 10, 0)], 10)
    assert reference(query.name, data).columns == query.columns
