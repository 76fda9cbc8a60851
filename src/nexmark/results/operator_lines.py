"""Where the time went, in the summary: the busiest operator of each scored query, in a line
under the terminal table (a column of the HTML report's, where names have room)."""

from __future__ import annotations

from collections.abc import Sequence

from nexmark.results.formats import label
from nexmark.results.operators import bottleneck_text
from nexmark.results.query_result import QueryResult


def with_bottleneck(results: Sequence[QueryResult]) -> list[QueryResult]:
    """The scored results whose engine reported operators (and so a bottleneck)."""
    return [r for r in results if r.ok and r.bottleneck is not None]


def bottleneck_line(results: Sequence[QueryResult]) -> str | None:
    """'Bottleneck (busiest operator over the scored phase): q5 Window[4] 92% busy; ...';
    None when no scored result has one (an engine that reports no operators)."""
    named = with_bottleneck(results)
    if not named:
        return None
    each = "; ".join(
        f"{label(r, results)} {bottleneck_text(r.bottleneck, r.bottleneck_busy)}" for r in named
    )
    return f"Bottleneck (the busiest operator over the scored phase): {each}"
