"""Where the time goes in the report: the per-query operators table, the Bottleneck column of
the HTML summary and the line under the terminal table; absent where no operators were
reported."""

from __future__ import annotations

import json

from rich.console import Console

from nexmark.report.html import render_html
from nexmark.results.operators import bottleneck_of, summarise
from nexmark.results.query_result import QueryResult
from nexmark.results.table import results_renderable
from operator_reads import READS, SOURCE, WINDOW
from report_page import Page


def _result(query: str, engine: str = "flink", operators: bool = True) -> QueryResult:
    r = QueryResult(run_id="r", engine=engine, query=query, status="ok", events_benchmark=1000)
    r.time_s, r.throughput_eps = 2.0, 500.0
    if operators:
        r.operators = summarise(READS)
        r.bottleneck, r.bottleneck_busy = bottleneck_of(r.operators)
    return r


def test_a_query_with_operators_has_its_table_and_the_summary_its_bottleneck():
    page = Page()
    page.feed(render_html([_result("q5"), _result("q0", operators=False)], {}))
    rows = [r for r in page.rows["operators-flink-q5"] if r["cells"]]  # after the header
    assert [json.loads(r["cells"]["vertex"][0]) for r in rows] == [v.name for v in READS[0]]
    source, window, sink = (r["cells"] for r in rows)
    assert source["busy"] == ("800.0", "80%") and source["backpressured"][1] == "10%"
    assert window["busy"][1] == "68%" and window["idle"][1] == "32%"  # 67.5%, 32.5%
    assert window["records_in_per_s"] == ("100000.0", "100.00 K/s")
    assert window["records_out_per_s"][1] == "10.00 /s"
    assert sink["busy"] == ("null", "-") and sink["parallelism"][1] == "1"  # not reported
    assert "operators-flink-q0" not in page.rows  # no operators: no table
    summary = {r["query"]: r["cells"] for r in page.rows["summary-table"]}
    assert summary["q5"]["bottleneck"] == (json.dumps(SOURCE), f"{SOURCE[:47]}… 80% busy")
    assert summary["q0"]["bottleneck"] == ("null", "-")
    assert summary["Total"]["bottleneck"] == ("null", "-")
    assert WINDOW in rows[1]["texts"]


def test_without_operators_the_summary_is_as_it_was():
    html = render_html([_result("q5", engine="spark", operators=False)], {})
    assert "Bottleneck" not in html and "Where the time goes" not in html


def test_the_terminal_names_each_bottleneck_under_the_table():
    console = Console(width=100, record=True)
    console.print(results_renderable([_result("q5"), _result("q0", operators=False)]))
    text = console.export_text()
    assert "Bottleneck (the busiest operator over the scored phase): q5 Source:" in text
    assert "80% busy" in text and "Bottleneck" not in text.split("Query", 1)[0]
    console = Console(width=100, record=True)
    console.print(results_renderable([_result("q5", operators=False)]))
    assert "Bottleneck" not in console.export_text()
