"""The scored phases' CPU profile (`nexmark run --profile`, docs/profiling.md).

The engine's profiler samples from just before each scored repeat's restore to just after its
end checkpoint; every timed figure lies inside that span, and the calls that resume, pause and
write the profile lie outside them. After the last repeat the samples of all of them are
written as one flame graph per query and summarised in its result. A profile that fails never
fails the query: the result says why it has none. A target the engine cannot profile (its
`enable_profiling` gave a reason) runs unprofiled and records the reason the same way.
"""

from __future__ import annotations

from pathlib import Path

from nexmark.engines.base import Engine
from nexmark.results.profile import Profile

PROFILES_DIR = "profiles"  # the flame graphs' folder in the results directory


class ScoredProfile:
    """One query's profile: `resume`/`pause` around each scored repeat, `finish` at its end.

    `flame_graph` is where the HTML goes, `relative` how the result names it (relative to the
    results directory, which moves with its files). `not_profiled`: why the engine cannot
    profile this target (it is then only recorded)."""

    def __init__(
        self, engine: Engine, flame_graph: Path, relative: str, not_profiled: str | None = None
    ) -> None:
        self.engine, self.flame_graph, self.relative = engine, flame_graph, relative
        self.failed = not_profiled  # once set, nothing more is sampled
        self._spans = 0  # repeats sampled
        self._running = False

    def resume(self) -> None:
        profiler = None if self.failed else self.engine.profiler()
        if profiler is None:
            return
        try:
            profiler.resume()
        except Exception as exc:  # noqa: BLE001 - the JVM's refusal, kept as the reason
            self.failed = f"the profiler did not start: {_line(exc)}"
            return
        self._spans, self._running = self._spans + 1, True

    def pause(self) -> None:
        profiler = self.engine.profiler() if self._running else None
        self._running = False
        if profiler is None:
            return
        try:
            profiler.pause()
        except Exception as exc:  # noqa: BLE001 - (a JVM that died: the phase says so)
            self.failed = f"the profiler did not stop: {_line(exc)}"

    def finish(self) -> Profile | None:
        """Write the flame graph and summarise it; the reason when there is none; None when
        nothing was asked of it (the engine has no profiler and gave no reason)."""
        if self.failed:
            return Profile(not_profiled=self.failed)
        profiler = self.engine.profiler()
        if profiler is None or not self._spans:
            return None
        try:
            summary = profiler.dump(self.flame_graph)
        except Exception as exc:  # noqa: BLE001 - the scored figures stand without it
            return Profile(not_profiled=f"the profile was not written: {_line(exc)}")
        return Profile(
            flame_graph=self.relative,
            event=profiler.event,
            interval_ms=profiler.interval_ms,
            samples=summary.samples,
            kinds={k: round(v, 4) for k, v in summary.kinds.items()},
            top_frames={f: round(v, 4) for f, v in summary.top_frames},
        )


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
