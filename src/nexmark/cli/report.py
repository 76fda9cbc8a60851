"""`nexmark report` (HTML with charts from a results directory) and `nexmark compare`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from nexmark.console import err, out

__all__ = ["compare_command", "report_command", "write_report"]


def write_report(results: str | Path, out_file: str | Path | None = None) -> Path:
    """Write the HTML report and charts of a results directory; return the HTML path.

    The runner calls this at the end of every run. matplotlib is imported only here, so
    other commands start fast.
    """
    from nexmark.report.html import write_report as write

    return write(results, out_file)


def report_command(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="A results directory (or its results.json); several runs (e.g. one per "
            "engine) make one report with --out.",
            show_default=False,
        ),
    ],
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out", help="The HTML file to write [default: RESULTS/report.html].", dir_okay=False
        ),
    ] = None,
) -> None:
    """Write a self-contained HTML report with charts, and print the summary table."""
    from nexmark.errors import UsageError
    from nexmark.results.store import load_results
    from nexmark.results.table import results_renderable

    if len(results) == 1:
        path = write_report(results[0], out_file)
        shown = load_results(results[0])
    else:
        from nexmark.report.html import write_runs_report

        if out_file is None:
            raise UsageError("a report of several runs needs --out FILE.html")
        path = write_runs_report(results, out_file)
        shown = [r for run in results for r in load_results(run)]
    out.print(results_renderable(shown))
    err.print(f"report: {escape(str(path))} (charts in {escape(str(path.parent / 'charts'))})")


def compare_command(
    base: Annotated[Path, typer.Argument(help="The reference results (directory or file).")],
    new: Annotated[Path, typer.Argument(help="The results to judge (directory or file).")],
    threshold: Annotated[
        float,
        typer.Option(min=0.0, help="Changes up to this many percent are within noise."),
    ] = 5.0,
    fail_on_regression: Annotated[
        bool, typer.Option(help="Exit with code 1 when any query regressed (for CI gates).")
    ] = False,
    html: Annotated[
        Path | None, typer.Option(help="Also write the comparison as an HTML page.", dir_okay=False)
    ] = None,
) -> None:
    """Compare two runs query by query: throughput, per core, recovery, checkpoint, state."""
    from nexmark.report.compare import compare, comparison_table, render_compare_html
    from nexmark.results.store import load_results

    result = compare(load_results(base), load_results(new), threshold_pct=threshold)
    out.print(comparison_table(result))
    if html is not None:
        html.write_text(render_compare_html(result, str(base), str(new)), encoding="utf-8")
        err.print(f"comparison: {escape(str(html))}")
    if fail_on_regression and result.regressed:
        names = ", ".join(q.query for q in result.regressed)
        err.print(f"[bold red]regression:[/] {escape(names)}")
        raise typer.Exit(code=1)
