"""A query's CPU profile over its scored phases (`nexmark run --profile`, docs/profiling.md):
where the flame graph is, how it was sampled, and what its samples say at a glance."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Profile:
    """The profile of one query's scored repeats, or why there is none.

    Attributes:
        flame_graph: The interactive flame graph (HTML), relative to the results directory.
        event: What the samples are taken on: "cpu" (perf_events) or "itimer" (the interval
            timer, where a container forbids perf_events).
        interval_ms: The sampling interval of a busy thread.
        samples: The samples of every scored repeat together (from just before each restore
            to just after its end checkpoint).
        kinds: Each kind of work's share of the samples, largest first (engines/profiling.py
            names them: the state backend, serialization, file reading, ...).
        top_frames: The hottest frames by their own (leaf) samples, with their shares.
        not_profiled: Why this target could not be profiled (a remote cluster), else None.
    """

    flame_graph: str | None = None
    event: str | None = None
    interval_ms: int | None = None
    samples: int | None = None
    kinds: dict[str, float] = field(default_factory=dict)
    top_frames: dict[str, float] = field(default_factory=dict)
    not_profiled: str | None = None
