"""When to poll next while a phase reads its part: the end of a phase is part of the scored
Time (`t_end` follows it), so the harness must see the last event promptly, without polling
fast through the whole phase (each poll costs the engine CPU).

The rate that predicts the end is the phase's own since its first poll, from counts stamped
with the time they were true (`Job.events_emitted_at`): polls closer together than the engine's
metric refresh see one count twice, and a rate taken from the last two polls would then read
zero and fall back to the slow interval right at the end.
"""

from __future__ import annotations

MIN_DELAY_S = 0.05  # the fastest poll: the end is seen within this plus the metric refresh
PROBE_S = 0.25  # until the count first moves: a short phase is not seen an interval late


class EndWatch:
    """Poll delays for one phase: about every `interval_s`, every `PROBE_S` until the count
    first moves (for up to two intervals), and half the predicted time to the last event near
    the end, down to `MIN_DELAY_S`. `fresh(delay)` says whether the next poll must read a new
    count rather than the sampler's last one (a poll sooner than the interval)."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._first: tuple[float, int] | None = None  # (time, events) of the phase's first poll

    def delay(self, at: float, events: int, remaining: int) -> float:
        """The delay before the next poll, given a poll that saw `events` true at `at`."""
        first = self._first
        if first is None or events < first[1]:  # a restart counts again from its checkpoint
            self._first = (at, events)
            return min(self.interval_s, PROBE_S)
        t0, e0 = first
        if events <= e0 or at <= t0:
            return (
                min(self.interval_s, PROBE_S) if at - t0 < 2 * self.interval_s else self.interval_s
            )
        eps = (events - e0) / (at - t0)
        return max(MIN_DELAY_S, min(self.interval_s, remaining / eps / 2))

    def fresh(self, delay: float) -> bool:
        return delay < self.interval_s
