"""`--rate R` on the fake engine: the protocol releases the benchmark part on its own clock at
R events/s (the warm-up at full speed), and records the rate asked and delivered and the lag."""

from __future__ import annotations

import html
import json
import os
import time

import matplotlib.image as mpimg
import pytest
from rich.console import Console

from fake_engine import FakeClock, FakeEngine, FakeWorld, Script
from fake_runs import fake_run
from nexmark.errors import UsageError
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.scoring.sustainable import SearchOptions
from nexmark.protocol.suite.calibrate import calibrate
from nexmark.report.charts import chart_names
from nexmark.report.html import write_report
from nexmark.results.store import ResultStore
from nexmark.results.table import (
    RATE_COLUMNS,
    field_value,
    fmt_count,
    fmt_rate,
    rate_line,
    results_renderable,
)
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import (
    RATE_STEP_S,
    PartFeed,
    check_rate,
    rate_slices,
    release_steps,
)
from nexmark.workload.writer import ensure_dataset

BENCH = 10_000  # benchmark events of the dataset below
RATE = 500.0  # events/s: a 20 s benchmark phase


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    slices = rate_slices(BENCH, RATE)  # 100 ms of events at RATE per time slice
    params = DatasetParams(events=4 * BENCH, files=2, rate=1000, benchmark_slices=slices)
    root = tmp_path_factory.mktemp("rate-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _run(dataset, tmp_path, eps, rate=RATE, clock=None):
    fake = fake_run(dataset, tmp_path / "work", Script(eps=eps), "q0", clock=clock, rate=rate)
    measured, result = fake.measure()
    return measured, result, fake.world


def test_an_engine_faster_than_the_rate_reads_at_the_rate_and_keeps_up(dataset, tmp_path):
    measured, result, world = _run(dataset, tmp_path, eps=5 * RATE)
    rate = result.rate
    assert rate.asked_eps == RATE
    assert rate.delivered_eps == pytest.approx(RATE, rel=0.02)
    assert rate.max_error_5s is not None and rate.max_error_5s <= 0.02
    assert rate.steps == len(dataset.files("benchmark")) // 2 == 200
    assert len(dataset.files("warmup")) == 2  # the warm-up keeps one file per reader
    # the phase lasts as long as the release does: throughput is the rate, not the capacity
    assert result.throughput_eps == pytest.approx(RATE, rel=0.05)
    # keeping up: the backlog never exceeds a couple of steps and does not grow
    assert rate.lag_max_events <= 3 * BENCH / rate.steps
    assert abs(rate.lag_trend_eps) < 0.01 * RATE
    bench = [s for s in result.timeseries if s.phase == "benchmark"]
    assert bench and all(s.released is not None and s.released >= s.events for s in bench)
    # the warm-up was not rate-fed: read at the scripted full speed
    warmup_s = measured.phases["phase-checkpoint"] - measured.phases["warmup"]
    assert warmup_s == pytest.approx(3 * BENCH / (5 * RATE), rel=0.05)


def test_an_engine_slower_than_the_rate_falls_behind_at_the_difference(dataset, tmp_path):
    _, result, _ = _run(dataset, tmp_path, eps=0.5 * RATE)
    rate = result.rate
    assert rate.delivered_eps == pytest.approx(RATE, rel=0.02)  # the feed does not slow down
    assert rate.lag_trend_eps == pytest.approx(0.5 * RATE, rel=0.1)
    assert rate.lag_max_events >= 0.4 * BENCH
    assert result.throughput_eps == pytest.approx(0.5 * RATE, rel=0.05)


def test_a_real_clock_release_runs_on_its_own_thread_and_costs_little(dataset, tmp_path):
    measured, result, _ = _run(dataset, tmp_path, eps=50_000.0, rate=2_000.0, clock=time.time)
    rate = result.rate
    assert rate.delivered_eps == pytest.approx(2_000.0, rel=0.02)
    assert measured.releaser_cpu_s is not None and rate.releaser_cores < 0.2


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        (0, "--rate must be a number of events/s above 0, got 0"),
        (-5.0, "above 0"),
        (float("nan"), "above 0"),
        (250.0, "too coarse"),  # 50-event slices are 200 ms at 250/s
        (600.0, "takes 17 s, above the query's timeout of 10 s"),
    ],
)
def test_bad_rates_are_one_line(dataset, rate, message):
    with pytest.raises(UsageError, match=message) as info:
        check_rate(rate, PartFeed.of(dataset.part_dir("benchmark")), timeout_s=10.0)
    assert "\n" not in str(info.value)


def test_a_rate_that_would_need_too_many_steps_releases_several_slices_per_step(dataset, tmp_path):
    part = PartFeed.of(dataset.part_dir("benchmark"))
    slices = release_steps(part)
    assert len(slices) == 200  # 50 events each: 400 slices/s at 20,000 events/s
    grouped = release_steps(part, 20_000.0)
    assert len(grouped) == 25 and all(len(step) == 8 * 2 for step in grouped)  # 50 steps/s
    assert [f for step in grouped for f in step] == list(part.files)  # in order, each once
    assert release_steps(part, RATE) == slices  # 10 steps/s: one slice each
    _, result, _ = _run(dataset, tmp_path, eps=100_000.0, rate=20_000.0)
    assert result.rate.steps == 25 and result.events_benchmark == BENCH


