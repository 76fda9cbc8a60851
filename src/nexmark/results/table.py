"""The summary table, like the reference runner's, plus the two-phase columns and a Total row.

The columns are data (`COLUMNS`): the terminal table and the HTML report render the same
values with the same formatting, so a number reads the same everywhere. Each column's `key`
is the result field it shows (a dotted path for nested ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from nexmark.console import human_count
from nexmark.results.figures import TWO_POINT_MARKS
from nexmark.results.flag_tables import (
    failures_table,
    shared_table,
    short_table,
    unsteady_table,
)
from nexmark.results.formats import (
    field_value,
    fmt_bytes,
    fmt_count,
    fmt_fixed,
    fmt_growth,
    fmt_latency,
    fmt_percent,
    fmt_rate,
    fmt_rate_short,
    label,
)
from nexmark.results.kafka_table import broker_cores, from_kafka, kafka_line
from nexmark.results.operator_lines import bottleneck_line
from nexmark.results.operators import bottleneck_text
from nexmark.results.query_result import QueryResult
from nexmark.results.setup import busy as is_busy
from nexmark.results.setup import summary_line
from nexmark.results.steady import STATE_GROWTH_LIMIT


@dataclass(frozen=True)
class Column:
    """One column of the summary.

    Attributes:
        key: The result field shown (dotted path).
        title: The header, as in the reference runner where it has the column.
        fmt: Formats a value (None prints as '-').
    """

    key: str
    title: str
    fmt: Callable[[Any], str]


COLUMNS: tuple[Column, ...] = (
    Column("events_benchmark", "Events Num", fmt_count),
    Column("cores", "Cores", fmt_fixed(2)),
    Column("time_s", "Time(s)", fmt_fixed(3)),
    Column("throughput_eps", "Throughput", fmt_rate),
    Column("recovery_time_s", "Recovery Time(s)", fmt_fixed(3)),
    Column("throughput_per_core", "Throughput /Core", fmt_rate),
    Column("source_ratio", "Of Source", fmt_percent),
    Column("phase_checkpoint.duration_s", "Phase Ckpt(s)", fmt_fixed(3)),
    # The state at the phase's end (its logical size, else the backend's live estimate; rows
    # where it gives only a count), the end checkpoint's full size (files, dead entries
    # included), and the growth over the phase, judged on the live state where there is one
    # (docs/protocol.md).
    Column("state_end_bytes", "State", fmt_bytes),
    Column("state_bytes_end", "Ckpt Size", fmt_bytes),
    Column("state_growth", "Growth", fmt_growth),
)


# A rate-fed run's columns (`nexmark run --rate`), after COLUMNS: the rate asked, the rate the
# feed delivered, and the largest lag (events released and not yet read at a sample).
RATE_COLUMNS: tuple[Column, ...] = (
    Column("rate.asked_eps", "Rate Asked", fmt_rate),
    Column("rate.delivered_eps", "Rate Delivered", fmt_rate),
    Column("rate.lag_max_events", "Max Lag", fmt_count),
)


def rate_fed(results: Sequence[QueryResult]) -> list[QueryResult]:
    """The scored results of `--rate` runs (a rate search's trials have sustainable_table)."""
    return [r for r in scored(results) if r.rate.asked_eps is not None and not r.sustainable.trials]


def rate_columns(results: Sequence[QueryResult]) -> tuple[Column, ...]:
    """RATE_COLUMNS when a scored result was rate-fed, else none (a full-speed run's table is
    unchanged)."""
    return RATE_COLUMNS if rate_fed(results) else ()


SOURCE_CORES = Column("source_cores", "Broker Cores", fmt_fixed(2))


def summary_columns(results: Sequence[QueryResult]) -> tuple[Column, ...]:
    """COLUMNS (Broker Cores after Cores from Kafka), then those only some runs have."""
    if from_kafka(results):
        at = [c.key for c in COLUMNS].index("cores") + 1
        return (*COLUMNS[:at], SOURCE_CORES, *COLUMNS[at:]) + rate_columns(results)
    return COLUMNS + rate_columns(results)


def rate_line(results: Sequence[QueryResult]) -> str | None:
    """Under the table of a rate-fed run: per query, the lag's trend (kept up: it grew by less
    than 1% of the rate), the largest 5 s deviation of the release and the harness's cost
    (None when no result was rate-fed)."""
    fed = rate_fed(results)
    if not fed:
        return None
    lines = [
        "Rate: the benchmark part released on the wall clock at Rate Asked (the warm-up at full "
        "speed); Max Lag = the most events released and not yet read at a sample"
    ]
    for r in fed:
        f = r.rate
        trend = "-" if f.lag_trend_eps is None else f"{f.lag_trend_eps:+,.0f} events/s"
        kept = ""
        if f.lag_trend_eps is not None and f.asked_eps:
            # A falling lag (catching up after a cold first batch) kept up too.
            kept = " (kept up)" if f.lag_trend_eps < 0.01 * f.asked_eps else " (fell behind)"
        error = "-" if f.max_error_5s is None else f"{f.max_error_5s * 100:.1f}%"
        cost = "-" if f.releaser_cores is None else f"{f.releaser_cores * 100:.2f}% of a core"
        lines.append(
            f"{label(r, results)}: lag trend {trend}{kept}, lag at the end "
            f"{fmt_count(f.lag_end_events)}, release off by at most {error} over 5 s, "
            f"releaser {cost}"
        )
    return "\n".join(lines)


def spread(result: QueryResult) -> float | None:
    """The throughput's relative spread over the repeats: standard deviation / median."""
    st = result.throughput_stats
    if not st.n or st.n < 2 or st.stdev is None or not st.median:
        return None
    return st.stdev / st.median


def fmt_with_spread(result: QueryResult) -> str:
    """The median throughput and its spread: '741 K/s ±3%' (one value: as `fmt_rate`)."""
    rel = spread(result)
    if rel is None or result.throughput_eps is None:
        return fmt_rate(result.throughput_eps)
    return f"{fmt_rate_short(result.throughput_eps)} ±{rel * 100:.0f}%"


def cell(result: QueryResult, col: Column) -> str:
    """One query's cell: the formatted value; "invalid" for a ratio to a ceiling the query
    exceeded (the ceiling, not the query, was wrong: see `source_line`), "short" for one to a
    ceiling whose read was too short to resolve; the throughput of repeats with its spread."""
    if col.key == "source_ratio" and result.source_invalid:
        return "invalid"
    if col.key == "source_ratio" and result.source.too_short:
        return "short"  # a share of a ceiling the read could not resolve (`source_line`)
    if col.key == "throughput_eps":
        return fmt_with_spread(result)
    if col.key == "state_end_bytes" and result.state_end_bytes is None:
        keys = result.state_live_keys_end  # an engine that counts rows, not bytes
        return "-" if keys is None else f"{human_count(keys)} rows"
    if col.key == "state_growth" and result.state_measure in TWO_POINT_MARKS:  # no live trend
        return f"{col.fmt(result.state_growth)} ({TWO_POINT_MARKS[result.state_measure]})"
    if col.key == "state_growth" and result.state_steady is None and result.steady_reason:
        return "not judged"
    if col.key == "time_s" and result.phase_too_short:
        return f"{col.fmt(result.time_s)} short"
    if col.key == "bottleneck":  # the HTML report's column: the vertex and its share
        return bottleneck_text(result.bottleneck, result.bottleneck_busy)
    return col.fmt(field_value(result, col.key))


def scored(results: Sequence[QueryResult]) -> list[QueryResult]:
    return [r for r in results if r.ok]


def not_scored(results: Sequence[QueryResult]) -> list[QueryResult]:
    return [r for r in results if not r.ok]


def totals(results: Sequence[QueryResult]) -> dict[str, float | int | None]:
    """The Total row over the scored queries.

    Events, times, recovery times, phase-checkpoint durations and state sizes add up;
    throughput = total events / total time; cores = total core-seconds / total time (the
    time-weighted mean); throughput per core = total throughput / total cores.
    """
    ok = scored(results)
    timed = [r for r in ok if r.time_s is not None and r.events_benchmark is not None]
    events = sum(r.events_benchmark for r in timed)
    time_s = sum(r.time_s for r in timed)
    cored = [r for r in timed if r.cores is not None]
    core_time = sum(r.time_s for r in cored)
    cores = sum(r.cores * r.time_s for r in cored) / core_time if core_time else None
    throughput = events / time_s if time_s else None
    out: dict[str, float | int | None] = {key: None for key in (c.key for c in COLUMNS)}
    out.update(
        events_benchmark=events if timed else None,
        time_s=time_s if timed else None,
        cores=cores,
        throughput_eps=throughput,
        throughput_per_core=throughput / cores if throughput and cores else None,
    )
    out["source_cores"] = broker_cores(timed)
    sources = {r.source.throughput_eps for r in timed}
    source = sources.pop() if len(sources) == 1 else None  # one calibration for them all
    if any(r.source_invalid or r.source.too_short for r in timed):
        source = None  # no ceiling for the total either
    out["source_ratio"] = throughput / source if throughput and source else None
    keys = (
        "recovery_time_s",
        "phase_checkpoint.duration_s",
        "state_end_bytes",
        "state_bytes_end",
    )
    for key in keys:
        values = [field_value(r, key) for r in ok if field_value(r, key) is not None]
        out[key] = sum(values) if values else None
    return out


def total_rows(results: Sequence[QueryResult]) -> list[tuple[str, dict]]:
    """("Total", totals) for one engine; one ("<engine>:Total", totals) per engine for several
    (a sum over two engines' runs would be no one's throughput)."""
    engines = sorted({r.engine for r in results})
    if len(engines) <= 1:
        return [("Total", totals(results))]
    return [(f"{e}:Total", totals([r for r in results if r.engine == e])) for e in engines]


def summary_table(
    results: Sequence[QueryResult], title: str | None = None, width: int = 100
) -> Table:
    """The scored queries, one row each, and the Total row.

    Args:
        width: The columns available; numbers are never cut, so when the two-character gaps
            between columns do not fit (a full run's totals are wide), the gaps shrink to one.
    """
    ok, total = scored(results), total_rows(results)
    columns = summary_columns(results)
    rows = [[cell(r, col) for col in columns] for r in ok]
    rows += [[col.fmt(t.get(col.key)) for col in columns] for _, t in total]
    widths = []
    for i, col in enumerate(columns):
        # A number column is as wide as its widest value (or header word); headers wrap.
        widest = max(max(len(row[i]) for row in rows), *(len(w) for w in col.title.split()))
        if col.key == "state_growth":  # "1.31 not steady" takes two lines if space is short
            widest = min(widest, len("1.31 not"))
        widths.append(widest)
    first = max(len(name) for name, _ in total)
    first = max(first, *(len(label(r, results)) for r in ok)) if ok else first
    gap = 2 if first + sum(widths) + 2 * len(columns) <= width else 1
    # No edges, no vertical rules: the blank rule between columns plus (gap - 1) of padding.
    table = Table(
        title=title, box=box.SIMPLE_HEAD, padding=(0, 0, 0, gap - 1), show_edge=False,
        pad_edge=False,
    )  # fmt: skip
    table.add_column("Query", no_wrap=True)
    for col, widest in zip(columns, widths, strict=True):
        if col.key == "state_growth":
            table.add_column(col.title, justify="right", min_width=widest)
        else:
            table.add_column(col.title, justify="right", width=widest)
    for r, cells in zip(ok, rows, strict=False):
        texts = [Text(c) for c in cells]
        if r.state_growth is not None and r.state_growth > STATE_GROWTH_LIMIT:
            texts[[c.key for c in columns].index("state_growth")].stylize("bold yellow")
        table.add_row(label(r, results), *texts)
    table.add_section()
    for (name, _), cells in zip(total, rows[len(ok) :], strict=True):
        table.add_row(name, *cells, style="bold")
    return table


def failover_table(results: Sequence[QueryResult]) -> Table | None:
    """The outage of each failover run (docs/failover.md): seconds from the kill to the engine
    noticing, to running again, to the rate before it and to the kill point read again; the
    events read twice; the throughput with the outage and without (None if no failover)."""
    runs = [r for r in results if r.failover.mode is not None]
    if not runs:
        return None
    table = Table(title="Failover", box=box.SIMPLE_HEAD, padding=(0, 1))
    columns = ("Detect(s)", "Restore(s)", "Rate(s)", "Kill pt(s)", "Replayed", "With", "Without")
    table.add_column("Query", no_wrap=True)
    for name in columns:
        table.add_column(name, no_wrap=True, justify="right")
    seconds = fmt_fixed(2)
    for r in runs:
        f = r.failover
        table.add_row(
            label(r, results),
            seconds(f.detect_s),
            seconds(f.restore_s),
            seconds(f.catch_up_rate_s),
            seconds(f.catch_up_kill_point_s),
            fmt_count(f.events_replayed),
            fmt_rate(f.throughput_with_outage_eps),
            fmt_rate(f.throughput_without_outage_eps),
        )
    return table


def latency_cell(result: QueryResult) -> str:
    """A rate-fed run's event-time latency, 'p50 / p99'; empty where none was measured."""
    lat = result.latency
    if lat.p50_s is None:
        return ""
    return f"{fmt_latency(lat.p50_s)} / {fmt_latency(lat.p99_s)}"


def latency_table(results: Sequence[QueryResult]) -> Table | None:
    """The event-time latency of each rate-fed query (docs/protocol.md): the rate asked, the
    percentiles, the rows measured and what from (None when no result has a latency)."""
    runs = [r for r in results if r.ok and r.latency.p50_s is not None]
    if not runs:
        return None
    table = Table(title="Event-time latency", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("Query", no_wrap=True)
    for name in ("Rate", "p50 / p99", "p95", "Max", "Rows"):
        table.add_column(name, no_wrap=True, justify="right")
    table.add_column("From", overflow="fold")
    for r in runs:
        lat = r.latency
        table.add_row(
            label(r, results),
            fmt_rate(r.rate.asked_eps),
            latency_cell(r),
            fmt_latency(lat.p95_s),
            fmt_latency(lat.max_s),
            fmt_count(lat.rows),
            f"{lat.depends}; sample {fmt_percent(lat.sample)}",
        )
    return table


def repeats_line(results: Sequence[QueryResult]) -> str | None:
    """What the throughput of repeated runs means, and the repeats that failed (None when no
    result has more than one repeat)."""
    # A rate search's trials are not repeats of one measurement (sustainable_table shows them).
    many = [r for r in results if r.ok and len(r.repeats) > 1 and not r.sustainable.trials]
    if not many:
        return None
    counts = sorted({len(r.repeats) for r in many})
    warmups = sorted({r.throughput_stats.runs or 1 for r in many})
    source = (
        "one warm-up"
        if warmups == [1]
        else f"{'/'.join(map(str, warmups))} warm-ups (--runs), each restored for its share"
    )
    lines = [
        f"Throughput: the median of {'/'.join(map(str, counts))} benchmark phases restored from "
        f"{source}; ± standard deviation / median; the other columns are the median repeat's"
    ]
    for r in many:
        bad = [x for x in r.repeats if x.status != "ok"]
        if bad:
            lines.append(
                f"{r.query}: {len(bad)} of {len(r.repeats)} repeats {bad[0].status} "
                f"({bad[0].reason}); statistics over {r.throughput_stats.n}"
            )
    return "\n".join(lines)


def sustainable_table(results: Sequence[QueryResult]) -> Table | None:
    """The trials of each query's rate search and the rate found (`nexmark sustainable`;
    None when no result has one)."""
    searched = [r for r in results if r.sustainable.trials]
    if not searched:
        return None
    table = Table(title="Sustainable rate: trials", box=box.SIMPLE_HEAD, title_justify="left")
    for name in ("Query", "Trial", "Rate", "Delivered", "Read", "Lag trend", "Verdict"):
        table.add_column(name, justify="left" if name in ("Query", "Verdict") else "right")
    for r in searched:
        for x in r.repeats:
            asked = fmt_rate(x.rate_asked_eps)
            verdict = x.verdict or x.reason
            style = {True: "green", False: "red"}.get(x.sustained, "")
            table.add_row(
                r.query,
                str(x.index + 1),
                asked,
                fmt_rate(x.rate_delivered_eps),
                fmt_rate(x.throughput_eps),
                "-" if x.lag_trend_eps is None else f"{x.lag_trend_eps:,.0f}/s",
                Text(verdict or "", style=style),
            )
        s = r.sustainable
        found = "nothing sustained" if s.rate_eps is None else f"sustains {fmt_rate(s.rate_eps)}"
        share = ""
        if s.rate_eps and s.upper_eps:
            share = f" ({s.rate_eps / s.upper_eps:.0%} of the source ceiling)"
        table.add_row(
            r.query, "", Text(found + share, style="bold"), "", "", "",
            f"{s.trials} trials; {s.stopped}", end_section=True,
        )  # fmt: skip
    return table


def source_line(results: Sequence[QueryResult]) -> str | None:
    """The data path's ceiling the results were measured against, in one line (None when no
    result has one): the source-only calibration of each sitting, once."""
    seen: list[Any] = []
    for r in results:
        if r.source.status is not None and r.source not in seen:
            seen.append(r.source)
    lines = []
    for s in seen:
        if s.status != "ok":
            lines.append(f"Source ceiling: {s.status} ({s.reason or 'no reason given'})")
            continue
        cores = "-" if s.cores is None else f"{s.cores:.2f}"
        if s.too_short:
            lines.append(
                f"Source ceiling too short to resolve: {fmt_rate(s.throughput_eps)} on {cores} "
                f"cores, but {s.too_short}; Of Source is not given (short)"
            )
            continue
        warm = f", after {s.warm_reads} unscored read" if s.warm_reads else ", cold"
        lines.append(
            f"Source ceiling: {fmt_rate(s.throughput_eps)} on {cores} cores "
            f"({fmt_rate(s.throughput_per_core)} per core): the benchmark part's "
            f"{fmt_count(s.events)} events read and discarded at parallelism {s.parallelism}"
            f"{warm}; Of Source = Throughput / this"
        )
    invalid = [r for r in results if r.source_invalid]
    for r in invalid:
        lines.append(f"Source ceiling invalid for {r.query}: {r.source_invalid}")
    return "\n".join(lines) or None


def system_line(results: Sequence[QueryResult]) -> str | None:
    """The system check before the run (each distinct one once) and the queries before which
    other processes were busy, in a line each (None when nothing was checked)."""
    seen: list[Any] = []
    for r in results:
        check = r.setup.system_check
        if check.at is not None and check not in seen:
            seen.append(check)
    lines = [f"System check before the run: {summary_line(c)}" for c in seen]
    busy = [r for r in results if is_busy(r.system_check)]
    if busy:
        named = ", ".join(f"{r.query} {r.system_check.other_cores:.2f}" for r in busy)
        lines.append(f"Other processes busy (cores) before: {named}")
    return "\n".join(lines) or None


class ResultsView:
    """The summary and, below it, the queries not steady (with why) and those not scored,
    laid out for the width the console offers (see `summary_table`)."""

    def __init__(self, results: Sequence[QueryResult], title: str | None = None) -> None:
        self.results, self.title = list(results), title

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        parts: list[Any] = [summary_table(self.results, self.title, options.max_width)]
        lines = (
            repeats_line(self.results),
            source_line(self.results),
            kafka_line(self.results),
            system_line(self.results),
            rate_line(self.results),
            bottleneck_line(self.results),
        )
        for line in lines:
            if line:
                parts.append(Text(line, style="dim"))
        extras = (
            latency_table(self.results),
            sustainable_table(self.results),
            failover_table(self.results),
            short_table(self.results),
            shared_table(self.results),
            unsteady_table(self.results),
            failures_table(self.results),
        )
        for extra in extras:
            if extra is not None:
                parts.append(extra)
        yield from console.render(Group(*parts), options)


def results_renderable(results: Sequence[QueryResult], title: str | None = None) -> ResultsView:
    """The summary and the unscored queries, ready for `Console.print`."""
    return ResultsView(results, title)
