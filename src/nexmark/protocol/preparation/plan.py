"""Before a run: every job's setup resolved once, checked, and what it foretells.

The engine resolves each job's options (`Engine.job_setup`) from its settings and the command
line; the protocol checks its own bounds on the result (checkpoints every 30 s at most), takes
the number of source readers for the dataset's layout (one file per reader) and the time slices
the engine asks for, and warns when a
run is foreseeably too short for its state TTL to let state reach a steady size.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nexmark.durations import format_seconds
from nexmark.engines.base import Engine, JobSetup
from nexmark.engines.source import FileSource
from nexmark.errors import UsageError
from nexmark.protocol.preparation.checks import check_capabilities, check_setup, job_spec
from nexmark.protocol.preparation.options import ProtocolOptions
from nexmark.results.steady import TTLS_TO_STEADY, holds_state_by_ttl
from nexmark.workload.dataset import PARTS, DatasetParams

# A generous ceiling on warm-up speed, events per second per source reader (about 3x what q0
# reaches on a 2-core machine): a warm-up shorter than one TTL even at this speed is far too
# short for its state to steady (that takes about TTLS_TO_STEADY TTLs).
OPTIMISTIC_EPS_PER_READER = 1_000_000


def planned_setups(
    engine: Engine, selected: list[str], options: ProtocolOptions
) -> dict[str, JobSetup]:
    """The setup each query's jobs will be submitted with (no engine start needed).

    Raises:
        UsageError: The engine cannot run these options (`checks.check_capabilities`), a
            setup breaks the protocol's bounds, or the queries need datasets laid out
            for different numbers of source readers.
    """
    check_capabilities(engine, options)
    probe = Path("/nonexistent-part")  # the setup does not depend on the data
    source = FileSource(probe)
    setups = {q: engine.job_setup(job_spec(q, options, source, probe)) for q in selected}
    for setup in setups.values():
        check_setup(setup)
    readers = {s.parallelism for s in setups.values()}
    if len(readers) > 1:
        raise UsageError(
            f"the queries' jobs run with different parallelism ({sorted(readers)}), but one "
            "dataset has one file per source reader: run them separately"
        )
    return setups


def sized_dataset(engine: Engine, params: DatasetParams) -> DatasetParams:
    """`params` (whose `files` are the jobs' source readers) with the files per slice and the
    time slices per part the engine asks for (its smaller part decides the slices);
    UsageError if the engine cannot read the dataset's file format."""
    formats = engine.capabilities().formats
    if params.format not in formats:
        raise UsageError(
            f"{engine.name} cannot read {params.format} datasets (it reads {', '.join(formats)})"
        )
    smaller = min(b - a for a, b in (params.part_range(part) for part in PARTS))
    files = params.files * engine.capabilities().files_per_reader  # params.files: the readers
    return replace(params, slices=engine.dataset_slices(smaller), files=files)


def ttl_warnings(setups: dict[str, JobSetup], warmup_events: int) -> list[str]:
    """One line per TTL that a warm-up this short would not outlast even once at a generous
    speed: the speed above which the state cannot steady within the warm-up, and what to do.
    Conditional, not a verdict: at the default 200M events Flink reads q20 at about 60K
    events/s here, a 40 min warm-up that outlasts a 5 min TTL many times; the result says
    whether the state was steady."""
    short: dict[float, list[str]] = {}
    readers: dict[float, int] = {}
    for query, setup in setups.items():
        ttl = setup.state_ttl_s
        if ttl is None or not holds_state_by_ttl(query):
            continue
        fastest_s = warmup_events / (OPTIMISTIC_EPS_PER_READER * setup.parallelism)
        if fastest_s < ttl:
            short.setdefault(ttl, []).append(query)
            readers[ttl] = setup.parallelism
    notes = []
    for ttl, qs in short.items():
        steady_s = TTLS_TO_STEADY * ttl
        limit = warmup_events / steady_s
        notes.append(
            f"{', '.join(qs)}: a warm-up of {warmup_events:,} events lasts the "
            f"{TTLS_TO_STEADY} state TTLs ({format_seconds(steady_s)}) their state needs to "
            f"steady only below {limit:,.0f} events/s ({limit / readers[ttl]:,.0f} per source "
            "reader); faster, their state cannot reach a steady size and the result says so "
            "(use more events, or a shorter --state-ttl)"
        )
    return notes
