"""Flink's samples are stamped with the time of the metric dump their count comes from.

The REST API answers from a metric store that each request only asks to refresh, so a poll
reads the previous fetch's count; stamped with the poll's time, polls that saw one dump twice
were intervals at zero events/s while the job read at full speed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from flink_helpers import count_events, wait_for

from nexmark.engines.spec import JobSpec
from nexmark.engines.status import JobState
from nexmark.metrics import derive
from nexmark.metrics.sampler import Sampler
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = [pytest.mark.flink, pytest.mark.slow]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6M events: a warm-up part of 4.5M, read for a few seconds by q0 at parallelism 2 (1.5M
    took 1.5 s on a quiet machine: two reading intervals, too few to test)."""
    params = DatasetParams(events=6_000_000, files=2)
    root = tmp_path_factory.mktemp("timeline")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False).path


def test_stamps_are_metric_times_in_order_and_no_reading_interval_is_zero(
    flink_engine, dataset, tmp_path
):
    part = dataset / "warmup"
    total = count_events(part)
    job = flink_engine.submit(JobSpec("q0", part, tmp_path, keep_source_open=True))
    try:
        wait_for("every task running", lambda: job.status().state == JobState.READY, job)
        sampler = Sampler(flink_engine, interval_s=0.0)
        deadline = time.monotonic() + 120
        while (s := sampler.sample(job, "warmup")).events < total:
            assert time.monotonic() < deadline, f"{s.events} of {total} events read"
            time.sleep(0.25)  # faster than the source reads the part: many reading samples
    finally:
        job.cancel()
    samples = sampler.samples
    stamped = [s for s in samples if s.polled is not None]
    # Once its tasks run, every count carries its dump's time: before its poll, by at most a
    # few fetches.
    assert len(stamped) >= len(samples) - 2
    assert all(0 <= s.polled - s.wall < 5 for s in stamped)
    assert any(s.polled - s.wall > 0.01 for s in stamped)  # the metric time, not the poll's
    walls = [s.wall for s in samples]
    assert walls == sorted(walls)
    # While the source read (after its first counted event, before its last), no interval is
    # zero: a dump seen twice is one interval, not a stop.
    first = next(i for i, s in enumerate(samples) if s.events > 0)
    index = {id(s): i for i, s in enumerate(samples)}
    steady = [
        r
        for r in derive.rates(samples)
        if r.end is not None and index[id(r.end)] > first and r.end.events < total
    ]
    assert len(steady) >= 3, [(s.wall, s.events) for s in samples]
    assert all(r.throughput_eps > 0 for r in steady), [(r.wall, r.events) for r in steady]
