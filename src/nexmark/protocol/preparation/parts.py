"""The dataset as the protocol sees it: its two parts, their events and files (data only)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nexmark.engines.source import FileSource, Source
from nexmark.protocol.preparation import rate_layout
from nexmark.workload.dataset import PARTS, Dataset, DatasetParams
from nexmark.workload.generator import event_time_ms

if TYPE_CHECKING:
    from nexmark.protocol.preparation.kafka import KafkaParts


@dataclass
class PhaseParts:
    """The dataset as the protocol sees it: two part directories and their event counts."""

    warmup_dir: Path
    benchmark_dir: Path
    warmup_events: int
    benchmark_events: int
    # Event time (epoch ms) the data has reached once a phase's job has read `events` events:
    # that of the part's event number first + events - 1. Readers advance together (one stripe
    # each), so the slowest of them is at most a few blocks (10 ms each) behind this.
    time_read_ms: Callable[[str, int], int | None] | None = None
    # Events of each file of a part: each source reader must read exactly one of them.
    file_events: dict[str, list[int]] = field(default_factory=dict)
    # The dataset's parameters: a rate search's trials each read the benchmark part laid out
    # anew for their rate from these (`protocol.preparation.rate_layout`; None: the part as it is).
    params: DatasetParams | None = None

    def folder(self, part: str) -> Path:
        """The folder of `part` ("warmup" or "benchmark")."""
        if part not in PARTS:
            raise ValueError(f"no dataset part {part!r}: {', '.join(PARTS)}")
        return self.warmup_dir if part == "warmup" else self.benchmark_dir

    def source(self, part: str, topics: KafkaParts | None = None) -> Source:
        """What a job reads of `part`: its folder, or (--source kafka, once loaded) its topic.
        The part is named by the caller, never read back from a folder's name."""
        if topics is not None and part in topics.sources:
            return topics.source(part)
        return FileSource(self.folder(part))

    @property
    def event_rate(self) -> int | None:
        """The dataset's events per second of event time (None: parameters unknown)."""
        return self.params.rate if self.params else None

    def benchmark_span_s(self) -> float | None:
        """Event-time seconds from the cut (the warm-up's last event) to the benchmark part's
        last event (None: the parts' times unknown)."""
        if self.time_read_ms is None:
            return None
        cut = self.time_read_ms("warmup", self.warmup_events)
        end = self.time_read_ms("benchmark", self.benchmark_events)
        return None if cut is None or end is None else (end - cut) / 1000

    @classmethod
    def of(cls, dataset: Dataset) -> PhaseParts:
        (w0, w1), (b0, b1) = dataset.part_range("warmup"), dataset.part_range("benchmark")
        config = dataset.params.generator_config
        first = {"warmup": w0, "benchmark": b0, "restore": b0}

        def time_read_ms(phase: str, events: int) -> int | None:
            if events <= 0 or phase not in first:
                return None
            last = min(first[phase] + events, w1 if phase == "warmup" else b1) - 1
            return int(event_time_ms(last, config))

        return cls(
            dataset.part_dir("warmup"),
            dataset.part_dir("benchmark"),
            w1 - w0,
            b1 - b0,
            time_read_ms,
            {part: [f.events for f in dataset.files(part)] for part in ("warmup", "benchmark")},
            dataset.params,
        )

    def laid_out_for(self, rate: float, root: Path) -> PhaseParts:
        """These parts with the benchmark part laid out for a release at `rate` (generated
        under `root` when the dataset's own is not: `rate_layout.part_for_rate`)."""
        if self.params is None:
            return self
        laid_out = rate_layout.part_for_rate(self.params, rate, root)
        if laid_out is None:
            return self
        files = [f.events for f in laid_out.files("benchmark")]
        return dataclasses.replace(
            self,
            benchmark_dir=laid_out.part_dir("benchmark"),
            file_events={**self.file_events, "benchmark": files},
        )
