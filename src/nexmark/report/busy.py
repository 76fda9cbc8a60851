"""Where the time goes over the scored phase: each operator's share of time busy through it,
one line per operator (`operator_busy`), drawn under the query's operators table, or one line
saying why there is none (docs/reports.md)."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from nexmark.results.operators import bottleneck_text
from nexmark.results.query_result import QueryResult

_NAME_WIDTH = 60  # a legend entry's longest name (Flink's chained vertices run long)


def no_busy_chart(r: QueryResult) -> str | None:
    """Why a query whose engine reported operators has no busy-share chart; None: it has one
    (or has no operators at all, and so no section to say it in)."""
    if not r.operators:
        return None
    if r.operator_busy is None:
        return "No busy share over time: these results keep only the phase's means."
    longest = max((len(s.points) for s in r.operator_busy), default=0)
    if longest == 0:
        return "No busy share over time: the engine gave no busy time between two reads."
    if longest == 1:
        return "No busy share over time: the phase was read over a single interval."
    return None


def has_busy_chart(r: QueryResult) -> bool:
    return bool(r.operators) and no_busy_chart(r) is None


def busy_figure(r: QueryResult) -> Figure:
    """Each operator's share of time busy over the intervals between the phase's reads, a line
    per operator with points (gid "busy-<i>", i its place in `operator_busy`; tests find the
    lines by it), the bottleneck's thicker; an operator without busy time has no line. The
    legend sits under the plot, two names a row: Flink's chained vertices have long names."""
    series = [(i, s) for i, s in enumerate(r.operator_busy or []) if s.points]
    legend_in = 0.1 + 0.18 * ((len(series) + 1) // 2)
    height = 3.2 + legend_in
    fig = Figure(figsize=(10, height))
    ax = fig.subplots()
    fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=(0.55 + legend_in) / height)
    for i, s in series:
        top = s.vertex == r.bottleneck
        name = bottleneck_text(s.vertex, None, width=_NAME_WIDTH)
        ax.plot(
            [p[0] for p in s.points],
            [p[1] for p in s.points],
            lw=2.4 if top else 1.3,
            marker=".",
            ms=3,
            gid=f"busy-{i}",
            label=f"{name} (bottleneck)" if top else name,
        )
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
    ax.set_ylabel("time busy")
    ax.set_xlabel("seconds since the query started")
    ax.set_title(f"{r.query}: each operator's share of time busy, scored phase ({r.engine})")
    ax.grid(alpha=0.3)
    fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.01), ncol=2, fontsize=8, frameon=False)
    return fig
