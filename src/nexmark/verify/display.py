"""Verdicts as Rich renderables: one summary row per query, then the examples of each mismatch."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from nexmark.verify.check import Status, Verdict

STYLES = {
    Status.MATCH: "green",
    Status.MISMATCH: "bold red",
    Status.UNSUPPORTED: "yellow",
    Status.NOT_CHECKABLE: "cyan",
    Status.FAILED: "bold red",
}
MAX_CELL = 110  # characters of one example row


def _label(verdict: Verdict) -> Text:
    label = verdict.status.value
    if verdict.status is Status.MATCH and verdict.partially_checked:
        label = "match (partially checked)"
    return Text(label, style=STYLES[verdict.status])


def _details(verdict: Verdict) -> str:
    if verdict.reason:
        return verdict.reason
    parts = list(verdict.notes)
    if verdict.orphans:
        parts.append(f"{verdict.orphans} retractions of rows never inserted")
    return "; ".join(parts)


def _count(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def summary_table(verdicts: list[Verdict], title: str = "nexmark verify") -> Table:
    """One row per query: result, expected / actual rows, missing / unexpected, details."""
    table = Table(title=title, title_justify="left")
    table.add_column("Query")
    table.add_column("Result")
    for name in ("Expected", "Actual", "Missing", "Unexpected"):
        table.add_column(name, justify="right")
    table.add_column("Details", overflow="fold")
    for v in verdicts:
        d = v.diff
        table.add_row(
            v.query,
            _label(v),
            _count(d and d.expected_rows),
            _count(d and d.actual_rows),
            _count(d and d.missing_count),
            _count(d and d.unexpected_count),
            _details(v),
        )
    return table


def _row_text(row: tuple) -> str:
    text = "(" + ", ".join("NULL" if v is None else str(v) for v in row) + ")"
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 3] + "..."


def examples(verdict: Verdict, limit: int = 3) -> RenderableType | None:
    """A few missing and unexpected rows of a mismatch (None when there is nothing to show)."""
    if verdict.status is not Status.MISMATCH or verdict.diff is None:
        return None
    missing, unexpected = verdict.diff.examples(limit)
    lines = [Text(f"{verdict.query}: examples", style="bold")]
    lines += [Text(f"  missing     {_row_text(r)}", style="red") for r in missing]
    lines += [Text(f"  unexpected  {_row_text(r)}", style="magenta") for r in unexpected]
    return Group(*lines)


def render(verdicts: list[Verdict], title: str = "nexmark verify") -> Group:
    """The summary table followed by the examples of every mismatch."""
    parts: list[RenderableType] = [summary_table(verdicts, title)]
    parts += [e for v in verdicts if (e := examples(v)) is not None]
    return Group(*parts)
