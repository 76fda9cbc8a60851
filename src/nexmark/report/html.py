"""The HTML report: one self-contained file (inline CSS, charts embedded as base64 PNG).

It opens without a network and without scripts. Every number in a table carries its exact
JSON value in `data-value` (and the field it comes from in `data-key`), so tests and scripts
can read the report back without parsing formatted text.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from nexmark import __version__
from nexmark.report.charts import chart_names, draw_all
from nexmark.report.operators import bottleneck_columns, operators_section
from nexmark.report.profile import profile_section
from nexmark.results.formats import (
    field_value,
    fmt_bytes,
    fmt_count,
    fmt_fixed,
    fmt_growth,
    fmt_latency,
    fmt_percent,
    fmt_rate,
)
from nexmark.results.query_result import QueryResult
from nexmark.results.setup import (
    Setup,
    SystemCheck,
    busiest,
    speed_line,
    speed_warnings,
    workers_line,
)
from nexmark.results.setup import busy as is_busy
from nexmark.results.table import (
    cell,
    kafka_line,
    label,
    not_scored,
    rate_line,
    scored,
    source_line,
    summary_columns,
    total_rows,
)

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1100px; padding: 0 1.2em 3em; color: #1d1d1f; }
h1 { margin-top: 1em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0; }
th, td { padding: .25em .7em; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td.text, td.reason, th.text { text-align: left; }
td { white-space: nowrap; } td.text, td.reason { white-space: normal; }
thead th { background: #f4f5f7; vertical-align: bottom; }
tr.total { font-weight: 600; border-top: 2px solid #999; }
td.flag { color: #a15c00; font-weight: 600; }
.status-failed, .status-timeout { color: #b00020; } .status-unsupported { color: #666; }
dl.metrics { display: grid; grid-template-columns: max-content max-content max-content max-content;
             gap: .15em 1.2em; } dl.metrics dt { color: #555; } dl.metrics dd { margin: 0; }
figure { margin: .8em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
p.meta { color: #555; } details summary { cursor: pointer; color: #333; }
code { font-size: 12px; }
"""


def _value_attrs(key: str, value: Any) -> str:
    return f' data-key="{escape(key)}" data-value="{escape(json.dumps(value))}"'


def _img(path: Path, alt: str, chart: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure><img data-chart="{escape(chart)}" alt="{escape(alt)}" '
        f'src="data:image/png;base64,{data}"></figure>'
    )


