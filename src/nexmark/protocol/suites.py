"""Named suites: which queries on how many events. `full` is the proposal's default; `cep` the
reference runner's second suite (MATCH_RECOGNIZE)."""

from __future__ import annotations

from dataclasses import dataclass

from nexmark.errors import UsageError


@dataclass(frozen=True)
class Suite:
    """A named suite.

    state_ttl: the suite's default state TTL (None: the settings' default). It sits below the
    user's --config, --set and --state-ttl, and above the packaged default. A short suite needs
    a short TTL: state held by a TTL steadies only after a few TTLs of processing time.
    """

    name: str
    events: int
    queries: str
    description: str
    state_ttl: str | None = None
    # Benchmark phases per warm-up (`--repeat`), each restored from the phase checkpoint.
    repeat: int = 1

    def settings_layer(self) -> dict[str, dict[str, str]]:
        return {"state_ttl": {"default": self.state_ttl}} if self.state_ttl else {}


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
            10_000_000,
            "q0,q3,q5,q15,q19",
            "a few minutes to try it out: stateless (q0), join (q3), windowed (q5), distinct "
            "aggregation (q15) and top-N (q19) on 10M events, with a 3 s state TTL so that "
            "state steadies within the warm-up",
            state_ttl="3 s",
            # 5: the fewest at which compare's test (Mann-Whitney) can call a difference at
            # 5% with one pair of repeats crossing; about 4 more benchmark phases per query.
            repeat=5,
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
