"""`nexmark sustainable` on the fake engine and as a search: the highest rate a query keeps up
with, each trial a benchmark phase restored from the one warm-up's checkpoint and fed at its
rate, below the source ceiling. A scripted engine of known capacity must come out at it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from fake_engine import FakeWorld, Script
from fake_runs import fake_run
from nexmark.errors import UsageError
from nexmark.metrics.sampler import Sample
from nexmark.protocol.query.observe import BenchmarkObserved, Measured
from nexmark.protocol.scoring.sustainable import (
    RateSearch,
    SearchOptions,
    TrialOutcome,
    judge,
    settled_lag_trend,
)
from nexmark.results.query_result import QueryResult
from nexmark.results.table import fmt_rate
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import RATE_STEP_S
from nexmark.workload.writer import ensure_dataset

BENCH = 60_000  # benchmark events of the dataset below (trials of 15-120 s: a lag trend of 1%
# of the rate must show above one release step, 100 ms of events)
MIN_RATE = 500.0


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(
        events=4 * BENCH, files=2, rate=1000, format="csv"
    )  # (each trial generates its own layout: CSV writes its small files 4x faster)
    root = tmp_path_factory.mktemp("sustainable-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


CEILING = 4_000.0  # events/s: the search's upper bound (the source ceiling)


def _search(dataset, tmp_path, script: Script, **options) -> tuple[QueryResult, FakeWorld]:
    search_options = SearchOptions(min_rate=MIN_RATE, **options)
    trials = RateSearch(search_options, CEILING)
    fake = fake_run(dataset, tmp_path / "work", script, "q0", trials=trials, search=search_options)
    measured, result = fake.measure()
    fake.world.measured = measured
    return result, fake.world


@pytest.mark.parametrize("capacity", [800.0, 1_500.0, 3_800.0])
def test_an_engine_of_known_capacity_comes_out_at_it(dataset, tmp_path, capacity):
    result, world = _search(dataset, tmp_path, Script(eps=capacity))
    found = result.sustainable
    assert found.upper_eps == CEILING and found.rate_eps is not None
    assert capacity * 0.9 <= found.rate_eps <= capacity * 1.001, result.repeats
    assert found.trials == len(result.repeats) <= 8 and found.stopped
    assert all(r.rate_asked_eps and r.verdict for r in result.repeats)
    # each trial above the capacity fell behind at the difference; each below kept up
    for r in result.repeats:
        assert r.sustained is (r.rate_asked_eps <= capacity), r
        if not r.sustained:
            assert "lag grew" in r.verdict
            assert r.lag_trend_eps == pytest.approx(r.rate_asked_eps - capacity, rel=0.15)
    # the trend recorded with a trial is the one its verdict was judged by
    for r in result.repeats:
        shown = re.search(r"lag (?:grew|trend) (-?[\d,]+) ev/s", r.verdict)
        assert shown and shown.group(1) == f"{r.lag_trend_eps:,.0f}", r
    # the headline is the highest sustained trial: its read rate is the rate it sustained
    assert result.throughput_eps == pytest.approx(found.rate_eps, rel=0.05)
    assert result.throughput_stats.n == 1  # trials at different rates: no spread of one value
    # every trial restored the one warm-up's phase checkpoint
    assert {r.restored_checkpoint_id for r in result.repeats} == {result.phase_checkpoint.id}
    assert sum(1 for e in world.log if e[:3] == ("submit", "q0", "warmup")) == 1


def test_each_trial_reads_the_benchmark_part_laid_out_for_its_rate(dataset, tmp_path):
    """A layout fine enough for the lowest rate caps a file source at the highest (a file a
    split): each trial is released in steps of just under 100 ms of events at its own rate,
    from a part generated for it, deleted with the query's work directory."""
    result, world = _search(dataset, tmp_path, Script(eps=1_500.0))
    assert len(result.repeats) >= 3
    for repeat in world.measured.repeats:
        rate, log = repeat.rate, repeat.measured.release_log
        steps = [b - a for (_, a), (_, b) in zip(log, log[1:], strict=False)]
        assert max(steps) <= rate * RATE_STEP_S, (rate, max(steps))
        assert min(steps) >= 0.9 * rate * RATE_STEP_S, (rate, min(steps))  # not a finer one
        assert log[-1][1] == BENCH
    # the result records the steps each trial was released in
    assert [r.rate_steps for r in result.repeats] == [
        len(rep.measured.release_log) for rep in world.measured.repeats
    ]
    assert not (tmp_path / "work").exists()


def test_the_search_descends_then_bisects_to_the_capacity():
    for capacity in (130_000.0, 610_000.0, 990_000.0):
        search = RateSearch(SearchOptions(min_rate=50_000.0), 1_000_000.0)
        while not search.done:
            rate = search.next_rate()
            assert rate is not None and 50_000.0 <= rate <= 1_000_000.0
            trend = 0.0 if rate <= capacity else rate - capacity
            search.observe(TrialOutcome(rate, True, delivered_eps=rate, lag_trend_eps=trend))
        assert len(search.trials) <= 8
        assert search.sustained_eps is not None and search.sustained_eps <= capacity
        assert search.sustained_eps >= 0.8 * capacity, (capacity, search.trials)


