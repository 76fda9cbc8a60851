"""Compare two runs query by query: the change of each key metric, and a verdict against a
noise threshold (asv's `compare --factor`, pyperf's "not significant").

Throughput measured with repeats (`nexmark run --repeat N`) on both sides is judged by a
significance test instead (nexmark.results.stats: Mann-Whitney U, two-sided, at 5%): "faster",
"slower" or "no significant difference", with the ratio of the medians and its bootstrap 95%
interval; the query's verdict is then that one. A difference is called only when it is
significant and its interval lies wholly beyond the threshold, as asv requires both its test
and its factor: repeats restored from one warm-up in one engine vary less than whole runs do,
and a significant difference within the threshold is that unseen run-to-run noise (q5 at 4M:
0.1-3% MAD / median within a run, ~8% between the medians of ten identical runs; the test
alone called three of five pairs of identical runs different). With too few values for the
test to ever reach 5% (fewer than 4 a side, or single-value runs) it says so and falls back
to the threshold.

The system checks (load, other processes' CPU before the run and before each query) are not
setup: two runs on one machine differ there by nature. They are shown as context.

A change within the threshold (percent of the base value, both directions) is "within noise".
Beyond it the verdict follows the metric's direction: more throughput is better, less recovery
time, checkpoint time and state is better. A query that ran in the base but not in the new run
(failed, timed out, unsupported) is a regression; the reverse is an improvement.

Where both runs of a query reported operators, a Bottleneck row shows each run's busiest and
its share of time busy, before and after: context, never a verdict (a query that gained
throughput keeps its bottleneck busier).
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from nexmark.report.fairness import query_order, setup_differences, system_context
from nexmark.results import stats
from nexmark.results.codec import ResultsError
from nexmark.results.formats import field_value, fmt_bytes, fmt_fixed, fmt_rate
from nexmark.results.operators import bottleneck_text
from nexmark.results.query_result import QueryResult

DEFAULT_THRESHOLD_PCT = 5.0
BOTTLENECK_WIDTH = 32  # characters of an operator's name in the table
NOT_JUDGED = "not judged"  # the bottleneck's row: context beside the verdicts


class Verdict(str, enum.Enum):
    IMPROVED = "improved"
    REGRESSED = "regressed"
    NOISE = "within noise"
    NA = "n/a"  # nothing to compare: a value is missing on one side


@dataclass(frozen=True)
class Metric:
    """A compared metric.

    Attributes:
        key: The result field (dotted path).
        title: Shown in tables.
        higher_is_better: False for time-like and size-like metrics.
        fmt: Formats a value.
    """

    key: str
    title: str
    higher_is_better: bool
    fmt: Callable[[Any], str]


METRICS: tuple[Metric, ...] = (
    Metric("throughput_eps", "Throughput", True, fmt_rate),
    Metric("throughput_per_core", "Throughput/Core", True, fmt_rate),
    Metric("recovery_time_s", "Recovery Time(s)", False, fmt_fixed(3)),
    Metric("phase_checkpoint.duration_s", "Phase Ckpt(s)", False, fmt_fixed(3)),
    Metric("state_bytes_end", "State Size", False, fmt_bytes),
)


@dataclass(frozen=True)
class Delta:
    """One metric of one query, base against new.

    Attributes:
        change: new - base, in the metric's unit.
        percent: change / base * 100 (None when base is 0 or a value is missing).
    """

    metric: Metric
    base: float | None
    new: float | None
    change: float | None
    percent: float | None
    verdict: Verdict
    # Throughput with repeats on both sides: the test behind the verdict (None: threshold).
    significance: stats.Difference | None = None
    note: str = ""  # why the threshold judged it, when repeats were there but too few


@dataclass
class QueryComparison:
    """One query: its status on both sides and, when it ran on both, the metric deltas."""

    query: str
    base: QueryResult | None
    new: QueryResult | None
    verdict: Verdict  # the query's overall verdict: regressed if any metric or the status did
    note: str = ""
    deltas: list[Delta] = field(default_factory=list)
    # Where both runs reported operators: each one's busiest (context, never a verdict).
    bottleneck: BottleneckChange | None = None


@dataclass(frozen=True)
class BottleneckChange:
    """The busiest operator of a query in each run and how much busier it is in the new one.

    Attributes:
        base, new: Each run's bottleneck with its share of time busy ('Window[4] 92% busy').
        points: new - base share of time busy, in percentage points (None: a share missing).
    """

    base: str
    new: str
    points: float | None

    @property
    def change(self) -> str:
        return "" if self.points is None else f"{self.points:+.0f} pts"


def bottleneck_change(base: QueryResult, new: QueryResult) -> BottleneckChange | None:
    """Each run's bottleneck where both have one: a busier bottleneck is no regression by itself
    (more throughput keeps it busier), so it is shown beside the verdicts, not in them."""
    if base.bottleneck is None or new.bottleneck is None:
        return None
    points = None
    if base.bottleneck_busy is not None and new.bottleneck_busy is not None:
        points = round((new.bottleneck_busy - base.bottleneck_busy) * 100, 1)
    return BottleneckChange(
        bottleneck_text(base.bottleneck, base.bottleneck_busy, BOTTLENECK_WIDTH),
        bottleneck_text(new.bottleneck, new.bottleneck_busy, BOTTLENECK_WIDTH),
        points,
    )


@dataclass
class Comparison:
    """Two runs query by query.

    Attributes:
        base_label / new_label: "Base" and "New", or the engines' names when the runs are of
            different engines (a Flink run against a Spark run on the same dataset).
    """

    threshold_pct: float
    queries: list[QueryComparison]
    setup_differences: list[str]
    base_label: str = "Base"
    new_label: str = "New"
    # What else each machine was doing (the system checks): context, not setup differences.
    context: list[str] = field(default_factory=list)

    @property
    def across_engines(self) -> bool:
        return (self.base_label, self.new_label) != ("Base", "New")

    def says(self, verdict: Verdict) -> str:
        """A verdict in words: across engines "improved" reads "<new engine> better"."""
        if self.across_engines and verdict is Verdict.IMPROVED:
            return f"{self.new_label} better"
        if self.across_engines and verdict is Verdict.REGRESSED:
            return f"{self.base_label} better"
        return verdict.value

    def count(self, verdict: Verdict) -> int:
        """Queries with this overall verdict."""
        return sum(1 for q in self.queries if q.verdict is verdict)

    @property
    def regressed(self) -> list[QueryComparison]:
        return [q for q in self.queries if q.verdict is Verdict.REGRESSED]


def judge(metric: Metric, percent: float | None, change: float, threshold_pct: float) -> Verdict:
    """The verdict of a change: within noise up to the threshold, else better or worse."""
    if percent is not None and abs(percent) <= threshold_pct:
        return Verdict.NOISE
    if change == 0:
        return Verdict.NOISE
    better = change > 0 if metric.higher_is_better else change < 0
    return Verdict.IMPROVED if better else Verdict.REGRESSED


def delta(metric: Metric, base: float | None, new: float | None, threshold_pct: float) -> Delta:
    """Compare one metric's values."""
    if base is None or new is None:
        return Delta(metric, base, new, None, None, Verdict.NA)
    change = new - base
    percent = change / abs(base) * 100 if base != 0 else None
    return Delta(metric, base, new, change, percent, judge(metric, percent, change, threshold_pct))