def test_a_too_coarse_layout_says_how_many_slices_to_generate(dataset):
    part = PartFeed.of(dataset.part_dir("benchmark"))
    wanted = r"at least 400 benchmark slices \(nexmark generate --benchmark-slices 400\)"
    with pytest.raises(UsageError, match=wanted):
        check_rate(250.0, part)
    check_rate(500.0, part)  # 100 ms per slice: fine


@pytest.mark.parametrize(("events", "rate"), [(20_000, 825.0), (20_000, 1_519.0), (7, 33.0)])
def test_the_slices_generated_for_a_rate_each_fit_in_one_step(events, rate):
    """Slices differ by one event: the largest, not the average, must fit in 100 ms at the rate
    (20,000 events at 825 ev/s: 243 slices average 82.3 events, the largest 83 > 82.5)."""
    params = DatasetParams(events=4 * events, files=2, benchmark_slices=rate_slices(events, rate))
    largest = max(b - a for a, b in params.slice_ranges("benchmark"))
    assert largest <= rate * RATE_STEP_S


def test_the_source_ceiling_of_a_rate_run_reads_the_finer_part_at_full_speed(dataset, tmp_path):
    """The benchmark part of a rate run holds a file per reader per slice: an engine reading
    one file per reader refuses it unrated (the ceiling was recorded "failed"); rate-fed and
    released all at once, it is read at the engine's full speed, not at the rate."""
    clock = FakeClock()
    world = FakeWorld({"source": Script(eps=20 * RATE)}, clock, one_file_per_reader=True)
    engine = FakeEngine(world)
    engine.start()
    parts = PhaseParts.of(dataset)
    unrated = calibrate(engine, parts, tmp_path / "c1", ProtocolOptions(), clock, clock.sleep)
    assert unrated.status == "failed" and "exactly one file" in unrated.reason
    options = ProtocolOptions(timeout_s=600.0, rate=RATE)
    ceiling = calibrate(engine, parts, tmp_path / "c2", options, clock, clock.sleep)
    assert ceiling.status == "ok", ceiling.reason
    assert ceiling.events == BENCH
    assert ceiling.throughput_eps == pytest.approx(20 * RATE, rel=0.1)
    assert ceiling.throughput_eps > 10 * RATE  # far above the rate: not released at it
    # A rate search (`nexmark sustainable`) runs on the same finer part: the same ceiling.
    options = ProtocolOptions(timeout_s=600.0, search=SearchOptions(min_rate=RATE))
    searched = calibrate(engine, parts, tmp_path / "c3", options, clock, clock.sleep)
    assert searched.status == "ok", searched.reason
    assert searched.throughput_eps == pytest.approx(ceiling.throughput_eps, rel=0.05)


# -- the rate and the lag in the table and the report ------------------------------------------


def _render(results) -> str:
    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(results_renderable(results))
    return console.export_text()


def test_the_table_of_a_rate_fed_run_shows_the_rates_and_the_lag(dataset, tmp_path):
    _, fast, _ = _run(dataset, tmp_path / "fast", eps=5 * RATE)
    _, slow, _ = _run(dataset, tmp_path / "slow", eps=0.5 * RATE)
    text = _render([fast])
    assert "Asked" in text and "Delivered" in text and "Max Lag" in text.replace("\n", " ")
    row = next(line for line in text.splitlines() if line.lstrip().startswith("q0"))
    for col in RATE_COLUMNS:
        assert col.fmt(field_value(fast, col.key)) in row, col.key
    assert fmt_rate(RATE) in row and fmt_count(fast.rate.lag_max_events) in row
    assert "(kept up)" in text and "lag at the end 0" in text
    assert "releaser -" in text  # pumped by the test's clock: no thread's CPU to measure
    assert "(fell behind)" in _render([slow])
    # A lag that falls (a cold first batch caught up, as on Spark) kept up.
    slow.rate.lag_trend_eps = -0.5 * RATE
    assert "(kept up)" in rate_line([slow])
    # A rate search's result has its own trials table, judged on its own trend: no columns.
    fast.sustainable.trials = 3
    assert "Asked" not in _render([fast]) and rate_line([fast]) is None
    fast.sustainable.trials = 0
    # A full-speed run's table has no rate columns and no rate line.
    fast.rate = type(fast.rate)()
    assert "Asked" not in _render([fast])


def test_the_report_of_a_rate_fed_run_has_the_rate_columns_and_chart(dataset, tmp_path):
    _, result, _ = _run(dataset, tmp_path / "run", eps=0.5 * RATE)
    ResultStore(tmp_path / "results").write([result])
    page = write_report(tmp_path / "results").read_text(encoding="utf-8")
    summary = page.split('id="summary-table"', 1)[1].split("</table>", 1)[0]
    for col in RATE_COLUMNS:
        value = json.dumps(field_value(result, col.key))
        assert f'data-key="{col.key}" data-value="{html.escape(value)}"' in summary, col.key
    assert "Rate Delivered" in summary and "fell behind" in page
    chart = tmp_path / "results" / "charts" / "fake-q0-rate.png"
    assert 'data-chart="rate"' in page and chart.is_file()
    height, width = mpimg.imread(chart, format="png").shape[:2]
    assert width >= 600 and height >= 300
    result.sustainable.trials = 3  # a rate search's result: its own chart, not this one
    assert "rate" not in chart_names(result)
