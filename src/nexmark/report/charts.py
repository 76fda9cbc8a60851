"""PNG charts of a run, drawn with matplotlib's Agg renderer (no display, no pyplot state).

Per query: a timeline (throughput, cores, watermark lag and the state, live and at each
checkpoint, through both phases, the restore gap shaded, every checkpoint marked, a failover's
outage shaded with its detection and catch-up marked), a checkpoint chart (duration,
checkpointed size, full state size) and, for a rate-fed benchmark phase, a rate chart (rate
read against the rate asked and delivered, and the lag), and its event-time latency over time
(p50 and max per second), and each operator's share of time busy through the scored phase
(`busy.py`).
For the run: throughput per query.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator

from nexmark.metrics import derive
from nexmark.report.busy import busy_figure, has_busy_chart
from nexmark.results.formats import fmt_bytes, fmt_rate
from nexmark.results.query_result import QueryResult

PHASE_COLORS = {
    "warmup": "#4C72B0",
    "restore": "#DD8452",
    "benchmark": "#55A868",
    "failover": "#C44E52",  # samples between a failover's kill and the job running again
}
KIND_STYLES = {  # checkpoint markers: colour, line style
    "periodic": ("#8C8C8C", ":"),
    "phase": ("#C44E52", "--"),
    "end": ("#8172B3", "--"),
}
DPI = 100
_META = {"Software": None}  # no matplotlib version in the file: same results, same bytes


def chart_names(result: QueryResult) -> dict[str, str]:
    """The chart files drawn for a query (empty when nothing was measured)."""
    names: dict[str, str] = {}
    if result.timeseries:
        names["timeline"] = f"{result.engine}-{result.query}-timeline.png"
    if result.checkpoint_events:
        names["checkpoints"] = f"{result.engine}-{result.query}-checkpoints.png"
    if result.latency.series:
        names["latency"] = f"{result.engine}-{result.query}-latency.png"
    if result.sustainable.trials:
        names["sustainable"] = f"{result.engine}-{result.query}-sustainable.png"
    elif rate_fed_samples(result):  # a `--rate` run (a search's trials have their own chart)
        names["rate"] = f"{result.engine}-{result.query}-rate.png"
    if has_busy_chart(result):  # drawn in the query's "where the time goes"
        names["operators"] = f"{result.engine}-{result.query}-operators.png"
    return names


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=DPI, metadata=_META)
    return path


def _axis_rate(v: float) -> str:
    """Compact tick labels: 150000 -> '150K'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:g}{unit}"
    return f"{v:g}"


def _rel(result: QueryResult, ts: float | None) -> float | None:
    start = result.timestamps.query_start
    return None if ts is None or start is None else ts - start


def _mark_phases(ax: Axes, result: QueryResult) -> None:
    """Shade the gap between the phases and draw a line at every checkpoint trigger."""
    t = result.timestamps
    cut, submit, running = (
        _rel(result, t.warmup_end),
        _rel(result, t.t_submit),
        _rel(result, t.t_running),
    )
    if cut is not None and submit is not None:
        ax.axvspan(cut, submit, color="#BBBBBB", alpha=0.35, lw=0, label="phase checkpoint, stop")
    if submit is not None and running is not None:
        ax.axvspan(submit, running, color=PHASE_COLORS["restore"], alpha=0.3, lw=0, label="restore")
    seen: set[str] = set()
    for cp in result.checkpoint_events:
        color, style = KIND_STYLES.get(cp.kind, KIND_STYLES["periodic"])
        name = f"{cp.kind} checkpoint" if cp.kind not in seen else None
        seen.add(cp.kind)
        ax.axvline(
            cp.t, color=color, ls=style, lw=1.2 if cp.status == "completed" else 2.0, label=name
        )
    _mark_outage(ax, result)


def _mark_outage(ax: Axes, result: QueryResult) -> None:
    """A failover: the kill to running again shaded, the detection and the point where the
    events read pass the kill point again marked (nothing when the kill time is unknown)."""
    f = result.failover
    if f.t_kill is None:
        return
    if f.restore_s is not None:
        ax.axvspan(f.t_kill, f.t_kill + f.restore_s, color="#C44E52", alpha=0.15, lw=0,
                   label="outage: kill to running")  # fmt: skip
    ax.axvline(f.t_kill, color="#C44E52", lw=1.8, label="kill")
    marks = (
        (f.detect_s, "-.", "detected"),
        (f.catch_up_kill_point_s, ":", "kill point read again"),
    )
    for offset, style, name in marks:
        if offset is not None:
            ax.axvline(f.t_kill + offset, color="#C44E52", ls=style, lw=1.4, label=name)


