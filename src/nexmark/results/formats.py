"""How a figure of a result reads, the same in the terminal tables, the HTML report, its charts
and `compare`: counts, rates ('405.12 K/s'), bytes, growth, shares, latencies, and a field
found by its dotted path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from nexmark.console import human_bytes
from nexmark.results.steady import STATE_GROWTH_LIMIT

if TYPE_CHECKING:
    from nexmark.results.query_result import QueryResult


def fmt_count(v: float | None) -> str:
    return "-" if v is None else f"{int(v):,}"


def fmt_fixed(digits: int) -> Callable[[float | None], str]:
    def fmt(v: float | None) -> str:
        return "-" if v is None else f"{v:.{digits}f}"

    return fmt


def fmt_rate(v: float | None) -> str:
    """Events per second the way the reference runner prints them: '405.12 K/s'."""
    if v is None:
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.2f} {unit}/s"
    return f"{v:.2f} /s"


def fmt_bytes(v: float | None) -> str:
    return "-" if v is None else human_bytes(v)


def fmt_growth(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.2f}" + (" not steady" if v > STATE_GROWTH_LIMIT else "")


def fmt_percent(v: float | None) -> str:
    """'33%'; a share under 1% keeps its first digit ('0.1%'), not '0%'."""
    if v is None:
        return "-"
    return f"{v * 100:.0f}%" if v == 0 or abs(v) >= 0.01 else f"{v * 100:.1g}%"


def field_value(result: Any, path: str) -> Any:
    """The value of a dotted field path, e.g. 'phase_checkpoint.duration_s'."""
    value: Any = result
    for part in path.split("."):
        value = getattr(value, part)
    return value


def fmt_rate_short(v: float) -> str:
    """Three significant digits, for a rate shown with its spread: '741 K/s', '1.26 M/s'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g} {unit}/s"
    return f"{v:.3g} /s"


def fmt_latency(v: float | None) -> str:
    """A latency: '70 ms' under a second, '2.35 s' above."""
    if v is None:
        return "-"
    return f"{v * 1000:.0f} ms" if v < 1.0 else f"{v:.2f} s"


def label(result: QueryResult, results: Sequence[QueryResult]) -> str:
    """The row label: the query, prefixed by the engine when several engines share a file."""
    engines = {r.engine for r in results}
    return result.query if len(engines) == 1 else f"{result.engine}:{result.query}"