def _by_query(results: Sequence[QueryResult], side: str) -> dict[str, QueryResult]:
    out: dict[str, QueryResult] = {}
    for r in results:
        if r.query in out:
            raise ResultsError(
                f"{side} holds {r.query} twice (engines {out[r.query].engine}, {r.engine}); "
                "compare files of one engine"
            )
        out[r.query] = r
    return out


def _query(name: str, base: QueryResult | None, new: QueryResult | None, thr: float):
    if base is None or new is None:
        note = "only in the base run" if new is None else "only in the new run"
        return QueryComparison(name, base, new, Verdict.NA, note)
    if not base.ok or not new.ok:
        note = f"{base.status.value} -> {new.status.value}"
        reason = new.reason if not new.ok else base.reason
        note += f" ({reason})" if reason else ""
        verdict = Verdict.NA
        if base.ok != new.ok:
            verdict = Verdict.IMPROVED if new.ok else Verdict.REGRESSED
        return QueryComparison(name, base, new, verdict, note)
    deltas = [delta(m, field_value(base, m.key), field_value(new, m.key), thr) for m in METRICS]
    deltas[0] = _tested(deltas[0], repeat_values(base), repeat_values(new), thr)
    moved = bottleneck_change(base, new)
    if deltas[0].significance is not None:  # the test, not the noisier single figures, decides
        return QueryComparison(name, base, new, deltas[0].verdict, deltas=deltas, bottleneck=moved)
    verdicts = {d.verdict for d in deltas}
    overall = Verdict.NA
    for v in (Verdict.REGRESSED, Verdict.IMPROVED, Verdict.NOISE):
        if v in verdicts:
            overall = v
            break
    return QueryComparison(name, base, new, overall, deltas=deltas, bottleneck=moved)


