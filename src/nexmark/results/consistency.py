"""Each derived metric of a result checked against its inputs, by the formulas of
docs/protocol.md (`QueryResult.problems`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nexmark.results.figures import CHECKPOINT_MEASURE, STATE_GROWTH_LIMIT

if TYPE_CHECKING:
    from nexmark.results.query_result import QueryResult


def _close(a: float | None, b: float | None, rel: float = 1e-6) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def problems(r: QueryResult) -> list[str]:
    """Check each derived metric against the formula of docs/protocol.md."""
    out: list[str] = []

    def ratio(num: float | None, den: float | None) -> float | None:
        return None if num is None or not den else num / den

    if r.ok:
        checks = [
            ("throughput_eps", r.throughput_eps, ratio(r.events_benchmark, r.time_s)),
            ("throughput_per_core", r.throughput_per_core, ratio(r.throughput_eps, r.cores)),
            (
                "checkpoint_growth",
                r.checkpoint_growth,
                ratio(r.state_bytes_end, r.state_bytes_start),
            ),
            (
                "state_growth",
                r.state_growth,
                r.checkpoint_growth
                if r.state_measure in (None, CHECKPOINT_MEASURE)
                else ratio(r.state_live_end, r.state_live_start),
            ),
            ("source_ratio", r.source_ratio, ratio(r.throughput_eps, r.source.throughput_eps)),
        ]
        if r.cores is not None and r.time_s is not None and r.events_benchmark:
            cost = r.cores * r.time_s / (r.events_benchmark / 1e6)
            checks.append(("cost_core_s_per_million", r.cost_core_s_per_million, cost))
        out += [f"{n} is {a!r}, expected {b!r}" for n, a, b in checks if not _close(a, b)]
        ts = r.timestamps
        for name, value, start, end in (
            ("recovery_time_s", r.recovery_time_s, ts.t_submit, ts.t_running),
            ("time_s", r.time_s, ts.t_running, ts.t_end),
        ):
            if None not in (value, start, end) and abs(value - (end - start)) > 1e-3:
                out.append(f"{name} is {value!r}, timestamps say {end - start!r}")
        if r.state_growth is not None and r.state_steady != (r.state_growth <= STATE_GROWTH_LIMIT):
            out.append(f"state_steady is {r.state_steady!r} with growth {r.state_growth:.3f}")
    elif r.reason is None:
        out.append(f"status {r.status.value} without a reason")
    if None not in (r.events_total, r.events_warmup, r.events_benchmark) and (
        r.events_warmup + r.events_benchmark != r.events_total
    ):
        out.append("events_warmup + events_benchmark != events_total")
    return out
