"""Named suites: which queries on how many events. `full` is the proposal's default; `cep` the
reference runner's second suite (MATCH_RECOGNIZE)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nexmark.errors import UsageError


@dataclass(frozen=True)
class Suite:
    """A named suite.

    state_ttl: the suite's default state TTL (None: the settings' default). It sits below the
    user's --config, --set and --state-ttl, and above the packaged default. State held by a
    processing-time TTL steadies only after a few TTLs, and loses the share of it that the
    restore's seconds take (`steady.expired_at_restore`): a TTL must be short against the
    suite's warm-up and long against its restore, which no 10M-event suite allows.
    """

    name: str
    events: int
    queries: str
    description: str
    state_ttl: str | None = None
    # Benchmark phases per warm-up (`--repeat`), each restored from the phase checkpoint.
    repeat: int = 1
    # Queries that read another dataset than `events` (each size its own dataset, generated
    # once): a fast query needs more events than a slow one for a phase long enough to score.
    query_events: dict[str, int] = field(default_factory=dict)

    def settings_layer(self) -> dict[str, dict[str, str]]:
        return {"state_ttl": {"default": self.state_ttl}} if self.state_ttl else {}

    def sittings(self, queries: Sequence[str]) -> list[tuple[int, tuple[str, ...]]]:
        """`queries` grouped by the events each reads, in the order they first appear: one
        sitting (a dataset, its source ceiling, its queries) per size."""
        groups: dict[int, list[str]] = {}
        for query in queries:
            groups.setdefault(self.query_events.get(query, self.events), []).append(query)
        return [(events, tuple(names)) for events, names in groups.items()]


SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        Suite(
            "full",
            200_000_000,
            "all",
            "the proposal's default: every query on 200M events (150M warm-up, 50M scored)",
            # A repeat costs about a quarter of a cycle (its events are 25% of them, and the
            # warm-up and dataset are shared): 3 give a spread for 1.5x the time.
            repeat=3,
        ),
        Suite(
            "quick",
            # The benchmark part's 3M events span 30 s of event time: whole cycles of q8's 10 s
            # windows and q5's 2 s slides, so the state at the cut and at the end is judged at
            # the same point of its cycle (10M spanned 25 s: half a window apart). Its phases
            # last 9-16 s here, over `steady.MIN_SCORED_PHASE_S` on a fast day too.
            12_000_000,
            "q0,q5,q8,q11",
            "a few minutes to try it out: stateless (q0), hopping windows (q5), a window join "
            "(q8) and session windows (q11) on 12M events (q0 and q8 on 64M), whose state the "
            "watermark bounds: "
            "steady within the short warm-up, and kept whole through the seconds of the "
            "restore, which a processing-time TTL short enough for this warm-up would expire",
            # 3: a spread for each query within the suite's few minutes; an A/B comparison
            # asks for more (`--repeat 5 --runs 2`: compare's test needs 4 or more a side).
            repeat=3,
            # q0 and q8 read 1.4-2.7M events/s here: on 8M their scored phases lasted 1.1-1.5 s,
            # too short to resolve (steady.MIN_SCORED_PHASE_S). 64M gives them 6-9 s; its
            # benchmark part (160 s of event time) spans whole windows too.
            query_events={"q0": 64_000_000, "q8": 64_000_000},
        ),
        Suite(
            "cep",
            20_000_000,
            "cep",
            "the CEP suite: four MATCH_RECOGNIZE queries over bids (cep0..cep3: V shapes, cheap "
            "runs without and with overlaps, sudden drops within 5 s) on 20M events; their "
            "pattern state is not expired by a state TTL",
        ),
    )
}


def get_suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise UsageError(f"unknown suite {name!r}; known: {', '.join(SUITES)}") from None
