"""Event-time latency of a rate-fed benchmark phase, on the fake engine: its scripted clock
makes a row's latency known, and the protocol must recover it exactly."""

from __future__ import annotations

import dataclasses
import json

import pytest

from fake_engine import Script
from fake_runs import fake_run
from nexmark.metrics import latency as lat
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.results.query_result import QueryResult
from nexmark.results.table import latency_cell
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import FeedFile, rate_slices
from nexmark.workload.writer import ensure_dataset

BENCH = 10_000
RATE = 500.0  # a 20 s phase; 50 events per 100 ms slice


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(
        events=4 * BENCH, files=2, rate=1000, benchmark_slices=rate_slices(BENCH, RATE)
    )
    root = tmp_path_factory.mktemp("latency-data")
    return ensure_dataset(params, out=root / params.dataset_id, show_progress=False)


def _run(dataset, tmp_path, script, query="q0", **options):
    fake = fake_run(dataset, tmp_path / "work", script, query, **{"rate": RATE, **options})
    measured, result = fake.measure()
    return measured, result, fake.engine


def test_the_share_of_rows_stamped_can_be_set(dataset, tmp_path):
    _, result, engine = _run(
        dataset, tmp_path, Script(eps=5 * RATE, latency_s=0.05), latency_sample=0.01
    )
    assert result.latency.rows == BENCH // 100 and result.latency.sample == 0.01
    assert {job.spec.latency.sample for job in engine.jobs} == {0.01}  # both phases' jobs


def test_a_known_latency_comes_out_exactly(dataset, tmp_path):
    # 50-event slices read at 2,500 events/s take 20 ms, then 50 ms to the sink
    _, result, engine = _run(dataset, tmp_path, Script(eps=5 * RATE, latency_s=0.05))
    latency = result.latency
    for value in (latency.p50_s, latency.p95_s, latency.p99_s, latency.max_s):
        assert value == pytest.approx(0.07, abs=1e-6)
    assert latency.rows == BENCH // 1000  # 0.1% of q0's rows are stamped
    assert latency.sample == 0.001 and latency.watermark_delay_s == 4.0
    assert latency.depends == "its own event (date_time)"
    assert latency.left_out == 0
    # both phases' jobs were asked for stamps (the restored job's plan is the warm-up's)
    assert [job.spec.latency is not None for job in engine.jobs] == [True, True]
    assert latency.series and all(p[1] == pytest.approx(0.07, abs=1e-6) for p in latency.series)
    assert result.repeats[0].latency_p99_s == latency.p99_s
    assert latency_cell(result) == "70 ms / 70 ms"


def test_a_slow_engine_falls_behind_and_its_latency_grows(dataset, tmp_path):
    # 1% of the rows stamped: enough for the last slice's wait to show in the maximum
    _, result, _ = _run(dataset, tmp_path, Script(eps=0.5 * RATE), latency_sample=0.01)
    latency = result.latency
    # the backlog grows at half the rate: the last slice waits ~BENCH/eps - BENCH/RATE = 20 s
    assert latency.max_s == pytest.approx(BENCH / (0.5 * RATE) - BENCH / RATE, rel=0.02)
    assert latency.p50_s == pytest.approx(latency.max_s / 2, rel=0.05)
    assert latency.p50_s < latency.p95_s < latency.p99_s <= latency.max_s
    first, last = latency.series[0], latency.series[-1]
    assert first[1] < 1.0 < 15.0 < last[1]


def test_a_full_speed_run_has_no_latency_and_stamps_nothing(dataset, tmp_path):
    _, result, engine = _run(dataset, tmp_path, Script(), rate=None)
    assert result.latency.p50_s is None and result.latency.rows is None
    assert all(job.spec.latency is None for job in engine.jobs)
    assert latency_cell(result) == ""


def test_a_query_without_an_event_time_in_its_rows_is_not_stamped(dataset, tmp_path):
    _, result, engine = _run(dataset, tmp_path, Script(eps=5 * RATE), query="q17")
    assert lat.rule("q17") is None
    assert all(job.spec.latency is None for job in engine.jobs)
    assert result.latency.rows is None


