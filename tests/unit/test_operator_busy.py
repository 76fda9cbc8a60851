"""Where the time goes over the scored phase: each operator's busy share between the phase's
reads, recorded from a phase's reads of a q5-shaped job, kept through results.json, drawn one
line per operator in the report's "where the time goes", or one line saying why not (no JVM).
The engines' own tests check it on real reads (tests/integration/test_operators_*.py)."""

from __future__ import annotations

import dataclasses
import json
from html import escape
from pathlib import Path

import pytest

from nexmark.report.busy import busy_figure
from nexmark.report.html import write_html_report
from nexmark.results.document import dump_document, load_document
from nexmark.results.operators import BusySeries, bottleneck_of, busy_over_time, summarise
from nexmark.results.query_result import QueryResult
from nexmark.results.store import csv_columns
from nexmark.results.timeline import Sample as Point
from operator_reads import READS, SINK, SOURCE, WINDOW, vertex_read
from report_page import Page

# The phase's reads a second apart, the first 90 s after the query started.
TIMED_READS = [(90.0 + i, read) for i, read in enumerate(READS)]


def _result() -> QueryResult:
    r = QueryResult(run_id="r", engine="flink", query="q5", status="ok", events_benchmark=1000)
    r.time_s, r.throughput_eps = 4.0, 250.0
    r.timeseries = [Point(90.0, "benchmark", 0), Point(94.0, "benchmark", 1000, 250.0, 1.5)]
    r.operators = summarise(READS)
    r.bottleneck, r.bottleneck_busy = bottleneck_of(r.operators)
    r.operator_busy = busy_over_time(TIMED_READS)
    return r


def test_each_operator_busy_share_is_recorded_between_the_phase_reads():
    r = _result()
    source, window, sink = r.operator_busy or []
    # t: the read ending each interval, since the query started; the repeated dump (no run
    # time between two reads) is no interval.
    assert source == BusySeries(SOURCE, [[91.0, 0.8], [93.0, 0.8], [94.0, 0.8]])
    # The busy time read high at the second read (1000 ms busy of 1000) is taken back at the
    # fourth (-150 ms over 500): what went under 0 comes off the next interval, so the shares
    # still add up to the busy time counted, 1350 ms over 2 s.
    assert window == BusySeries(WINDOW, [[91.0, 1.0], [93.0, 0.0], [94.0, 0.7]])
    assert window_busy_ms(r) == pytest.approx(1.0 * 1000 + 0.0 * 500 + 0.7 * 500)
    assert sink == BusySeries(SINK, [])  # busy time measurement off: no point, never zeros
    assert busy_over_time([]) is None  # an engine that reports no operators: none recorded


def window_busy_ms(r: QueryResult) -> float:
    window = (r.operators or [])[1]
    return (window.busy or 0.0) * (window.measured_s or 0.0)


def test_a_long_phase_is_merged_to_at_most_the_bound_each_point_exact():
    busy = [0.0]
    reads = []
    for i in range(301):  # 300 intervals of 1 s: busy 0.25 of each, then 0.75 after 150
        busy[0] += 0.0 if i == 0 else (250.0 if i <= 150 else 750.0)
        reads.append((float(i), [vertex_read("v1", SOURCE, 1000.0 * i, busy[0], 0, 0, i, i)]))
    (series,) = busy_over_time(reads, max_points=120) or []
    # 300 intervals in threes: 100 points, each at its last read, its share over the three.
    assert len(series.points) == 100
    assert series.points[0] == [3.0, 0.25] and series.points[-1] == [300.0, 0.75]
    assert series.points[49] == [150.0, 0.25] and series.points[50] == [153.0, 0.75]
    (short,) = busy_over_time(reads[:121], max_points=120) or []
    assert len(short.points) == 120  # within the bound: a point per interval


def test_an_interval_across_a_restart_is_no_point():
    old = vertex_read("v1", SOURCE, 10_000, 9_000, 0, 1_000, 500_000, 500_000)
    on = vertex_read("v1", SOURCE, 11_000, 9_500, 0, 1_500, 600_000, 600_000)
    restarted = vertex_read("v1", SOURCE, 1_000, 900, 0, 100, 1_000, 1_000)
    later = vertex_read("v1", SOURCE, 2_000, 1_200, 0, 800, 51_000, 51_000)
    reads = [(1.0, [old]), (2.0, [on]), (3.0, [restarted]), (4.0, [later])]
    (series,) = busy_over_time(reads) or []
    assert series.points == [[2.0, 0.5], [4.0, 0.3]]


