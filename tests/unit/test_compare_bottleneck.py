"""compare: where both runs of a query reported operators, a Bottleneck row shows each run's
busiest before and after, beside the verdicts and never one of them."""

from __future__ import annotations

import os
from html.parser import HTMLParser

from rich.console import Console

from nexmark.report.compare import (
    Verdict,
    bottleneck_change,
    compare,
    comparison_table,
    render_compare_html,
)
from nexmark.results.operators import OperatorLoad
from nexmark.results.query_result import QueryResult


def _run(query: str, bottleneck: str | None, busy: float | None) -> QueryResult:
    r = QueryResult(
        run_id="r", engine="spark", query=query, status="ok", throughput_eps=100_000.0,
        throughput_per_core=50_000.0, recovery_time_s=4.0, state_bytes_end=1_000_000,
    )  # fmt: skip
    r.phase_checkpoint.duration_s = 1.0
    if bottleneck is not None:
        r.operators = [OperatorLoad(bottleneck, busy=None if busy is None else busy * 1000)]
        r.bottleneck, r.bottleneck_busy = bottleneck, busy
    return r


def test_each_runs_bottleneck_is_shown_and_judges_nothing():
    base = [_run("q5", "addBatch", 0.62), _run("q11", "addBatch", 0.5), _run("q0", None, None)]
    new = [_run("q5", "stateStoreSave", 0.915), _run("q11", None, None), _run("q0", None, None)]
    c = compare(base, new)
    by_query = {q.query: q for q in c.queries}
    moved = by_query["q5"].bottleneck
    assert moved is not None
    assert (moved.base, moved.new, moved.points) == (
        "addBatch 62% busy",
        "stateStoreSave 92% busy",
        29.5,
    )
    assert moved.change == "+30 pts"
    # One side without operators: no row. The figures are equal: within noise all the same.
    assert by_query["q11"].bottleneck is None and by_query["q0"].bottleneck is None
    assert all(q.verdict is Verdict.NOISE for q in c.queries)

    console = Console(width=160, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(comparison_table(c))
    text = console.export_text()
    line = next(row for row in text.splitlines() if "Bottleneck" in row)
    assert "addBatch 62% busy" in line and "stateStoreSave 92% busy" in line
    assert "+30 pts" in line and "not judged" in line
    assert text.count("Bottleneck") == 1

    class Rows(HTMLParser):
        rows: list[dict] = []

        def handle_starttag(self, tag, attrs):
            if tag == "tr" and dict(attrs).get("data-key") == "bottleneck":
                self.rows.append(dict(attrs))

    parser = Rows()
    parser.feed(render_compare_html(c, "base-dir", "new-dir"))
    assert [(r["data-query"], r["data-points"]) for r in parser.rows] == [("q5", "29.5")]


def test_a_missing_share_still_names_both():
    moved = bottleneck_change(_run("q5", "addBatch", None), _run("q5", "addBatch", 0.8))
    assert moved is not None and moved.points is None and moved.change == ""
    assert (moved.base, moved.new) == ("addBatch", "addBatch 80% busy")
