"""The tables under the summary that name what it flags, each row with why: the queries not
scored, the scored phases too short to resolve or run beside other busy processes, and the
states not steady or not judged."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.table import Table

from nexmark.results.formats import label
from nexmark.results.query_result import QueryResult
from nexmark.results.setup import BUSY_CORES


def failures_table(results: Sequence[QueryResult]) -> Table | None:
    """The failed, timed-out and unsupported queries with their reasons (None if there are none)."""
    failed = [r for r in results if not r.ok]
    if not failed:
        return None
    table = Table(title="Not scored", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("Query", no_wrap=True)
    table.add_column("Status", no_wrap=True, style="red")
    table.add_column("Reason", overflow="fold")
    for r in failed:
        table.add_row(label(r, results), r.status.value, r.reason or "-")
    return table


def short_table(results: Sequence[QueryResult]) -> Table | None:
    """The scored phases too short for their figures to resolve, each with why (None if none)."""
    short = [r for r in results if r.ok and r.phase_too_short]
    if not short:
        return None
    table = Table(title="Too short to resolve", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("Query", no_wrap=True)
    table.add_column("Why", overflow="fold")
    for r in short:
        table.add_row(label(r, results), r.phase_too_short or "-")
    return table


def unsteady_table(results: Sequence[QueryResult]) -> Table | None:
    """The queries flagged "not steady", and those whose state could not be judged, each with
    why (None if there are none)."""
    flagged = [
        r
        for r in results
        if r.ok and (r.state_steady is False or (r.state_steady is None and r.steady_reason))
    ]
    if not flagged:
        return None
    judged = all(r.state_steady is False for r in flagged)
    title = "Not steady" if judged else "Not steady, or not judged"
    table = Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("Query", no_wrap=True)
    table.add_column("Growth", no_wrap=True, justify="right", style="yellow")
    table.add_column("Why", overflow="fold")
    for r in flagged:
        growth = "-" if r.state_growth is None else f"{r.state_growth:.2f}"
        table.add_row(label(r, results), growth, r.steady_reason or "-")
    return table


def scored_other_cores(r: QueryResult) -> float | None:
    """The most other processes used in any of the query's scored phases (its repeats')."""
    seen = [rep.other_cores for rep in r.repeats if rep.other_cores is not None]
    if r.other_cores is not None:
        seen.append(r.other_cores)
    return max(seen) if seen else None


def shared_table(results: Sequence[QueryResult]) -> Table | None:
    """The phases that shared the machine: other processes used more than a quarter of a core
    while they ran (None if none did). A shared scored phase's figures may be low; a shared
    warm-up only took longer, and may have filled less state by its cut."""
    rows = []
    for r in results:
        if not r.ok:
            continue
        scored = scored_other_cores(r)
        if scored is not None and scored > BUSY_CORES:
            rows.append((label(r, results), "scored", scored, r.other_processes or "-"))
        if r.other_cores_warmup is not None and r.other_cores_warmup > BUSY_CORES:
            rows.append((label(r, results), "warm-up", r.other_cores_warmup, "-"))
    if not rows:
        return None
    table = Table(title="Shared the machine", box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("Query", no_wrap=True)
    table.add_column("Phase", no_wrap=True)
    table.add_column("Other cores", no_wrap=True, justify="right", style="yellow")
    table.add_column("Busiest (scored)", overflow="fold")
    for query, phase, cores, busiest in rows:
        table.add_row(query, phase, f"{cores:.2f}", busiest)
    return table
