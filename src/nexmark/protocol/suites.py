"""Named suites: which queries on how many events. `full` is the proposal's default."""

from __future__ import annotations

from dataclasses import dataclass

from nexmark.errors import UsageError


@dataclass(frozen=True)
class Suite:
    name: str
    events: int
    queries: str
    description: str


SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        Suite(
            "full",
            200_000_000,
            "all",
            "the proposal's default: every query on 200M events (150M warm-up, 50M scored)",
        ),
        Suite(
            "quick",
            2_000_000,
            "q0,q3,q5,q15,q19",
            "a few minutes to try it out: stateless (q0), join (q3), windowed (q5), distinct "
            "aggregation (q15) and top-N (q19) on 2M events",
        ),
    )
}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise UsageError(f"unknown suite {name!r}; known: {', '.join(SUITES)}") from None