def _summary_table(results: Sequence[QueryResult]) -> str:
    columns = summary_columns(results) + bottleneck_columns(results)
    heads = "".join(f"<th>{escape(c.title)}</th>" for c in columns)
    rows = []
    for r in scored(results):
        cells = []
        for col in columns:
            value = field_value(r, col.key)
            flag = ' class="flag"' if col.key == "state_growth" and r.state_steady is False else ""
            cells.append(f"<td{flag}{_value_attrs(col.key, value)}>{escape(cell(r, col))}</td>")
        rows.append(
            f'<tr data-engine="{escape(r.engine)}" data-query="{escape(r.query)}">'
            f"<th scope='row'>{escape(label(r, results))}</th>{''.join(cells)}</tr>"
        )
    for name, total in total_rows(results):
        cells = "".join(
            f"<td{_value_attrs(c.key, total.get(c.key))}>{escape(c.fmt(total.get(c.key)))}</td>"
            for c in columns
        )
        rows.append(
            f'<tr class="total" data-query="{escape(name)}"><th scope="row">{escape(name)}</th>'
            f"{cells}</tr>"
        )
    return (
        f'<table id="summary-table"><thead><tr><th>Query</th>{heads}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _rate_note(results: Sequence[QueryResult]) -> str:
    """A rate-fed run's lag trend, release accuracy and harness cost under the summary."""
    line = "\n".join(x for x in (rate_line(results), kafka_line(results)) if x)
    if not line:
        return ""
    return "".join(f"<p class='meta rate-feed'>{escape(t)}</p>" for t in line.split("\n"))


def _source_note(results: Sequence[QueryResult]) -> str:
    """The data path's ceiling (the run's source-only calibration) under the summary."""
    line = source_line(results)
    if not line:
        return ""
    return "".join(f"<p class='meta' id='source-ceiling'>{escape(t)}</p>" for t in line.split("\n"))


def _failures_table(results: Sequence[QueryResult]) -> str:
    failed = not_scored(results)
    if not failed:
        return ""
    rows = "".join(
        f'<tr data-engine="{escape(r.engine)}" data-query="{escape(r.query)}">'
        f"<th scope='row'>{escape(label(r, results))}</th>"
        f'<td class="text status-{r.status.value}">{escape(r.status.value)}</td>'
        f'<td class="reason">{escape(r.reason or "-")}</td></tr>'
        for r in failed
    )
    return (
        '<h3>Not scored</h3><table id="not-scored"><thead><tr><th>Query</th>'
        f'<th class="text">Status</th><th class="text">Reason</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _yes_no(v: bool | None) -> str:
    return "-" if v is None else ("yes" if v else "no")


# Per-query details: (field path, label, formatter), shown for every query that has them.
DETAILS: tuple[tuple[str, str, Any], ...] = (
    ("events_benchmark", "benchmark events", fmt_count),
    ("events_warmup", "warm-up events", fmt_count),
    ("time_s", "time (s)", fmt_fixed(3)),
    ("throughput_eps", "throughput", fmt_rate),
    ("cores", "cores", fmt_fixed(2)),
    ("throughput_per_core", "throughput per core", fmt_rate),
    ("cost_core_s_per_million", "cost (core-s per million events)", fmt_fixed(3)),
    ("recovery_time_s", "recovery time (s)", fmt_fixed(3)),
    ("time_to_first_event_s", "time to first event (s)", fmt_fixed(3)),
    ("time_to_steady_s", "time to steady speed (s)", fmt_fixed(3)),
    ("first_read_gap_s", "every task running to first event read (s)", fmt_fixed(3)),
    ("watermark_lag_warmup_end_s", "watermark lag at the end of the warm-up (s)", fmt_fixed(1)),
    ("watermark_lag_max_s", "watermark lag, benchmark max (s)", fmt_fixed(1)),
    ("phase_checkpoint.id", "phase checkpoint id", lambda v: "-" if v is None else str(v)),
    ("phase_checkpoint.duration_s", "phase checkpoint duration (s)", fmt_fixed(3)),
    ("phase_checkpoint.checkpointed_bytes", "phase checkpoint written", fmt_bytes),
    ("phase_checkpoint.state_bytes", "phase checkpoint full size", fmt_bytes),
    ("checkpoints.count", "benchmark checkpoints", fmt_count),
    ("checkpoints.failed", "failed checkpoints", fmt_count),
    ("checkpoints.duration_median_s", "checkpoint duration median (s)", fmt_fixed(3)),
    ("checkpoints.duration_max_s", "checkpoint duration max (s)", fmt_fixed(3)),
    ("checkpoints.checkpointed_bytes_median", "checkpointed size median", fmt_bytes),
    ("state_bytes_end", "end checkpoint full size", fmt_bytes),
    ("checkpoint_growth", "checkpoint size growth", fmt_fixed(2)),
    ("state_logical_bytes_start", "logical state at the cut", fmt_bytes),
    ("state_logical_bytes_end", "logical state at the end", fmt_bytes),
    ("state_live_bytes_end", "live state at the end", fmt_bytes),
    ("state_live_keys_end", "entries in state at the end", fmt_count),
    ("state_trend_per_s", "live state trend (share per second)", fmt_fixed(4)),
    ("state_growth", "state growth", fmt_growth),
    ("state_measure", "growth judged on", lambda v: v or "-"),
    ("state_reads", "live reads judged", fmt_count),
    ("state_pooled_repeats", "repeats pooled for the growth", fmt_count),
    ("state_live_unflushed", "live reads were memtables (not judged)", _yes_no),
)


def _query_section(r: QueryResult, results: Sequence[QueryResult], charts: dict[str, Path]) -> str:
    items = []
    for key, name, fmt in DETAILS:
        value = field_value(r, key)
        items.append(
            f"<dt>{escape(name)}</dt><dd{_value_attrs(key, value)}>{escape(fmt(value))}</dd>"
        )
    status = f'<span class="status-{r.status.value}">{escape(r.status.value)}</span>'
    reason = f": {escape(r.reason)}" if r.reason else ""
    restored = (
        f"<p class='meta'>restored from <code>{escape(r.restored_from)}</code></p>"
        if (r.restored_from)
        else ""
    )
    if r.state_bound:
        restored += f"<p class='meta state-bound'>state bounded by: {escape(r.state_bound)}</p>"
    if r.steady_reason:  # a "not judged: ..." reason says so itself
        verdict = "" if r.state_steady is None else "not steady: "
        restored += f"<p class='meta flag'>{verdict}{escape(r.steady_reason)}</p>"
    if r.phase_too_short:
        restored += f"<p class='meta flag'>too short: {escape(r.phase_too_short)}</p>"
    if r.failover.mode is not None:
        restored += f"<p class='meta failover'>{escape(failover_line(r))}</p>"
    if r.sustainable.trials:
        restored += f"<p class='meta sustainable'>{escape(sustainable_line(r))}</p>"
    elif len(r.repeats) > 1:
        restored += f"<p class='meta repeats'>{escape(repeats_line(r))}</p>"
    if r.latency.p50_s is not None:
        restored += f"<p class='meta latency'>{escape(latency_line(r))}</p>"
    names = chart_names(r)
    busy = charts.get(names.pop("operators", "").removesuffix(".png"))  # in its own section
    busy_chart = _img(busy, f"{r.query} operators' busy share", "operators") if busy else ""
    figures = "".join(
        _img(charts[name.removesuffix(".png")], f"{r.query} {kind}", kind)
        for kind, name in names.items()
    )
    if not figures:
        figures = "<p class='meta'>Nothing was measured for this query.</p>"
    return (
        f'<section class="query" id="query-{escape(r.engine)}-{escape(r.query)}" '
        f'data-engine="{escape(r.engine)}" data-query="{escape(r.query)}">'
        f"<h3>{escape(label(r, results))} ({status}{reason})</h3>{restored}"
        f'<dl class="metrics">{"".join(items)}</dl>{operators_section(r, busy_chart)}'
        f"{profile_section(r)}{figures}</section>"
    )


def repeats_line(r: QueryResult) -> str:
    """The repeats of a query's benchmark phase in one sentence: each one's throughput (or why
    it failed) and the statistics; the figures above are the median repeat's."""
    st = r.throughput_stats
    each = ", ".join(
        fmt_rate(x.throughput_eps) if x.status == "ok" else f"{x.status} ({x.reason})"
        for x in r.repeats
    )
    ci = (
        f", 95% interval of the median {fmt_rate(st.ci_low)} to {fmt_rate(st.ci_high)}"
        if st.ci_low is not None
        else ""
    )
    sd = f", standard deviation {fmt_rate(st.stdev)}" if st.stdev is not None else ""
    return (
        f"{len(r.repeats)} benchmark phases restored from the phase checkpoint: {each}; median "
        f"{fmt_rate(st.median)} over {st.n} (repeat {st.median_repeat}, whose figures these "
        f"are){sd}{ci}"
    )


def latency_line(r: QueryResult) -> str:
    """A rate-fed phase's event-time latency in one sentence (docs/protocol.md)."""
    lat = r.latency
    return (
        f"event-time latency at {fmt_rate(r.rate.asked_eps)}: p50 {fmt_latency(lat.p50_s)}, "
        f"p95 {fmt_latency(lat.p95_s)}, p99 {fmt_latency(lat.p99_s)}, max "
        f"{fmt_latency(lat.max_s)} over {fmt_count(lat.rows)} rows, measured from "
        f"{lat.depends} (sample {fmt_percent(lat.sample)}; watermark delay "
        f"{lat.watermark_delay_s:g} s)"
    )


def sustainable_line(r: QueryResult) -> str:
    """A rate search in one sentence: the rate found, each trial and its verdict."""
    s = r.sustainable
    each = "; ".join(
        f"{fmt_rate(x.rate_asked_eps)} {'kept up' if x.sustained else 'not'} ({x.verdict})"
        for x in r.repeats
    )
    found = (
        "no rate tried was sustained" if s.rate_eps is None else f"sustains {fmt_rate(s.rate_eps)}"
    )
    return (
        f"{found} below the source ceiling {fmt_rate(s.upper_eps)}, in {s.trials} trials restored "
        f"from one warm-up ({s.stopped}): {each}; the figures are the highest sustained trial's"
    )


def failover_line(r: QueryResult) -> str:
    """A failover run's outage in one sentence (docs/failover.md)."""
    f = r.failover

    def secs(v: float | None) -> str:
        return "-" if v is None else f"{v:.2f} s"

    killed = f"killed {f.killed}" if f.killed else "a failure observed"
    return (
        f"failover: {killed} at {fmt_count(f.kill_events)} events; detected after "
        f"{secs(f.detect_s)}, running again after {secs(f.restore_s)}, at the rate before after "
        f"{secs(f.catch_up_rate_s)}, past the kill point after {secs(f.catch_up_kill_point_s)}; "
        f"{fmt_count(f.events_replayed)} events read again (restored at "
        f"{fmt_count(f.events_at_restore)}); throughput {fmt_rate(f.throughput_with_outage_eps)} "
        f"with the outage, {fmt_rate(f.throughput_without_outage_eps)} without"
    )


def _kv_table(rows: Iterable[tuple[str, Any]], table_id: str) -> str:
    body = "".join(
        f'<tr><td class="text">{escape(str(k))}</td><td class="text">{escape(_text(v))}</td></tr>'
        for k, v in rows
    )
    return f'<table id="{escape(table_id)}"><tbody>{body}</tbody></table>'


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (dict, list, bool)):
        return json.dumps(value)
    return str(value)


def _machine_rows(s: Setup) -> list[tuple[str, Any]]:
    m = s.machine
    return [
        ("cores", m.cores),
        ("physical cores", m.physical_cores),
        ("memory", fmt_bytes(m.memory_bytes) if m.memory_bytes else None),
        ("CPU", m.cpu_model),
        ("OS", m.os),
        ("Python", m.python),
        ("Java", m.java),
    ]


def _system_rows(check: SystemCheck, members: Sequence[QueryResult]) -> list[tuple[str, Any]]:
    """The system check before the run, and the queries before which others were busy."""
    load = check.load_avg
    other = check.other_cores
    rows: list[tuple[str, Any]] = [
        ("load average (1/5/15 min)", " ".join(f"{v:.2f}" for v in load) if load else None),
        ("CPUs", check.cpus),
        ("frequency governor", check.governor),
        ("boost / turbo", check.boost),
        (
            "other processes",
            None if other is None else f"{other:.2f} cores over {check.window_s or 0:.1f} s",
        ),
        ("busiest others", busiest(check) or None),
        ("note", check.note),
    ]
    if check.speed is not None:
        rows.append(("speed (yardstick)", speed_line(check.speed).removeprefix("speed: ")))
        rows.extend(
            ("warning", w.removeprefix("warning: "))
            for w in speed_warnings(check.speed, check.cpus)
        )
    busy = [r for r in members if is_busy(r.system_check)]
    if busy:
        named = ", ".join(f"{r.query} ({r.system_check.other_cores:.2f} cores)" for r in busy)
        rows.append(("busy before queries", named))
    return rows


def _setup_section(results: Sequence[QueryResult]) -> str:
    """Each distinct setup once, with the queries it applies to (usually one for the run)."""
    groups: dict[str, list[QueryResult]] = {}
    for r in results:
        key = json.dumps(dataclasses.asdict(r.setup), sort_keys=True)
        groups.setdefault(key, []).append(r)
    parts = []
    for i, members in enumerate(groups.values()):
        s = members[0].setup
        engine = [("engine", members[0].engine), ("target", s.engine_target)]
        if s.workers:  # a cluster: who ran the jobs
            engine.append(("workers", workers_line(s.workers)))
        system = _system_rows(s.system_check, members)
        scope = ""
        if len(groups) > 1:
            scope = (
                f"<p class='meta'>for {escape(', '.join(label(r, results) for r in members))}</p>"
            )
        parts.append(
            f"{scope}<h3>Machine</h3>{_kv_table(_machine_rows(s), f'machine-{i}')}"
            + (
                f"<h3>System check before the run</h3>{_kv_table(system, f'system-{i}')}"
                if s.system_check.at is not None  # older results have none
                else ""
            )
            + f"<h3>Engine</h3>{_kv_table(engine, f'engine-{i}')}"
            f"<h3>Versions</h3>{_kv_table(sorted(s.versions.items()), f'versions-{i}')}"
            f"<h3>Run options</h3>{_kv_table(sorted(s.options.items()), f'options-{i}')}"
            f"<details><summary>Engine configuration ({len(s.engine_config)} settings)</summary>"
            f"{_kv_table(sorted(s.engine_config.items()), f'config-{i}')}</details>"
        )
    return "".join(parts)


def _header(results: Sequence[QueryResult]) -> str:
    if not results:
        return "<h1>Nexmark results</h1><p class='meta'>No results recorded.</p>"
    first = results[0]
    runs = sorted({r.run_id for r in results})
    engines = sorted({f"{r.engine} {r.engine_version or ''}".strip() for r in results})
    facts = [
        ("run", ", ".join(runs)),
        ("engine", ", ".join(engines)),
        ("started", first.started_at),
        ("dataset", first.dataset_id),
        (
            "events",
            f"{fmt_count(first.events_total)} ({fmt_count(first.events_warmup)} warm-up, "
            f"{fmt_count(first.events_benchmark)} benchmark)",
        ),
    ]
    meta = " · ".join(f"{k}: <b>{escape(_text(v))}</b>" for k, v in facts)
    return f"<h1>Nexmark results</h1><p class='meta'>{meta}</p>"


def render_html(results: Sequence[QueryResult], charts: dict[str, Path]) -> str:
    """The report page for `results`, embedding the charts drawn by `charts.draw_all`."""
    summary = (
        _img(charts["summary"], "throughput per query", "summary") if ("summary" in charts) else ""
    )
    queries = "".join(_query_section(r, results, charts) for r in results)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>nexmark report {escape(', '.join(sorted({r.run_id for r in results})))}</title>"
        f"<style>{CSS}</style></head><body>{_header(results)}"
        f'<section id="summary"><h2>Summary</h2>{_summary_table(results)}'
        f"{_source_note(results)}{_rate_note(results)}{_failures_table(results)}{summary}</section>"
        f'<section id="queries"><h2>Queries</h2>{queries}</section>'
        f'<section id="setup"><h2>Setup</h2>{_setup_section(results)}</section>'
        f"<footer><p class='meta'>Made by nexmark {escape(__version__)}. "
        "Only the benchmark phase is scored; docs/reports.md explains every column.</p></footer>"
        "</body></html>\n"
    )