def _series(ax: Axes, result: QueryResult, attr: str) -> None:
    """One line per run of consecutive samples of a phase, so neither the restore gap nor a
    failover's outage is bridged by a line."""
    labelled: set[str] = set()
    runs: list[list] = []
    for s in result.timeseries:
        if not runs or runs[-1][0].phase != s.phase:
            runs.append([])
        runs[-1].append(s)
    for run in runs:
        phase = run[0].phase
        pts = [(s.t, getattr(s, attr)) for s in run if getattr(s, attr) is not None]
        if pts and phase in PHASE_COLORS:
            xs, ys = zip(*pts, strict=True)
            name = phase if phase not in labelled else None
            labelled.add(phase)
            ax.plot(xs, ys, color=PHASE_COLORS[phase], lw=1.5, marker=".", ms=3, label=name)


def timeline(result: QueryResult, path: Path) -> Path:
    """The query's timeline (`timeline_figure`) as a PNG."""
    return _save(timeline_figure(result), path)


def timeline_figure(result: QueryResult) -> Figure:
    """Throughput, cores, the watermark's lag behind the data and the state's size, through
    warm-up, restore and benchmark. Each point is at the time its count was true (the
    engine's metric time where it has one), each state size at its checkpoint's trigger."""
    fig = Figure(figsize=(10, 8.4))
    top, bottom, lag, state = fig.subplots(4, 1, sharex=True, height_ratios=(3, 2, 2, 2))
    # The legend sits right of the plots, where it cannot hide a phase.
    fig.subplots_adjust(left=0.095, right=0.80, top=0.95, bottom=0.07, hspace=0.06)
    _series(top, result, "throughput_eps")
    _mark_phases(top, result)
    top.set_ylabel("throughput (events/s)")
    top.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
    top.set_title(f"{result.query}: throughput through both phases ({result.engine})")
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    _series(bottom, result, "cores")
    _mark_phases(bottom, result)
    bottom.set_ylabel("cores")
    bottom.set_ylim(bottom=0)
    _series(lag, result, "watermark_lag_s")
    _mark_phases(lag, result)
    lag.set_ylabel("watermark lag (s)")
    lag.set_ylim(bottom=0)
    if not any(s.watermark_lag_s is not None for s in result.timeseries):
        lag.text(0.5, 0.5, "no event-time operator", transform=lag.transAxes, ha="center")
    _state_series(state, result)
    _mark_gap(state, result)
    state.set_xlabel("seconds since the query started")
    for ax in (top, bottom, lag, state):
        ax.grid(alpha=0.3)
    return fig


def _state_series(ax: Axes, result: QueryResult) -> None:
    """The state through both phases: the live state the backend measured (a line per phase,
    gid "live-<phase>"), the entries held on a second axis ("keys-<phase>", dotted), the line
    its growth was judged on over the benchmark phase ("live-trend", dashed) and each
    completed checkpoint's full size as points ("state-<phase>"; tests find the series by
    their gids). The checkpoints' sizes include what compaction has not removed yet: points
    above the live line are dead entries, not state."""
    cps = [c for c in result.checkpoint_events if c.status == "completed"]
    # The benchmark job starts with the state it restored: the phase checkpoint's.
    running, restored = _rel(result, result.timestamps.t_running), result.phase_checkpoint
    start = (
        [(running, restored.state_bytes)]
        if result.restored_from and running is not None and restored.state_bytes is not None
        else []
    )
    keys_ax = None
    values: list[float] = []
    for phase in ("warmup", "benchmark"):
        reads = _from_first_refresh([p for p in result.live_state if p.phase == phase])
        label = phase == "warmup" or not values  # each kind once in the legend
        live = [(p.t, p.bytes) for p in reads if p.bytes is not None]
        if live:
            xs, ys = zip(*live, strict=True)
            ax.plot(xs, ys, color=PHASE_COLORS[phase], lw=1.5, drawstyle="steps-post",
                    gid=f"live-{phase}", label="live state" if label else None)  # fmt: skip
            values += ys
        keys = [(p.t, p.keys) for p in reads if p.keys is not None]
        if keys:
            keys_ax = keys_ax or ax.twinx()
            xs, ys = zip(*keys, strict=True)
            keys_ax.plot(xs, ys, color=PHASE_COLORS[phase], lw=1, ls=":", drawstyle="steps-post",
                         gid=f"keys-{phase}")  # fmt: skip
            if label:  # the legend is the bytes axis': a stand-in line for the entries
                ax.plot([], [], color="#555555", lw=1, ls=":", label="entries (right)")
        pts = [(c.t, c.state_bytes) for c in cps if c.phase == phase and c.state_bytes is not None]
        pts += start if phase == "benchmark" and pts else []
        if pts:
            xs, ys = zip(*sorted(pts), strict=True)
            ax.plot(xs, ys, color=PHASE_COLORS[phase], ls="none", marker="o", ms=4, mfc="none",
                    gid=f"state-{phase}", label="checkpoint size" if label else None)  # fmt: skip
            values += ys
    _trend_line(ax, keys_ax, result)
    ax.set_ylabel("state")
    ax.set_ylim(bottom=0)
    if keys_ax is not None:
        keys_ax.set_ylabel("entries")
        keys_ax.set_ylim(bottom=0)
        keys_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
    if values:
        _byte_axis(ax, values)
        ax.legend(loc="upper left", bbox_to_anchor=(1.09, 1.0), fontsize=8, frameon=False)
    elif keys_ax is None:
        ax.text(0.5, 0.5, "no live state or checkpoint size reported", transform=ax.transAxes,
                ha="center")  # fmt: skip


