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
from nexmark.engines.base import NO_TTL, Engine, JobSetup, StateTtlSupport
from nexmark.errors import UsageError
from nexmark.protocol.query_run import ProtocolOptions, check_setup, job_spec
from nexmark.results.model import CHECKPOINT_MEASURE
from nexmark.workload import queries
from nexmark.workload.dataset import PARTS, DatasetParams

# State held by a processing-time TTL steadies after a few TTLs: this many.
TTLS_TO_STEADY = 3
# A generous ceiling on warm-up speed, events per second per source reader (about 3x what q0
# reaches on a 2-core machine): a warm-up shorter than one TTL even at this speed is far too
# short for its state to steady (that takes about TTLS_TO_STEADY TTLs).
OPTIMISTIC_EPS_PER_READER = 1_000_000


def planned_setups(
    engine: Engine, selected: list[str], options: ProtocolOptions
) -> dict[str, JobSetup]:
    """The setup each query's jobs will be submitted with (no engine start needed).

    Raises:
        UsageError: A setup breaks the protocol's bounds, or the queries need datasets laid out
            for different numbers of source readers.
    """
    if (
        options.state_ttl not in (None, NO_TTL)
        and engine.capabilities().state_ttl is StateTtlSupport.NONE
    ):
        raise UsageError(f"{engine.name} cannot expire state by time: no --state-ttl on it")
    probe = Path("/nonexistent-part")  # the setup does not depend on the data
    setups = {q: engine.job_setup(job_spec(q, options, probe, probe)) for q in selected}
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


def holds_state_by_ttl(query: str) -> bool:
    """Queries whose state grows without bound unless a TTL holds it (queries.md: 'grows').

    Pattern state (MATCH_RECOGNIZE's partial matches) is not one: no state TTL expires it."""
    kind = queries.get(query).state
    return "grows" in kind and not kind.startswith("pattern")


def ttl_warnings(setups: dict[str, JobSetup], warmup_events: int) -> list[str]:
    """One line per TTL that a warm-up this short cannot outlast even once."""
    short: dict[float, list[str]] = {}
    for query, setup in setups.items():
        ttl = setup.state_ttl_s
        if ttl is None or not holds_state_by_ttl(query):
            continue
        fastest_s = warmup_events / (OPTIMISTIC_EPS_PER_READER * setup.parallelism)
        if fastest_s < ttl:
            short.setdefault(ttl, []).append(query)
    return [
        f"{', '.join(qs)}: even at {OPTIMISTIC_EPS_PER_READER:,} events/s per source reader a "
        f"warm-up of {warmup_events:,} events lasts less than one state TTL "
        f"({format_seconds(ttl)}), where state needs about {TTLS_TO_STEADY} to steady: their state "
        "cannot reach a steady size (use more events, or a shorter --state-ttl)"
        for ttl, qs in short.items()
    ]


def steady_reason(
    query: str,
    growth: float | None,
    measure: str | None,
    limit: float,
    warmup_s: float | None,
    state_ttl_s: float | None,
    watermark_lag_max_s: float | None,
    warmup_eps: float | None = None,
    benchmark_eps: float | None = None,
) -> str | None:
    """Why a query's state grew more than `limit` in the benchmark phase; None when it did not.

    Args:
        query: The query.
        growth: The state's growth over the benchmark phase (results.model.QueryResult).
        measure: What it was judged on (`state_measure`: live bytes, live keys, checkpoint size).
        limit: The growth bound (1.2).
        warmup_s: Wall time of the warm-up phase.
        state_ttl_s: The job's state TTL (None: none).
        watermark_lag_max_s: Largest lag of the watermark behind the data in the benchmark phase.
        warmup_eps, benchmark_eps: Median rates of the two phases, events per second.
    """
    if growth is None or growth <= limit:
        return None
    if measure in (None, CHECKPOINT_MEASURE):  # no live measure: two checkpoints' files
        grew = f"state grew {growth:.2f}x in the benchmark phase (checkpoint size)"
    else:
        grew = f"state grew {growth:.2f}x over the benchmark phase ({measure})"
    kind = queries.get(query).state
    if holds_state_by_ttl(query):
        if state_ttl_s is None:
            return f"{grew}: no state TTL, and this query's state ({kind}) grows with the data"
        if warmup_s is not None and warmup_s < TTLS_TO_STEADY * state_ttl_s:
            return (
                f"warm-up lasted {warmup_s:.0f} s, under {TTLS_TO_STEADY} state TTLs "
                f"({format_seconds(state_ttl_s)}): state could not reach steady"
            )
        faster = (benchmark_eps or 0) / warmup_eps if warmup_eps else 0
        if faster > 1 + (limit - 1) / 2:  # the processing-time TTL held more keys
            return (
                f"{grew}, and it ran {faster:.2f}x faster than the warm-up "
                f"({benchmark_eps:,.0f} vs {warmup_eps:,.0f} events/s): a processing-time TTL "
                f"({format_seconds(state_ttl_s)}) holds the keys of its last "
                f"{format_seconds(state_ttl_s)}, so a faster phase holds more"
            )
    if kind.startswith("pattern") and "grows" in kind:
        return (
            f"{grew}: partial matches that never complete stay in its pattern state, which a "
            "state TTL does not expire"
        )
    if "window" in kind and watermark_lag_max_s is not None and watermark_lag_max_s > 10:
        return (
            f"{grew}: the watermark lagged the data by up to {watermark_lag_max_s:.0f} s, "
            "holding windows open"
        )
    lasted = f"the warm-up lasted {warmup_s:.0f} s" if warmup_s is not None else "unknown warm-up"
    ttl = f", state TTL {format_seconds(state_ttl_s)}" if state_ttl_s else ", no state TTL"
    return f"{grew} although {lasted}{ttl} ({kind}): the state itself is not steady"