def test_the_series_is_kept_through_results_json_and_left_out_of_the_csv():
    r = _result()
    back = load_document(json.loads(json.dumps(dump_document([r]))))[0]
    assert back == r and back.operator_busy == r.operator_busy
    assert "operator_busy" not in [c for c, _ in csv_columns()]
    # A version-19 document has none: it reads as is.
    doc = dump_document([r])
    doc["schema_version"] = 19
    del doc["results"][0]["operator_busy"]
    old = load_document(doc)[0]
    assert old.operator_busy is None and old.operators == r.operators


def _lines(r: QueryResult) -> dict[str, tuple[str, float, list[tuple[float, float]]]]:
    """The chart's lines by gid: (label, width, points)."""
    fig = busy_figure(r)
    return {
        ln.get_gid(): (
            ln.get_label(),
            ln.get_linewidth(),
            list(zip(ln.get_xdata(), ln.get_ydata(), strict=True)),
        )
        for ax in fig.axes
        for ln in ax.get_lines()
        if (ln.get_gid() or "").startswith("busy-")
    }


def test_the_chart_draws_one_line_per_operator_with_its_points():
    r = _result()
    lines = _lines(r)
    assert set(lines) == {"busy-0", "busy-1"}  # the sink has no busy time: no line
    source, window = lines["busy-0"], lines["busy-1"]
    assert source[0] == f"{SOURCE} (bottleneck)" and window[0] == WINDOW
    assert source[1] > window[1]  # the bottleneck's line is the thicker
    assert source[2] == [(91.0, 0.8), (93.0, 0.8), (94.0, 0.8)]
    assert window[2] == [(91.0, 1.0), (93.0, 0.0), (94.0, 0.7)]


def _section(html: str) -> str:
    """The query's "where the time goes", up to the next part of its section."""
    start = html.index("Where the time goes")
    return html[start : html.index("</section>", start)]


def test_the_report_draws_it_in_where_the_time_goes(tmp_path: Path):
    out = write_html_report([_result()], tmp_path / "report.html")
    html = out.read_text(encoding="utf-8")
    page = Page()
    page.feed(html)
    charts = dict(page.images["flink:q5"])
    assert (tmp_path / "charts" / "flink-q5-operators.png").is_file()
    assert charts["operators"].startswith("data:image/png;base64,")
    part = _section(html)
    # Under the operators table, before the query's other charts.
    assert part.index('id="operators-flink-q5"') < part.index('data-chart="operators"')
    assert part.index('data-chart="operators"') < part.index('data-chart="timeline"')
    assert f"No line: {SINK} (no busy time)." in part


@pytest.mark.parametrize(
    ("busy", "why"),
    [
        (None, "No busy share over time: these results keep only the phase's means."),
        (
            [BusySeries(SOURCE), BusySeries(SINK)],
            "No busy share over time: the engine gave no busy time between two reads.",
        ),
        (
            [BusySeries(SOURCE, [[91.0, 0.8]]), BusySeries(SINK)],
            "No busy share over time: the phase was read over a single interval.",
        ),
    ],
)
def test_without_a_series_the_section_says_why_in_one_line(busy, why, tmp_path: Path):
    r = dataclasses.replace(_result(), operator_busy=busy)
    html = write_html_report([r], tmp_path / "report.html").read_text(encoding="utf-8")
    part = _section(html)
    assert f"<p class='meta busy-share'>{escape(why)}</p>" in part
    assert 'data-chart="operators"' not in html
    assert not (tmp_path / "charts" / "flink-q5-operators.png").exists()


def test_without_operators_there_is_no_section_to_say_it_in(tmp_path: Path):
    r = dataclasses.replace(_result(), operators=None, bottleneck=None, bottleneck_busy=None)
    html = write_html_report([r], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Where the time goes" not in html and "busy share" not in html