def _from_first_refresh(reads: list) -> list:
    """A phase's live reads from the first one above zero: before it, a gauge not refreshed
    yet (Flink's read 0 until their first refresh, 5 s at most)."""
    first = next((i for i, p in enumerate(reads) if any(p.reading)), len(reads))
    return reads[first:]


def _trend_line(ax: Axes, keys_ax: Axes | None, result: QueryResult) -> None:
    """The line the growth was judged on, over the benchmark phase's refreshed reads."""
    if result.state_live_start is None or result.state_live_end is None:
        return
    index, axis = (1, keys_ax) if result.state_measure == "live keys" else (0, ax)
    bench = [(p.t, p.reading) for p in result.live_state if p.phase == "benchmark"]
    reads = derive.refreshed(bench)
    times = [t for t, values in reads if values[index] is not None]
    if axis is None or len(times) < 2:
        return
    axis.plot([times[0], times[-1]], [result.state_live_start, result.state_live_end],
              color="#333333", lw=1.2, ls="--", gid="live-trend",
              label=f"growth {result.state_growth:.2f}x")  # fmt: skip


def checkpoints_chart(result: QueryResult, path: Path) -> Path:
    """Per checkpoint: duration, checkpointed (incremental) size and full state size."""
    cps = [c for c in result.checkpoint_events if c.status == "completed"]
    failed = [c for c in result.checkpoint_events if c.status != "completed"]
    fig = Figure(figsize=(10, 6))
    axes = fig.subplots(3, 1, sharex=True)
    fig.subplots_adjust(left=0.11, right=0.80, top=0.95, bottom=0.08, hspace=0.08)
    panels = (
        ("duration_s", "duration (s)", None),
        ("checkpointed_bytes", "checkpointed", fmt_bytes),
        ("state_bytes", "full state", fmt_bytes),
    )
    width = max(0.6, _span(result) / 120)
    for ax, (attr, ylabel, fmt) in zip(axes, panels, strict=True):
        for phase in ("warmup", "benchmark"):
            pts = [(c.t, getattr(c, attr)) for c in cps if c.phase == phase]
            pts = [(t, v) for t, v in pts if v is not None]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.bar(xs, ys, width=width, color=PHASE_COLORS[phase], label=phase)
        for c in failed:
            ax.axvline(c.t, color="#C44E52", lw=2, label="failed" if c is failed[0] else None)
        outlined: set[str] = set()
        for c in cps:  # outline the phase and end checkpoints among the periodic ones
            value = getattr(c, attr)
            if c.kind != "periodic" and value is not None:
                color = KIND_STYLES.get(c.kind, KIND_STYLES["periodic"])[0]
                name = f"{c.kind} checkpoint" if c.kind not in outlined else None
                outlined.add(c.kind)
                ax.bar(c.t, value, width=width, fill=False, edgecolor=color, lw=1.5, label=name)
        if fmt is not None:
            _byte_axis(ax, [getattr(c, attr) or 0 for c in cps])
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, axis="y")
        _mark_gap(ax, result)
    axes[0].set_title(f"{result.query}: checkpoints ({result.engine})")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    axes[-1].set_xlabel("trigger time, seconds since the query started")
    return _save(fig, path)


def _byte_axis(ax: Axes, values: Sequence[float]) -> None:
    """Ticks at round numbers of the binary unit (KiB, MiB, GiB) the values are counted in."""
    top = max(values, default=0)
    unit = next((u for u in (2**30, 2**20, 2**10) if top >= u), 1)
    steps = MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(0, max(top / unit, 1))
    ax.yaxis.set_major_locator(MultipleLocator((steps[1] - steps[0]) * unit))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_bytes(v)))