def write_html_report(results: Sequence[QueryResult], out: Path) -> Path:
    """Draw the charts into `out`'s folder `charts/` and write the page to `out`."""
    charts = draw_all(results, out.parent / "charts")
    out.write_text(render_html(results, charts), encoding="utf-8")
    return out


def write_report(results_path: str | Path, out: str | Path | None = None) -> Path:
    """Write the HTML report of a results directory (or results.json) and its PNG charts.

    Args:
        results_path: A results directory, or a results.json file.
        out: The HTML file; default `report.html` beside results.json. Charts go to the
            folder `charts/` beside it.

    Returns:
        The path of the HTML file.

    Raises:
        ResultsError: the results cannot be read.
    """
    from nexmark.results.store import load_results

    results_path = Path(results_path)
    results = load_results(results_path)
    folder = results_path if results_path.is_dir() else results_path.parent
    return write_html_report(results, Path(out) if out is not None else folder / "report.html")


def write_runs_report(results_paths: Sequence[str | Path], out: str | Path) -> Path:
    """One report of several runs (e.g. a Flink run and a Spark run on the same dataset): the
    summary table and chart show every engine's queries side by side.

    Raises:
        ResultsError: a results file cannot be read, or two runs hold the same engine's query.
    """
    from nexmark.results.codec import ResultsError
    from nexmark.results.store import load_results

    results: list[QueryResult] = []
    seen: dict[tuple[str, str], str] = {}
    for path in results_paths:
        for r in load_results(path):
            key = (r.engine, r.query)
            if key in seen:
                raise ResultsError(
                    f"{r.engine} {r.query} is in both {seen[key]} and {path}: "
                    "give one run per engine"
                )
            seen[key] = str(path)
            results.append(r)
    return write_html_report(results, Path(out))