def repeat_values(r: QueryResult) -> list[float]:
    """The throughput of each successful repeat (one value for a run without repeats)."""
    values = [x.throughput_eps for x in r.repeats if x.status == "ok" and x.throughput_eps]
    return values or ([r.throughput_eps] if r.throughput_eps is not None else [])


def _tested(d: Delta, base: list[float], new: list[float], threshold_pct: float) -> Delta:
    """The throughput's delta judged by the significance test where the values allow one: a
    difference must be significant and its interval wholly beyond the threshold (the
    run-to-run noise that repeats from one warm-up do not show)."""
    if not base or not new:
        return d
    if stats.min_p(len(base), len(new)) >= stats.ALPHA:
        note = f"{len(base)} and {len(new)} values: too few to test, threshold"
        return dataclasses.replace(d, note=note)
    diff = stats.difference(base, new, margin=threshold_pct / 100)
    verdict = {"faster": Verdict.IMPROVED, "slower": Verdict.REGRESSED}.get(
        diff.verdict, Verdict.NOISE
    )
    return dataclasses.replace(d, verdict=verdict, significance=diff)


def compare(
    base: Sequence[QueryResult],
    new: Sequence[QueryResult],
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
) -> Comparison:
    """Compare two runs, matching queries by name.

    Args:
        base: The reference run's results.
        new: The run under test.
        threshold_pct: Changes up to this many percent of the base value are noise.
    """
    if threshold_pct < 0:
        raise ValueError("the threshold must not be negative")
    b, n = _by_query(base, "BASE"), _by_query(new, "NEW")
    names = sorted(set(b) | set(n), key=query_order)
    queries = [_query(q, b.get(q), n.get(q), threshold_pct) for q in names]
    engines = [sorted({r.engine for r in side}) for side in (base, new)]
    if engines[0] and engines[1] and engines[0] != engines[1]:
        labels = ["+".join(e) for e in engines]
        diffs = setup_differences(base, new, across_engines=True)
        context = system_context(base, new, labels[0], labels[1])
        return Comparison(threshold_pct, queries, diffs, labels[0], labels[1], context)
    context = system_context(base, new, "Base", "New")
    return Comparison(threshold_pct, queries, setup_differences(base, new), context=context)


# -- rendering ---------------------------------------------------------------------------------

VERDICT_STYLES = {
    Verdict.IMPROVED: "green",
    Verdict.REGRESSED: "bold red",
    Verdict.NOISE: "dim",
    Verdict.NA: "dim",
}