def _mark_gap(ax: Axes, result: QueryResult) -> None:
    submit, running = (
        _rel(result, result.timestamps.t_submit),
        _rel(result, result.timestamps.t_running),
    )
    if submit is not None and running is not None:
        ax.axvspan(submit, running, color=PHASE_COLORS["restore"], alpha=0.3, lw=0)


def _span(result: QueryResult) -> float:
    ts = [s.t for s in result.timeseries] + [c.t for c in result.checkpoint_events]
    return max(ts) - min(ts) if ts else 1.0


def rate_fed_samples(result: QueryResult) -> list:
    """The benchmark samples of a rate-fed phase that know the events released by then."""
    return [s for s in result.timeseries if s.phase == "benchmark" and s.released is not None]


def rate_chart(result: QueryResult, path: Path) -> Path:
    """A rate-fed benchmark phase: the rate read against the rate asked and delivered (top),
    and the lag, events released and not yet read, over the phase (bottom)."""
    samples = rate_fed_samples(result)
    fig = Figure(figsize=(10, 5))
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    fig.subplots_adjust(left=0.09, right=0.80, top=0.93, bottom=0.1, hspace=0.08)
    read = [(s.t, s.throughput_eps) for s in samples if s.throughput_eps is not None]
    if read:
        xs, ys = zip(*read, strict=True)
        top.plot(xs, ys, color=PHASE_COLORS["benchmark"], lw=1.5, marker=".", ms=3, label="read")
    f = result.rate
    if f.asked_eps is not None:
        top.axhline(f.asked_eps, color="#333333", ls="--", lw=1.2, label="rate asked")
    if f.delivered_eps is not None:
        top.axhline(f.delivered_eps, color="#DD8452", ls=":", lw=1.5, label="rate delivered")
    top.set_ylabel("events/s")
    top.set_ylim(bottom=0)
    top.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
    top.set_title(f"{result.query}: rate-fed benchmark phase ({result.engine})")
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    lags = [(s.t, s.released - s.events) for s in samples]
    xs, ys = zip(*lags, strict=True)
    bottom.plot(xs, ys, color="#C44E52", lw=1.5, marker=".", ms=3, label="lag")
    bottom.set_ylabel("lag (events)")
    bottom.set_ylim(bottom=0)
    bottom.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
    bottom.set_xlabel("seconds since the query started")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    return _save(fig, path)


ENGINE_COLORS = ("#55A868", "#4C72B0", "#C44E52", "#8172B3")


def summary_chart(results: Sequence[QueryResult], path: Path) -> Path | None:
    """Throughput per scored query, a bar each (the median of its repeats), labelled with its
    value, each successful repeat a black point on it; with several engines, one group of bars
    per query, a colour per engine."""
    ok = [r for r in results if r.ok and r.throughput_eps is not None]
    if not ok:
        return None
    engines = sorted({r.engine for r in results})
    names = sorted({r.query for r in ok}, key=lambda q: (len(q), q))
    width = 0.8 / len(engines)
    fig = Figure(figsize=(max(9, 0.45 * len(names) * len(engines)), 3.8))
    ax = fig.subplots()
    fig.subplots_adjust(left=0.08, right=0.98, top=0.91, bottom=0.1)
    for i, engine in enumerate(engines):
        mine = {r.query: r.throughput_eps for r in ok if r.engine == engine}
        xs = [x + (i - (len(engines) - 1) / 2) * width for x, q in enumerate(names) if q in mine]
        values = [mine[q] for q in names if q in mine]
        color = PHASE_COLORS["benchmark"] if len(engines) == 1 else ENGINE_COLORS[i % 4]
        bars = ax.bar(xs, values, width=width, color=color, label=engine)
        size = 7 if len(engines) == 1 else 6
        ax.bar_label(bars, labels=[fmt_rate(v) for v in values], fontsize=size, padding=2)
        by_query = {r.query: r for r in ok if r.engine == engine}
        for x, q in zip(xs, [q for q in names if q in mine], strict=True):
            points = [p.throughput_eps for p in by_query[q].repeats if p.status == "ok"]
            points = [v for v in points if v is not None]
            if len(points) > 1:
                ax.scatter([x] * len(points), points, s=12, color="black", zorder=3,
                           label="repeats" if x == xs[0] and i == 0 else None)  # fmt: skip
    ax.set_xticks(range(len(names)), names)
    if len(engines) > 1 or any(len(r.repeats) > 1 for r in ok):
        ax.legend(fontsize=8, loc="upper right")
    ax.set_ylabel("throughput (events/s)")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
    ax.set_title("Benchmark-phase throughput per query")
    ax.margins(y=0.12)
    ax.grid(alpha=0.3, axis="y")
    return _save(fig, path)