def test_latency_off_by_option(dataset, tmp_path):
    _, result, engine = _run(dataset, tmp_path, Script(eps=5 * RATE), latency=False)
    assert all(job.spec.latency is None for job in engine.jobs)
    assert result.latency.p99_s is None and result.rate.asked_eps == RATE


def test_the_latency_survives_a_round_trip_and_older_documents_load(dataset, tmp_path):
    _, result, _ = _run(dataset, tmp_path, Script(eps=5 * RATE, latency_s=0.05))
    again = QueryResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again.latency == result.latency
    older = result.to_dict()
    del older["latency"]
    for repeat in older["repeats"]:
        del repeat["latency_p50_s"], repeat["latency_p99_s"]
    assert QueryResult.from_dict(older).latency.p50_s is None


def _step(first: str, last: str) -> tuple[FeedFile, ...]:
    return (FeedFile(None, 10, first, last),)  # type: ignore[arg-type]


def test_window_rows_are_measured_from_the_slice_holding_their_end():
    steps = [
        _step("2024-01-01 00:00:00.000", "2024-01-01 00:00:04.999"),
        _step("2024-01-01 00:00:05.000", "2024-01-01 00:00:09.998"),
        _step("2024-01-01 00:00:10.002", "2024-01-01 00:00:14.999"),
    ]
    released = lat.releases(steps, [(100.0, 10), (101.0, 20), (102.0, 30)])
    base = released[0][0]
    q7, q11 = lat.rule("q7"), lat.rule("q11")
    # q7's bid at 3 s is in the window [0, 10 s): its end, 10 s, falls in the gap before the
    # third slice's first event, which is the one that reaches it
    points, left_out = lat.latencies([(base + 3_000, 102.5)], q7, released)
    assert points == [(102.5, 0.5)] and left_out == 0
    # q11's session ending at 9.5 s: the second slice holds it
    assert lat.latencies([(base + 9_500, 101.25)], q11, released)[0] == [(101.25, 0.25)]
    # an end before the phase's first event, a row older than the release, an end past it
    stamps = [(base - 1, 103.0), (base + 1_000, 99.0), (base + 20_000, 103.0)]
    assert lat.latencies(stamps, q11, released) == ([], 3)


def test_percentiles_are_observed_values():
    values = sorted(float(v) for v in range(1, 101))
    assert [lat.percentile(values, p) for p in (50, 95, 99, 100)] == [50.0, 95.0, 99.0, 100.0]
    assert lat.percentile([7.0], 99) == 7.0


def test_the_report_charts_the_latency_and_the_table_shows_it(dataset, tmp_path):
    from rich.console import Console

    from nexmark.report.html import write_html_report
    from nexmark.results.table import results_renderable

    _, result, _ = _run(dataset, tmp_path, Script(eps=0.5 * RATE))
    page = write_html_report([result], tmp_path / "report.html").read_text()
    assert 'data-chart="latency"' in page and "event-time latency at 500.00 /s: p50" in page
    console = Console(width=160, record=True)
    console.print(results_renderable([result]))
    text = console.export_text()
    assert "Event-time latency" in text and "its own event (date_time); sample 0.1%" in text


def test_a_search_judges_its_trials_latency_against_the_p99_bound(dataset, tmp_path):
    from nexmark.protocol.scoring.sustainable import RateSearch, SearchOptions

    # fast enough for every rate, but each row reaches the sink 2 s late: above a 1 s bound
    script = Script(eps=50_000.0, latency_s=2.0)
    search = SearchOptions(min_rate=RATE, max_trials=3, p99_bound_s=1.0, latency=True)
    rate_search = RateSearch(search, 2_000.0)
    fake = fake_run(dataset, tmp_path / "work", script, "q0", trials=rate_search, search=search)
    engine = fake.engine
    measured = fake.run.execute()
    trials = [r for r in measured.repeats if r.status == "ok"]
    assert trials and all(r.sustained is False for r in trials)
    assert all("p99 latency" in (r.verdict or "") for r in trials)
    # without --latency the trials are not stamped: the same engine keeps up by its lag
    unstamped = dataclasses.replace(search, latency=False)
    assert not ProtocolOptions(search=unstamped).latency_on(engine, "q0")
    assert ProtocolOptions(search=search).latency_on(engine, "q0")
