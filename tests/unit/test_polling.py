"""EndWatch: when the harness polls next while a phase reads its part
(protocol/query/polling.py)."""

from __future__ import annotations

import pytest

from nexmark.protocol.query.polling import MIN_DELAY_S, PROBE_S, EndWatch


def test_probes_until_the_count_moves_then_polls_about_every_interval():
    watch = EndWatch(1.0)
    assert watch.delay(10.0, 0, 1_000_000) == PROBE_S
    assert watch.delay(10.25, 0, 1_000_000) == PROBE_S
    # 10K events/s: the end is 100 s away, so the interval.
    assert watch.delay(11.0, 10_000, 990_000) == 1.0
    assert watch.eps == pytest.approx(10_000)


def test_the_end_is_predicted_from_the_time_the_count_was_true_not_the_poll():
    watch = EndWatch(1.0)
    watch.delay(10.0, 0, 1000)
    # 500 events true at 10.5 (at 1000/s): the end is due at 11.0. Read at 10.6, poll again
    # halfway to it; read a second late (a store answering with the poll before's count), the
    # end has probably passed: the fastest poll.
    assert watch.delay(10.5, 500, 500, now=10.6) == pytest.approx(0.2)
    assert EndWatch(1.0).delay(10.0, 0, 1000) == PROBE_S
    late = EndWatch(1.0)
    late.delay(10.0, 0, 1000)
    assert late.delay(10.5, 500, 500, now=11.5) == MIN_DELAY_S


def test_the_fastest_rate_predicts_the_end():
    # A ramp-up: 100 events in the first 0.5 s, then 800 in the next 0.5 s (1600/s). Since
    # the first poll that is 900/s (0.06 s to the end); the latest 1600/s wins (0.03 s).
    watch = EndWatch(1.0)
    watch.delay(10.0, 0, 1000)
    watch.delay(10.5, 100, 900)
    assert watch.delay(11.0, 900, 100) == MIN_DELAY_S
    slow = EndWatch(1.0)
    slow.delay(10.0, 0, 10_000)
    slow.delay(10.5, 100, 9_900)
    # 9,000 left at 1,600/s: 5.6 s away, the interval.
    assert slow.delay(11.0, 1_000, 9_000) == 1.0


def test_the_phase_before_sets_the_rate_for_the_first_interval_only():
    # A phase that starts slowly (1K/s in its first 0.3 s) but ran at 1M/s before: 1M events
    # are due 1 s after it started, not in 1000 s.
    watch = EndWatch(1.0, expected_eps=1_000_000)
    watch.delay(10.0, 0, 1_000_000)
    assert watch.delay(10.3, 300, 999_700) == pytest.approx((10.3 + 0.9997 - 10.3) / 2)
    # After an interval of its own counts the phase's own rates decide.
    assert watch.delay(11.1, 1_100, 998_900) == 1.0


def test_a_count_at_the_same_time_as_the_last_still_gives_a_rate():
    # Two reads of one metric store may date the second at the first's time with a newer
    # count (the sampler keeps stamps in order): once a division by a zero rate.
    watch = EndWatch(1.0)
    watch.delay(10.0, 0, 1000)
    watch.delay(10.5, 0, 1000)
    assert watch.delay(10.5, 400, 600) == pytest.approx(0.375)


def test_a_count_below_the_first_counts_the_phase_afresh():
    # (An engine whose count falls back after a restart, below where the phase's first poll saw
    # it: the rate since that poll would be negative.)
    watch = EndWatch(1.0)
    watch.delay(10.0, 300, 700)
    watch.delay(11.0, 500, 500)
    assert watch.delay(12.0, 200, 800) == PROBE_S
    assert watch.eps is None