def fmt_change(d: Delta) -> str:
    """'+12.3%' (or the signed change in the metric's unit when there is no percentage); for a
    tested throughput the ratio of the medians and its 95% interval: 'x0.912 [0.87, 0.95]'."""
    sig = d.significance
    if sig is not None:
        ci = f" [{sig.ci[0]:.2f}, {sig.ci[1]:.2f}]" if sig.ci else ""
        return f"x{sig.ratio:.3f}{ci}"
    if d.percent is not None:
        return f"{d.percent:+.1f}%"
    if d.change is None:
        return "-"
    sign = "+" if d.change >= 0 else "-"
    return sign + d.metric.fmt(abs(d.change))


def delta_says(c: Comparison, d: Delta) -> str:
    """A metric's verdict in words: a tested throughput says faster / slower / no significant
    difference, with p; a threshold verdict on too few repeats says so."""
    sig = d.significance
    if sig is None:
        return c.says(d.verdict) + (f" ({d.note})" if d.note else "")
    p = f" (p={sig.p:.3f})" if sig.p is not None else ""
    if sig.verdict in ("faster", "slower"):
        who = f"{c.new_label} " if c.across_engines else ""
        return f"{who}{sig.verdict}{p}"
    if sig.within_margin:
        return f"{sig.verdict} (p={sig.p:.3f}, but within the {c.threshold_pct:g}% threshold)"
    return f"{sig.verdict}{p}"


def summary_line(c: Comparison) -> str:
    """'queries: 3 improved, 2 regressed, 4 within noise (threshold 5%)', and how many
    throughput verdicts rest on the significance test."""
    counts = [f"{c.count(v)} {c.says(v)}" for v in Verdict if c.count(v)]
    tested = sum(1 for q in c.queries if q.deltas and q.deltas[0].significance is not None)
    how = f"threshold {c.threshold_pct:g}%"
    if tested:
        test = f"Mann-Whitney at {stats.ALPHA:.0%} over the repeats, beyond the {how}"
        how = (
            f"{tested} by {test}, the others by the {how}"
            if tested < len([q for q in c.queries if q.deltas])
            else test
        )
    return f"queries: {', '.join(counts) or 'none compared'} ({how})"


