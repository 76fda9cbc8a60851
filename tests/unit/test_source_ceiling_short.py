"""A source ceiling whose timed read was too short to resolve gives no query a share of it."""

from __future__ import annotations

import os

from rich.console import Console

from nexmark.protocol.scoring.record import _source_ratio
from nexmark.results.figures import SourceCalibration
from nexmark.results.query_result import QueryResult
from nexmark.results.steady import short_ceiling_reason
from nexmark.results.table import COLUMNS, cell, results_renderable, totals

OF_SOURCE = next(c for c in COLUMNS if c.key == "source_ratio")


def ok(query: str, events: int, time_s: float, source: SourceCalibration) -> QueryResult:
    return QueryResult(
        run_id="r", engine="flink", query=query, status="ok", events_benchmark=events,
        time_s=time_s, cores=1.9, throughput_eps=events / time_s, source=source,
    )  # fmt: skip


def render(results: list[QueryResult]) -> str:
    console = Console(width=100, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(results_renderable(results))
    return " ".join(console.export_text().split())


def short_source() -> SourceCalibration:
    # As seen: the benchmark part's 3M events read in 1.46 s, at 2.06M/s on 0.69 cores.
    rate = 3e6 / 1.46
    source = SourceCalibration("ok", None, 3_000_000, 2, 1.46, rate, 0.69, rate / 0.69)
    source.too_short = short_ceiling_reason(source.time_s)
    return source


def test_the_bound_is_the_scored_phases():
    assert short_ceiling_reason(None) is None
    assert short_ceiling_reason(5.0) is None and short_ceiling_reason(30.0) is None
    reason = short_ceiling_reason(1.46)
    assert reason is not None and "lasted 1.5 s, under 5 s: too short to resolve" in reason


def test_no_share_of_a_ceiling_too_short_to_resolve_is_shown():
    source = short_source()
    slow = ok("q5", 3_000_000, 12.0, source)  # 250K/s
    fast = ok("q0", 3_000_000, 1.2, source)  # 2.5M/s: above what the short read gave
    for r in (slow, fast):
        _source_ratio(r)
    # The ratio stays recorded; the short read is why it is no share, not the query.
    assert slow.source_ratio is not None and slow.source_invalid is None
    assert fast.source_invalid is None
    assert cell(slow, OF_SOURCE) == "short" and cell(fast, OF_SOURCE) == "short"
    assert totals([slow, fast])["source_ratio"] is None
    text = render([slow, fast])
    assert "Source ceiling too short to resolve: 2.05 M/s on 0.69 cores" in text
    assert "the timed read lasted 1.5 s, under 5 s" in text
    assert "12%" not in text and "122%" not in text  # neither query's share is shown


def test_a_resolved_ceiling_still_gives_its_share():
    source = SourceCalibration("ok", None, 3_000_000, 2, 6.0, 5e5, 1.9, 5e5 / 1.9)
    r = ok("q5", 3_000_000, 12.0, source)
    _source_ratio(r)
    assert cell(r, OF_SOURCE) == "50%" and totals([r])["source_ratio"] == 0.5
    assert "too short" not in render([r])