def test_a_search_with_nothing_sustained_says_so():
    search = RateSearch(SearchOptions(min_rate=50_000.0, max_trials=20), 200_000.0)
    while not search.done:
        rate = search.next_rate()
        search.observe(TrialOutcome(rate, True, delivered_eps=rate, lag_trend_eps=rate))
    assert search.sustained_eps is None
    assert "not sustained down to --min-rate 50,000" in search.reason
    assert RateSearch(SearchOptions(min_rate=50_000.0), 40_000.0).done  # nothing to search


@pytest.mark.parametrize(
    ("outcome", "sustained", "words"),
    [
        (TrialOutcome(1000.0, True, delivered_eps=1000.0, lag_trend_eps=9.0), True, "lag trend"),
        (TrialOutcome(1000.0, True, delivered_eps=1000.0, lag_trend_eps=10.0), False, "lag grew"),
        (TrialOutcome(1000.0, True, delivered_eps=900.0, lag_trend_eps=0.0), False, "no verdict"),
        (TrialOutcome(1000.0, True, delivered_eps=1000.0), False, "too short"),
        (TrialOutcome(1000.0, True, 970.0, delivered_eps=1000.0), False, "too short to measure"),
        (TrialOutcome(1000.0, True, 600.0, delivered_eps=1000.0), False, "read 600/s: fell"),
        (TrialOutcome(1000.0, False), False, "failed"),
        (
            TrialOutcome(1000.0, True, delivered_eps=1000.0, lag_trend_eps=0.0, latency_p99_s=6),
            False,
            "p99 latency",
        ),
    ],
)
def test_a_trial_is_sustained_only_when_every_criterion_holds(outcome, sustained, words):
    verdict = judge(outcome, SearchOptions())
    assert verdict.sustained is sustained and words in verdict.reason


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_rate": 0}, "--min-rate must be a number of events/s above 0"),
        ({"max_trials": 1}, "--max-trials must be between 2 and 20"),
        ({"p99_bound_s": 0}, "--p99-bound must be above 0 s"),
    ],
)
def test_bad_search_options_are_refused(fields, message):
    with pytest.raises(UsageError, match=message):
        SearchOptions(**fields)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-rate", "0"], "--min-rate must be a number of events/s above 0, got 0"),
        (["--max-trials", "30"], "--max-trials must be between 2 and 20"),
        (["--engine", "nope"], "unknown engine"),
    ],
)
def test_the_command_refuses_bad_input_in_one_line(tmp_path, args, message):
    done = subprocess.run(
        [sys.executable, "-m", "nexmark", "sustainable", "-q", "q0", "-n", "40K", *args],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "NEXMARK_DATA_DIR": str(tmp_path / "data")},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not (tmp_path / "data").exists()


def test_the_report_and_the_table_show_the_trials_and_the_rate_found(dataset, tmp_path):
    from rich.console import Console

    from nexmark.report.html import write_html_report
    from nexmark.results.table import results_renderable

    result, _ = _search(dataset, tmp_path, Script(eps=1_500.0))
    html = write_html_report([result], tmp_path / "report.html").read_text()
    assert (tmp_path / "charts" / "fake-q0-sustainable.png").stat().st_size > 0
    assert f"sustains {fmt_rate(result.sustainable.rate_eps)}" in html
    console = Console(width=160, record=True)
    console.print(results_renderable([result]))
    text = console.export_text()
    assert "Sustainable rate: trials" in text and "lag grew" in text
    assert "benchmark phases restored from one warm-up" not in text  # not repeats of one value


def _trend(points: list[tuple[float, int]], released: int = 10_000) -> float | None:
    """The settled trend of a release of `released` events from 0 s to 10 s, seen by samples
    at (wall, events read)."""
    log = [(t, released * t // 10) for t in range(11)]
    m = Measured(query="q0", started_at=0.0, benchmark=BenchmarkObserved(release_log=log))
    return settled_lag_trend(m, [Sample(t, "benchmark", e, 0.0) for t, e in points])


def test_a_lag_trend_needs_samples_two_seconds_apart():
    """Two counts a moment apart give any slope (0 here, from a job far behind), so a trend is
    read only from samples spanning 2 s or more, one point per distinct count time."""
    assert _trend([(8.2, 100), (8.2, 100), (8.9, 800)]) is None
    assert _trend([(3.0, 3000), (5.0, 5000)]) == pytest.approx(0.0)
    assert _trend([(3.0, 1000), (4.0, 1100), (5.0, 1200)]) == pytest.approx(900.0)
