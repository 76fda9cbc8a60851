"""The scored phases' CPU profile in the HTML report (`--profile`, docs/profiling.md): per
query, the link to its flame graph, its samples by kind of work and its hottest frames."""

from __future__ import annotations

from html import escape

from nexmark.results.profile import Profile
from nexmark.results.query_result import QueryResult

TOP_SHOWN = 5  # frames listed in the report; the flame graph has them all


def profile_section(r: QueryResult) -> str:
    """'Where the CPU goes': empty when the run was not profiled."""
    p = r.profile
    if p is None:
        return ""
    if p.not_profiled:
        why = escape(p.not_profiled)
        return f"<h4>Where the CPU goes</h4><p class='meta profile'>Not profiled: {why}</p>"
    kinds = ", ".join(f"{escape(k)} {v:.0%}" for k, v in p.kinds.items())
    frames = "".join(
        f"<li><code>{escape(frame)}</code> {share:.1%}</li>"
        for frame, share in list(p.top_frames.items())[:TOP_SHOWN]
    )
    return (
        f"<h4>Where the CPU goes</h4><p class='meta profile'>{_sampled(p)}: "
        f'<a href="{escape(p.flame_graph or "")}">the flame graph</a>. '
        f"By kind of work: {kinds or '-'}.</p>"
        f"<ol class='frames'>{frames}</ol>"
    )


def _sampled(p: Profile) -> str:
    return escape(
        f"{p.samples or 0:,} samples of the scored phases ({p.event}, one per "
        f"{p.interval_ms} ms of a busy thread)"
    )
