"""The named phases of one query run and the transitions allowed between them.

Keeping the protocol an explicit state machine makes the order of operations checkable
(a test can assert that no benchmark phase starts without a confirmed restore) and gives the
progress display and the time series one vocabulary.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field


class Phase(str, enum.Enum):
    PREPARE = "prepare"  # dataset checked, work dir created
    WARMUP = "warmup"  # job on the warm-up part, source alive after the last event
    PHASE_CHECKPOINT = (
        "phase-checkpoint"  # the checkpoint whose barrier follows every warm-up event
    )
    STOP = "stop"  # cancel without draining, the checkpoint retained
    RESTORE = "restore"  # resubmitted from the phase checkpoint on the benchmark part
    BENCHMARK = "benchmark"  # the scored phase
    END_CHECKPOINT = "end-checkpoint"  # proves every benchmark event was fully processed
    CLEANUP = "cleanup"
    DONE = "done"
    FAILED = "failed"


_NEXT: dict[Phase, tuple[Phase, ...]] = {
    Phase.PREPARE: (Phase.WARMUP,),
    Phase.WARMUP: (Phase.PHASE_CHECKPOINT,),
    Phase.PHASE_CHECKPOINT: (Phase.STOP,),
    Phase.STOP: (Phase.RESTORE,),
    Phase.RESTORE: (Phase.BENCHMARK,),
    Phase.BENCHMARK: (Phase.END_CHECKPOINT,),
    # After a repeat's end checkpoint, the next repeat restores the same phase checkpoint, or
    # (`--runs M`) the next run starts a fresh warm-up.
    Phase.END_CHECKPOINT: (Phase.CLEANUP, Phase.RESTORE, Phase.WARMUP),
    Phase.CLEANUP: (Phase.DONE,),
}


class PhaseOrderError(RuntimeError):
    """A programming error: the runner tried to skip or reorder a phase."""


@dataclass
class PhaseTracker:
    """Current phase, when each phase began (unix seconds), and listeners for changes."""

    clock: Callable[[], float] = time.time
    phase: Phase = Phase.PREPARE
    started: dict[str, float] = field(default_factory=dict)
    listeners: list[Callable[[Phase], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.started[self.phase.value] = self.clock()

    def enter(self, phase: Phase) -> None:
        """Move to `phase`; FAILED is reachable from anywhere, anything else only in order."""
        if phase is not Phase.FAILED and phase not in _NEXT.get(self.phase, ()):
            raise PhaseOrderError(f"cannot go from {self.phase.value} to {phase.value}")
        self.phase = phase
        self.started[phase.value] = self.clock()
        for listener in self.listeners:
            listener(phase)

    def resume_at(self, phase: Phase) -> None:
        """Continue as if `phase` had just ended: a failed repeat of the benchmark phase is
        dropped, and the next one restores the phase checkpoint again (END_CHECKPOINT)."""
        self.phase = phase