def comparison_table(c: Comparison) -> Any:
    """A Rich renderable: per query the metric rows, then the summary and setup warnings."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, padding=(0, 0, 0, 1), show_edge=False)
    for title, justify in (
        ("Query", "left"),
        ("Metric", "left"),
        (c.base_label, "right"),
        (c.new_label, "right"),
        ("Change", "right"),
        ("Verdict", "left"),
    ):
        table.add_column(title, justify=justify, no_wrap=True)
    for i, q in enumerate(c.queries):
        if i:
            table.add_section()
        if not q.deltas:  # a status change or a query on one side only
            style = VERDICT_STYLES[q.verdict]
            base, new = (r.status.value if r else "-" for r in (q.base, q.new))
            table.add_row(q.query, "status", base, new, "", Text(c.says(q.verdict), style=style))
        for j, d in enumerate(q.deltas):
            table.add_row(
                q.query if j == 0 else "",
                d.metric.title,
                d.metric.fmt(d.base),
                d.metric.fmt(d.new),
                fmt_change(d),
                Text(delta_says(c, d), style=VERDICT_STYLES[d.verdict]),
            )
        if q.bottleneck is not None:  # beside the verdicts, never one of them
            b = q.bottleneck
            table.add_row("", "Bottleneck", b.base, b.new, b.change, Text(NOT_JUDGED, style="dim"))
    parts: list[Any] = [table, Text(summary_line(c), style="bold")]
    if c.setup_differences:
        cause = "the engine's" if c.across_engines else "the code's"
        parts.append(
            Text(f"warning: the setups differ, so changes may not be {cause}:", style="yellow")
        )
        parts += [Text(f"  {line}", style="yellow") for line in c.setup_differences]
    if c.context:
        parts.append(Text("context (not setup differences):", style="dim"))
        parts += [Text(f"  {line}", style="dim") for line in c.context]
    return Group(*parts)


def _attr(value: Any) -> str:
    return escape(json.dumps(value))


def _html_rows(c: Comparison, q: QueryComparison) -> str:
    def row(
        metric: str, key: str, base: str, new: str, change: str, verdict: Verdict, data: str,
        says: str = "",
    ):  # fmt: skip
        return (
            f'<tr data-query="{escape(q.query)}" data-key="{escape(key)}"{data}>'
            f'<th scope="row">{escape(q.query)}</th><td class="text">{escape(metric)}</td>'
            f"<td>{escape(base)}</td><td>{escape(new)}</td><td>{escape(change)}</td>"
            f'<td class="text verdict-{verdict.name.lower()}">{escape(says or c.says(verdict))}'
            "</td></tr>"
        )

    if not q.deltas:
        base, new = (r.status.value if r else "-" for r in (q.base, q.new))
        return row("status", "status", base, new, q.note, q.verdict, "")
    rows = "".join(
        row(
            d.metric.title,
            d.metric.key,
            d.metric.fmt(d.base),
            d.metric.fmt(d.new),
            fmt_change(d),
            d.verdict,
            f' data-base="{_attr(d.base)}" data-new="{_attr(d.new)}"'
            f' data-percent="{_attr(d.percent)}" data-verdict="{escape(d.verdict.value)}"'
            + (f' data-p="{_attr(d.significance.p)}"' if d.significance else ""),
            delta_says(c, d),
        )
        for d in q.deltas
    )
    b = q.bottleneck
    if b is not None:
        points = f' data-points="{_attr(b.points)}"'
        rows += row(
            "Bottleneck", "bottleneck", b.base, b.new, b.change, Verdict.NA, points, NOT_JUDGED
        )
    return rows


def render_compare_html(c: Comparison, base_name: str, new_name: str) -> str:
    """A self-contained page with the comparison table, the summary and the setup warnings."""
    from nexmark.report.html import CSS

    rows = "".join(_html_rows(c, q) for q in c.queries)
    warn = ""
    if c.setup_differences:
        items = "".join(f"<li><code>{escape(d)}</code></li>" for d in c.setup_differences)
        warn = (
            '<div id="setup-warning"><p><b>The setups differ</b>, so changes may not be '
            f"the code's:</p><ul>{items}</ul></div>"
        )
    if c.context:
        items = "".join(f"<li>{escape(line)}</li>" for line in c.context)
        warn += (
            "<div id='system-context'><p>Context (not setup differences):</p>"
            f"<ul>{items}</ul></div>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>nexmark compare</title><style>{CSS}{_COMPARE_CSS}</style></head><body>"
        f"<h1>Nexmark comparison</h1><p class='meta'>base: <b>{escape(base_name)}</b> · "
        f"new: <b>{escape(new_name)}</b></p><p id='summary'><b>{escape(summary_line(c))}</b>. "
        "Lower is better for recovery time, checkpoint duration and state size.</p>"
        f"{warn}<table id='compare-table'><thead><tr><th>Query</th><th>Metric</th>"
        f"<th>{escape(c.base_label)}</th><th>{escape(c.new_label)}</th><th>Change</th>"
        f"<th>Verdict</th></tr></thead><tbody>{rows}</tbody></table>"
        "</body></html>\n"
    )


_COMPARE_CSS = """
.verdict-improved { color: #1a7f37; font-weight: 600; }
.verdict-regressed { color: #b00020; font-weight: 600; }
.verdict-noise, .verdict-na { color: #777; }
#setup-warning { background: #fff6e0; border: 1px solid #e8c66a; padding: .3em 1em; }
"""
