"""The watermark lag compares the data and the watermark at one time, even when the engine read
them from two metric dumps a second apart (`protocol.scoring.figures.timeseries`)."""

from __future__ import annotations

from pathlib import Path

from nexmark.metrics.sampler import Sample
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.scoring.figures import timeseries

# 1 event per ms of event time from 0: the data's time is its count, in ms.
PARTS = PhaseParts(
    Path("w"), Path("b"), 10**9, 10**9, lambda phase, events: events - 1 if events else None
)
RATE = 1_000_000  # events a second: 1,000 s of event time per second


def lags(samples: list[Sample]) -> list[float | None]:
    return [p.watermark_lag_s for p in timeseries(samples, 0.0, PARTS) if p.events]


def test_a_watermark_read_from_a_newer_dump_is_compared_with_the_count_of_its_time():
    # The count is true at wall (1, 2, 3, 4 s); the watermark, read right after it, came from
    # a dump 0.5 s newer and stands 5 s of event time behind the data of its own time.
    samples = [Sample(0.0, "warmup", 0, 0.0)]
    for wall in (1.0, 2.0, 3.0, 4.0):
        at = wall + 0.5
        samples.append(
            Sample(wall, "warmup", int(wall * RATE), wall, int(at * RATE) - 5001, watermark_at=at)
        )
    assert lags(samples) == [5.0, 5.0, 5.0, 5.0]
    # Taken as of the count's time, the same reads show the watermark 495 s ahead of the data.
    undated = [Sample(s.wall, s.phase, s.events, s.cpu_s, s.watermark_ms) for s in samples]
    assert lags(undated) == [-495.0] * 4


def test_an_undated_watermark_is_compared_with_its_own_sample():
    samples = [Sample(0.0, "warmup", 0, 0.0), Sample(1.0, "warmup", RATE, 1.0, RATE - 4001)]
    assert lags(samples) == [4.0]
