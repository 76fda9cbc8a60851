"""The timeline shows what happened: samples stamped with the time their count was true.

On the scripted fake engine whose count is published on an interval (as Flink's metric store
is refreshed), so that polls a second apart often see the same count: stamped with the poll's
time that was a zero rate while the job read at full speed.
"""

from __future__ import annotations

import dataclasses
import statistics

import pytest

from fake_engine import FakeClock, Script
from fake_runs import fake_run
from nexmark.engines.base import EventCount, FailoverSupport, LiveState, WatermarkRead
from nexmark.metrics import derive
from nexmark.metrics.sampler import Sampler
from nexmark.protocol.query.failover import OUTAGE_PHASE
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset

EPS = 2000.0
# Published every 1.7 s, sampled every second: every other poll or so sees no new count.
STALE = Script(ready_s=0.5, eps=EPS, metric_refresh_s=1.7)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """40,000 events: 30,000 warm-up (15 s at 2,000 events/s), 10,000 benchmark (5 s)."""
    params = DatasetParams(events=40_000, files=2, rate=1000)
    root = tmp_path_factory.mktemp("timeline-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _run(dataset, tmp_path, script, failover=None, **options):
    fake = fake_run(dataset, tmp_path / "work", script, failover=failover is not None, **options)
    _, result = fake.measure()
    return fake.run, result


TOTAL = {"warmup": 30_000, "benchmark": 10_000}


def _reading(phase: str, events: int) -> bool:
    """A sample of a phase taken while its job still had events to read."""
    return 0 < events < TOTAL.get(phase, 0)


def test_a_stale_count_shows_no_zero_rate_while_the_job_reads(dataset, tmp_path):
    run, r = _run(dataset, tmp_path, STALE)
    samples = run.sampler.samples
    # The engine did publish stale counts: polls of one phase that saw the same count...
    repeated = [
        (a, b)
        for a, b in zip(samples, samples[1:], strict=False)
        if a.phase == b.phase and a.events == b.events and _reading(a.phase, a.events)
    ]
    assert len(repeated) >= 3
    # ... which, stamped with the polls' times, were intervals at zero events/s.
    by_poll = [dataclasses.replace(s, wall=s.poll_time, polled=None) for s in samples]
    zeros = [x for x in derive.rates(by_poll) if x.throughput_eps == 0]
    assert any(_reading(x.phase, x.events) for x in zeros)

    reading = [
        s for s in r.timeseries
        if s.phase in ("warmup", "benchmark") and s.throughput_eps is not None
    ]  # fmt: skip
    assert len(reading) >= 8
    assert all(s.throughput_eps > 0 for s in reading)
    # Each interval runs between two refreshes: the scripted rate, not an average of polls.
    full = [s.throughput_eps for s in reading if _reading(s.phase, s.events)]
    assert statistics.median(full) == pytest.approx(EPS, rel=0.01)
    # Stamped with the refresh, before the poll that read it, and in order.
    assert all(s.count_age_s is not None and 0 <= s.count_age_s < 1.7 for s in reading)
    for phase in ("warmup", "benchmark"):
        ts = [s.t for s in r.timeseries if s.phase == phase]
        assert ts == sorted(ts) and len(set(ts)) == len(ts)
    # The scored figures do not come from the samples: they are those of a live count.
    live, r_live = _run(
        dataset, tmp_path / "live", dataclasses.replace(STALE, metric_refresh_s=None)
    )
    assert r.problems() == [] and r.throughput_eps == pytest.approx(r_live.throughput_eps, rel=0.3)
    assert all(s.count_age_s is None for s in r_live.timeseries)


def test_a_job_that_really_stops_still_shows_zero(dataset, tmp_path):
    """A failover's outage: the count stops while refreshes go on, a true zero rate."""
    script = dataclasses.replace(
        STALE, metric_refresh_s=0.5, eps=1000.0, periodic_s=2.0, detect_s=3.0, restart_s=1.5
    )
    _, r = _run(dataset, tmp_path, script, failover=FailoverSupport.INJECT)
    outage = [s for s in r.timeseries if s.phase == OUTAGE_PHASE and s.throughput_eps is not None]
    assert outage and any(s.throughput_eps == 0 for s in outage)


class _Job:
    """A job that reports the counts it is given, each with the engine's time."""

    id = "job-1"

    def __init__(self, counts: list[EventCount]) -> None:
        self.counts = counts

    def events_emitted_at(self) -> EventCount:
        return self.counts.pop(0)

    def watermark_at(self) -> WatermarkRead:
        return WatermarkRead(None)

    def live_state(self) -> LiveState | None:
        self.live_reads = getattr(self, "live_reads", 0) + 1
        return LiveState(bytes=1000 * self.live_reads, keys=10)

    def operator_load(self) -> None:
        return None  # an engine that reports no operators


class _Cpu:
    def cpu_seconds(self) -> float:
        return 0.0


def test_a_stamp_is_never_after_its_poll_nor_before_the_last_one():
    clock = FakeClock(100.0)
    sampler = Sampler(_Cpu(), interval_s=0.0, clock=clock)
    job = _Job([EventCount(10, 99.5), EventCount(20, 101.0), EventCount(20, 99.0), EventCount(30)])
    walls = []
    for _ in range(4):
        walls.append(sampler.sample(job, "warmup").wall)
        clock.advance(1.0)
    # 99.5 as given; 101 is after its poll (100 + 1): the poll's; 99 went back: the last one's;
    # no time given: the poll's.
    assert walls == [99.5, 101.0, 101.0, 103.0]
    assert [s.polled for s in sampler.samples] == [100.0, 101.0, 102.0, None]
    rates = derive.rates(sampler.samples)
    # The third sample (the same time as the second) ends no interval: 99.5 -> 101 -> 103.
    assert [(x.wall, x.throughput_eps) for x in rates] == [(101.0, 10 / 1.5), (103.0, 5.0)]


@pytest.mark.parametrize("on_request", [False, True], ids=["timed refresh", "on request"])
@pytest.mark.parametrize("eps", [1_100.0, 2_300.0, 20_000.0], ids=["9 s", "4.3 s", "0.5 s"])
def test_the_last_event_is_seen_promptly_whatever_the_phase_length(
    dataset, tmp_path, eps, on_request
):
    # Time ends with the end checkpoint, triggered once a poll sees the last event: polls a
    # second apart, or a rate lost to two polls of one unrefreshed count, would add up to
    # seconds of harness idle time to Time (a 0.5 s phase was scored as 2 s). A store that a
    # poll only asks to refresh (Flink's) answers with the poll before's count: an end
    # predicted from the poll's time rather than the count's came a second late (q0, 4M).
    script = Script(
        ready_s=0.5,
        eps=eps,
        metric_refresh_s=0.2,
        metric_fetch_on_request=on_request,
        checkpoint_s=0.1,
    )
    run, result = _run(dataset, tmp_path, script)
    m = run.measured
    read_s = TOTAL["benchmark"] / eps
    # Seen within the metric refresh + the fastest poll (+ the first-event probe's rounding);
    # on request, a fastest poll more: one to ask for the refresh, one to read it.
    late = 0.2 + 0.05 + 0.02 + (0.05 if on_request else 0)
    assert m.end_checkpoint.trigger_ts - (m.t_running + read_s) <= late
    assert result.time_s <= read_s + script.checkpoint_s + late


def test_live_state_is_read_once_per_interval_and_kept_with_its_sample():
    """Polls faster than the interval (near a phase's end) carry no live state: each read is
    a REST request per stateful vertex on Flink."""
    clock = FakeClock(100.0)
    sampler = Sampler(_Cpu(), interval_s=1.0, clock=clock)
    job = _Job([EventCount(n) for n in range(0, 60, 10)])
    for step in (0.0, 1.0, 0.3, 0.3, 0.5, 0.8):
        clock.advance(step)
        sampler.sample(job, "benchmark", force=True)
    live = [s.live for s in sampler.samples]
    assert [x.bytes if x else None for x in live] == [1000, 2000, None, None, 3000, 4000]
    assert job.live_reads == 4
