"""The benchmark part laid out for the rate a rate search's trial is fed at (docs/protocol.md,
"Sustainable rate").

A phase fed at R is released one time slice at a time, so for the released rate to stay within
2% its slices may hold at most 100 ms of events at R (`workload.feed.RATE_STEP_S`). One layout
fine enough for the search's lowest rate is far too fine for its highest: every file is a
split a source reader asks for, and 2,500-event files (100 ms at 50,000 ev/s over two readers)
cap Flink's file source near 534K ev/s, a limit of the instrument, not of the query. So each
trial reads the benchmark part generated for its own rate: slices of 100 ms at R (the same
events in the same order, other file boundaries: `DatasetParams.benchmark_slices`), written
under the query's work directory, one layout at a time, and deleted with it.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.feed import rate_slices
from nexmark.workload.writer import ensure_dataset

DIR = "rate-layout"  # under a query's work directory


def benchmark_slices_for(params: DatasetParams, rate: float) -> int:
    """The benchmark part's time slices for a release at `rate`: 100 ms of events each (never
    fewer than the dataset's own slices)."""
    first, end = params.part_range("benchmark")
    return max(params.slices, rate_slices(end - first, rate))


def part_for_rate(params: DatasetParams, rate: float, root: Path) -> Dataset | None:
    """A dataset holding only the benchmark part of `params` laid out for `rate`, under `root`:
    the one there if it has that layout, else generated in place of whatever `root` held.
    None when the dataset's own benchmark part already has it.

    Raises:
        DiskSpaceError, DatasetError: the part cannot be written (one line each).
    """
    slices = benchmark_slices_for(params, rate)
    if slices == params.part_slices("benchmark"):
        return None
    out = root / f"benchmark-slices-{slices}"
    if not out.is_dir():
        shutil.rmtree(root, ignore_errors=True)  # one layout at a time: it is a part's size
    laid_out = dataclasses.replace(params, benchmark_slices=slices)
    return ensure_dataset(laid_out, out=out, show_progress=False, parts=("benchmark",))
