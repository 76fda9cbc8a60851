"""Where the time goes, in the HTML report: the Bottleneck column of the summary table and, per
query whose engine reported operators, a table of them and a chart of their busy share through
the scored phase (`busy.py`) (docs/reports.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from nexmark.report.busy import no_busy_chart
from nexmark.results.formats import fmt_rate
from nexmark.results.operators import OperatorLoad, bottleneck_text
from nexmark.results.query_result import QueryResult
from nexmark.results.table import Column, scored

# The busiest operator and its share of time busy (`table.cell` formats it).
BOTTLENECK = Column("bottleneck", "Bottleneck", lambda v: "-" if v is None else str(v))
_NUMBER_HEADS = ("Parallelism", "Busy", "Back-pressured", "Idle", "Records in", "Records out")


def bottleneck_columns(results: Sequence[QueryResult]) -> tuple[Column, ...]:
    """The Bottleneck column where a scored result has one, else none (an engine that reports
    no operators keeps its table as it was)."""
    return (BOTTLENECK,) if any(r.bottleneck is not None for r in scored(results)) else ()


def _share(ms_per_s: float | None) -> str:
    return "-" if ms_per_s is None else f"{ms_per_s / 10:.0f}%"


def _td(key: str, value: Any, text: str, css: str = "") -> str:
    """A cell with its exact JSON value, as every number of the report."""
    attrs = f' data-key="{escape(key)}" data-value="{escape(json.dumps(value))}"'
    return f"<td{css}{attrs}>{escape(text)}</td>"


def _row(op: OperatorLoad, busiest: bool) -> str:
    cells = (
        _td("vertex", op.vertex, op.vertex, ' class="text"'),
        _td("parallelism", op.parallelism, "-" if op.parallelism is None else str(op.parallelism)),
        _td("busy", op.busy, _share(op.busy), ' class="flag"' if busiest else ""),
        _td("backpressured", op.backpressured, _share(op.backpressured)),
        _td("idle", op.idle, _share(op.idle)),
        _td("records_in_per_s", op.records_in_per_s, fmt_rate(op.records_in_per_s)),
        _td("records_out_per_s", op.records_out_per_s, fmt_rate(op.records_out_per_s)),
    )
    return f"<tr>{''.join(cells)}</tr>"


def operators_section(r: QueryResult, busy_chart: str = "") -> str:
    """'Where the time goes': each operator's share of time busy, back-pressured and idle and
    its records per second over the scored phase, the bottleneck marked, a dash for a figure
    its engine does not give; then `busy_chart` (the drawn chart's figure), or why there is
    none; empty without operators."""
    if not r.operators:
        return ""
    heads = '<th class="text">Operator</th>' + "".join(f"<th>{h}</th>" for h in _NUMBER_HEADS)
    rows = "".join(
        _row(op, busiest=op.vertex == r.bottleneck and op.busy is not None) for op in r.operators
    )
    spans = [op.measured_s for op in r.operators if op.measured_s is not None]
    over = f" over {max(spans):.1f} s of the scored phase" if spans else ""
    top = bottleneck_text(r.bottleneck, r.bottleneck_busy, width=200)
    return (
        "<h4>Where the time goes</h4><p class='meta operators'>Each operator's share of time "
        "busy, back-pressured and idle (the mean over its parallel tasks) and its records per "
        f"second{over}, as its engine reports them (a dash: a figure the engine does not give); "
        f"bottleneck (busiest): {escape(top)}</p>"
        f'<table class="operators" id="operators-{escape(r.engine)}-{escape(r.query)}">'
        f"<thead><tr>{heads}</tr></thead>"
        f"<tbody>{rows}</tbody></table>{_busy_part(r, busy_chart)}"
    )


def _busy_part(r: QueryResult, chart: str) -> str:
    """The chart of each operator's busy share with a line on how to read it, or why none."""
    why = no_busy_chart(r)
    if why is not None:
        return f"<p class='meta busy-share'>{escape(why)}</p>"
    lineless = [s.vertex for s in r.operator_busy or [] if not s.points]
    without = f" No line: {'; '.join(lineless)} (no busy time)." if lineless else ""
    return (
        "<p class='meta busy-share'>Each operator's share of time busy through the scored "
        "phase, a point per interval between two reads of its counters (about a second; "
        "neighbours merged in a long phase), the bottleneck's line thicker: the highest line "
        f"is what held the job at that moment.{escape(without)}</p>{chart}"
    )
