"""The metric formulas of docs/protocol.md, on constructed samples (pure functions)."""

from __future__ import annotations

import statistics

import pytest

from nexmark.metrics import derive
from nexmark.metrics.sampler import Sample


def _samples(phase: str, points: list[tuple[float, int, float]]) -> list[Sample]:
    return [Sample(wall, phase, events, cpu) for wall, events, cpu in points]


def test_rates_are_per_interval_and_never_span_two_phases():
    warm = _samples("warmup", [(0, 0, 0.0), (1, 100, 1.5), (3, 500, 4.5)])
    bench = _samples("benchmark", [(10, 0, 5.0), (11, 300, 7.0)])
    rates = derive.rates(warm + bench)
    assert [(r.phase, r.throughput_eps, r.cores) for r in rates] == [
        ("warmup", 100.0, 1.5),
        ("warmup", 200.0, 1.5),
        ("benchmark", 300.0, 2.0),
    ]


def test_time_to_steady_is_the_first_sample_at_90_percent_of_the_median():
    bench = _samples(
        "benchmark", [(10, 0, 0), (11, 100, 0), (12, 600, 0), (13, 1550, 0), (14, 2550, 0)]
    )
    rates = derive.rates(bench)  # 100, 500, 950, 1000: median 725, 90% = 652.5
    assert derive.time_to_steady(t_submit=8.0, phase_rates=rates) == pytest.approx(13 - 8)
    assert derive.time_to_steady(8.0, []) is None


def test_live_growth_follows_the_line_not_two_reads():
    # 10 MB with a sawtooth of +-30% (flushes, compactions): the line is flat.
    saw = [(t, 10e6 * (1.3 if t % 2 else 0.7)) for t in range(12)]
    flat = derive.live_growth(saw)
    assert flat is not None and flat.points == 12
    assert flat.growth == pytest.approx(1.0, abs=0.08) and abs(flat.trend_per_s) < 0.01
    assert saw[-1][1] / saw[0][1] > 1.8  # what two reads would have said
    # Growing 5% of the start per second for 10 s: 1.5x, trend 5% / mean (1.25) per second.
    grows = derive.live_growth([(t, 100 * (1 + 0.05 * t)) for t in range(11)])
    assert grows.growth == pytest.approx(1.5) and grows.trend_per_s == pytest.approx(0.04)
    assert grows.start == pytest.approx(100) and grows.end == pytest.approx(150)
    # Too few points, too short a span, or nothing to grow from: no trend.
    assert derive.live_growth([(0, 1), (5, 2)]) is None
    assert derive.live_growth([(0, 1), (0.5, 2), (1.0, 3)]) is None
    assert derive.live_growth([(0, 0), (1, 0), (2, 0)]) is None


def test_state_growth_and_cost():
    assert derive.state_growth(100, 130) == pytest.approx(1.3)
    assert derive.state_growth(0, 10) is None  # no state at the cut: growth undefined
    assert derive.state_growth(100, None) is None
    # 2 cores for 10 s over 4M events: 5 core-seconds per million events
    assert derive.cost_core_s_per_million(2.0, 10.0, 4_000_000) == pytest.approx(5.0)
    assert derive.safe_div(1, 0) is None


def test_a_count_no_newer_than_the_last_ends_no_interval():
    """Samples stamped with their counts' metric times: the same time again (a dump read
    twice), or one barely newer (two dumps taken 10 ms apart), goes on to the next sample;
    cores are over the polls' times."""
    points = [(0.0, 0, 0.0, 1.0), (1.0, 100, 1.0, 2.0), (1.0, 100, 2.0, 3.0),
              (1.01, 101, 3.0, 4.0), (2.0, 300, 4.0, 5.0)]  # fmt: skip
    samples = [Sample(w, "warmup", e, cpu, polled=p) for w, e, cpu, p in points]
    rates = derive.rates(samples)
    assert [(r.wall, r.throughput_eps, r.cores) for r in rates] == [
        (1.0, 100.0, 1.0),
        (2.0, 200.0, 1.0),  # from the sample at 1.0: 200 events in 1 s, 3 CPU s over 3 s
    ]
    assert rates[1].end is samples[-1]