def latency_chart(result: QueryResult, path: Path) -> Path:
    """A rate-fed phase's event-time latency over the phase: p50 and max per interval."""
    points = result.latency.series
    xs = [p[0] for p in points]
    fig = Figure(figsize=(10, 3))
    ax = fig.subplots()
    fig.subplots_adjust(left=0.08, right=0.80, top=0.88, bottom=0.17)
    ax.plot(xs, [p[2] for p in points], color="#C44E52", lw=1, label="max")
    ax.plot(xs, [p[1] for p in points], color="#55A868", lw=1.5, label="p50")
    if result.latency.p99_s is not None:
        ax.axhline(result.latency.p99_s, color="#8172B3", ls="--", lw=1, label="phase p99")
    ax.set_ylim(bottom=0)
    ax.set_ylabel("latency (s)")
    ax.set_xlabel("sink time, seconds since the first release")
    rate = fmt_rate(result.rate.asked_eps)
    ax.set_title(f"{result.query}: event-time latency at {rate} ({result.engine})")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def sustainable_chart(result: QueryResult, path: Path) -> Path:
    """A rate search's trials against the rate each was fed at: the rate read (on the
    diagonal when the job kept up) and the lag's trend against its limit (1% of the rate)."""
    s = result.sustainable
    trials = [r for r in result.repeats if r.rate_asked_eps]
    fig = Figure(figsize=(9, 5.5))
    read_ax, lag_ax = fig.subplots(2, 1, sharex=True)
    top = max([r.rate_asked_eps or 0.0 for r in trials] + [s.upper_eps or 0.0])
    read_ax.plot([0, top], [0, top], color="#8C8C8C", linestyle=":", label="read = fed")
    for ax, attr in ((read_ax, "throughput_eps"), (lag_ax, "lag_trend_eps")):
        for r in trials:
            value = getattr(r, attr)
            if value is None:
                continue
            color = "#55A868" if r.sustained else "#C44E52"
            ax.scatter([r.rate_asked_eps], [value], color=color, zorder=3)
            ax.annotate(str(r.index + 1), (r.rate_asked_eps, value), fontsize=8,
                        xytext=(4, 4), textcoords="offset points")  # fmt: skip
    if s.upper_eps:
        read_ax.axvline(s.upper_eps, color="#8172B3", linestyle="--", label="source ceiling")
    if s.rate_eps:
        for ax in (read_ax, lag_ax):
            ax.axvline(s.rate_eps, color="#55A868", linestyle="--", label="sustained")
    limit = s.lag_tolerance or 0.01
    lag_ax.plot([0, top], [0, limit * top], color="#C44E52", linestyle=":", label="limit")
    read_ax.set_ylabel("read (events/s)")
    lag_ax.set_ylabel("lag trend (events/s)")
    lag_ax.set_xlabel("fed at (events/s); points: trials, green sustained")
    for ax in (read_ax, lag_ax):
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
        ax.grid(alpha=0.3)
    read_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _axis_rate(v)))
    read_ax.legend(loc="upper left", fontsize=8)
    found = "none" if s.rate_eps is None else fmt_rate(s.rate_eps)
    read_ax.set_title(f"{result.engine} {result.query}: sustainable rate {found}")
    fig.tight_layout()
    return _save(fig, path)


def operators_chart(result: QueryResult, path: Path) -> Path:
    """Each operator's share of time busy through the scored phase (`busy.busy_figure`)."""
    return _save(busy_figure(result), path)


def draw_all(results: Sequence[QueryResult], out_dir: Path) -> dict[str, Path]:
    """Draw every chart into `out_dir`; returns {chart name: path}, keyed like `chart_names`.

    Keys are "summary" and "<engine>-<query>-timeline" / "-checkpoints" / "-sustainable" /
    "-rate" / "-operators".
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    drawn: dict[str, Path] = {}
    summary = summary_chart(results, out_dir / "summary-throughput.png")
    if summary is not None:
        drawn["summary"] = summary
    draw = {
        "timeline": timeline,
        "checkpoints": checkpoints_chart,
        "sustainable": sustainable_chart,
        "rate": rate_chart,
        "latency": latency_chart,
        "operators": operators_chart,
    }
    for r in results:
        for kind, name in chart_names(r).items():
            drawn[name.removesuffix(".png")] = draw[kind](r, out_dir / name)
    return drawn
