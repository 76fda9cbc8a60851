"""When to poll next while a phase reads its part: the end of a phase is part of the scored
Time (`t_end` follows it), so the harness must see the last event promptly, without polling
fast through the whole phase (each poll costs the engine CPU).

The end is predicted from counts stamped with the time they were true
(`Job.events_emitted_at`), not from the polls' times: an engine whose metric store a request
only asks to refresh (Flink's REST API) answers a poll with the count of the poll before, a
second old at one poll a second. Counted from the poll, the predicted end came a second late,
and the end was seen up to a second after the last event (q0's 1.3 s benchmark phase at 4M
events was scored 1.1-2.5 s for the same work). A count older than its predicted end means the
end has probably passed: the next poll comes at the fastest delay and reads the fetch this one
asked for.

The rate that predicts the end is the fastest of: the phase's own since its first poll, its
latest (between the last two counts of different times: polls closer together than the metric
refresh see one count twice, and a rate from two such polls would read zero right at the end),
and, until the phase has a poll interval of its own counts, the rate `expected_eps` of the
phase before (the warm-up before the first benchmark phase, a repeat before the next). A phase
ramps up as it starts: its own early rate alone predicted a 1.3 s phase to last 12 s. A rate
too high costs only an early poll; one too low costs idle time inside Time.
"""

from __future__ import annotations

MIN_DELAY_S = 0.05  # the fastest poll: the end is seen within this plus the metric refresh
PROBE_S = 0.25  # until the count first moves: a short phase is not seen an interval late


class EndWatch:
    """Poll delays for one phase: about every `interval_s`, every `PROBE_S` until the count
    first moves (for up to two intervals), and half the predicted time to the last event near
    the end, down to `MIN_DELAY_S`. `fresh(delay)` says whether the next poll must read a new
    count rather than the sampler's last one (a poll sooner than the interval); `eps` is the
    phase's own rate so far, the next phase's `expected_eps`."""

    def __init__(self, interval_s: float, expected_eps: float | None = None) -> None:
        self.interval_s = interval_s
        self.expected_eps = expected_eps
        self._first: tuple[float, int] | None = None  # (time, events) of the phase's first poll
        self._last: tuple[float, int] | None = None  # the latest count
        self._latest_eps: float | None = None  # between the last two counts of different times

    @property
    def eps(self) -> float | None:
        """Events per second since the phase's first poll (None before a count has moved)."""
        if self._first is None or self._last is None:
            return None
        (t0, e0), (t1, e1) = self._first, self._last
        return (e1 - e0) / (t1 - t0) if e1 > e0 and t1 > t0 else None

    def delay(self, at: float, events: int, remaining: int, now: float | None = None) -> float:
        """The delay before the next poll, given a poll at `now` (default: `at`) that saw
        `events` true at `at`."""
        now = at if now is None else now
        first, probe = self._first, min(self.interval_s, PROBE_S)
        if first is None or events < first[1]:  # a restart counts again from its checkpoint
            self._first, self._last, self._latest_eps = (at, events), (at, events), None
            return probe
        last = self._last or first
        if events > last[1] and at > last[0]:
            self._latest_eps = (events - last[1]) / (at - last[0])
        if events >= last[1] and at >= last[0]:
            self._last = (at, events)
        t0, e0 = first
        if events <= e0 or at <= t0:
            return probe if at - t0 < 2 * self.interval_s else self.interval_s
        rates = [(events - e0) / (at - t0), self._latest_eps or 0.0]
        if self.expected_eps and at - t0 < self.interval_s:
            rates.append(self.expected_eps)
        to_end = at + remaining / max(rates) - now
        return max(MIN_DELAY_S, min(self.interval_s, to_end / 2))

    def fresh(self, delay: float) -> bool:
        return delay < self.interval_s