def test_reads_of_the_write_buffers_are_told_apart_from_reads_of_the_state():
    mib = 2**20

    def read(t, memory, files=52):  # (time; live bytes, keys, files, memtables), in MiB
        return (t, ((files + memory) * mib, 400_000 + memory, files * mib, memory * mib))

    # A state of 2 GB whose memtables hold 100-150 MB and flush between reads: the state.
    big = [read(1, 100, 2000), read(6, 150, 2000), read(11, 20, 2100), read(16, 90, 2100)]
    assert derive.only_buffered([big]) is False
    # The same without the flush: the memtables only filled, however small a share.
    assert derive.only_buffered([big[:2]]) is True
    # q8 at 200M: 9 MB of files under memtables that fill to 400 MB, one flush seen.
    q8 = [read(1, 84, 9), read(6, 256, 9), read(11, 404, 9), read(16, 281, 26)]
    assert derive.only_buffered([q8]) is True
    # Repeats, one read each (q5 at 10M), pooled: no job's memtables fell.
    assert derive.only_buffered([[read(1, 20, 200)], [read(2, 30, 200)], []]) is True
    # Nothing held in memory: the files alone are the state.
    assert derive.only_buffered([[read(t, 0) for t in (1, 2, 3)]]) is False
    # Without live bytes (Spark's exact rows) or without a memory measure, no telling.
    assert derive.only_buffered([[(1, (None, 10, mib, mib)), (2, (None, 20, mib, 0))]]) is None
    assert derive.only_buffered([[(1, (mib, 10, None, None))]]) is None
    assert derive.only_buffered([[]]) is None


def test_a_phase_pace_is_its_own_throughput_not_the_median_interval():
    # Starts at t=10 (polls at 0 before), reads 100/s with its count stalled every other
    # second (a back-pressured source), reads its last event at t=21, then waits.
    points = [(8, 0, 0), (9, 0, 0), (10, 0, 0)]
    points += [(10 + t, 100 * (t if t % 2 else t - 1), 0) for t in range(1, 12)]
    samples = _samples("warmup", [*points, (25, 1100, 0)])
    assert derive.phase_pace(samples, "warmup") == pytest.approx(100.0)
    # The median of the intervals: half of them read 0, and so do the polls before the start
    # and the wait after the end (q5's warm-up on the quick suite read a median of 0).
    assert statistics.median(r.throughput_eps for r in derive.rates(samples)) == 0.0
    assert derive.phase_pace(samples, "benchmark") is None  # no such phase
    assert derive.phase_pace(_samples("warmup", [(1, 5, 0), (2, 5, 0)]), "warmup") is None


def test_cores_are_over_the_cpu_readings_own_times():
    """q8's 1.4 s phase read 2.17 cores on 2: its end instant was the engine's checkpoint time,
    its CPU read a moment later. Cores span the readings, so they cannot exceed the machine."""
    # 2 cores busy: 2.8 CPU s between readings 1.4 s apart; the phase's own instants say 1.2 s.
    assert derive.cores(10.0, 12.8, derive.span(100.0, 101.4)) == pytest.approx(2.0)
    assert derive.cores(10.0, 12.8, 1.2) == pytest.approx(2.33, abs=0.01)  # the old measure
    assert derive.span(5.0, 5.0) is None and derive.span(None, 5.0) is None
    assert derive.cores(None, 1.0, 1.0) is None
    # An interval's cores: CPU over the readings' times, not over the counts' metric times.
    a = Sample(0.0, "benchmark", 0, 0.0, polled=0.5, cpu_at=0.6)
    b = Sample(1.0, "benchmark", 100, 2.0, polled=1.5, cpu_at=1.6)
    assert derive.rates([a, b])[0].cores == pytest.approx(2.0)
