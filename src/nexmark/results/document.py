"""A results file's document: `{"schema_version": N, "results": [...]}`.

Files carry an integer schema version (asv's habit). Loading rejects versions newer than this
code knows and upgrades older ones one step at a time through `UPGRADES[n]` (`upgrade_to_n`).

Schema history:
    1: first version (nexmark 0.1.0).
    2: event-time progress (samples' `watermark_lag_s`, `watermark_lag_max_s`,
       `watermark_lag_warmup_end_s`), `first_read_gap_s`, `steady_reason`, `job_options`.
       Every new field is nullable, so a version-1 document reads as is.
    3: the data path's ceiling: `source` (the run's source-only calibration job: throughput,
       cores, time) and `source_ratio` (the query's throughput / the source's); `events_id`
       (the events' identity whatever the file layout, so runs of two engines on datasets
       sliced differently are known to hold the same events); `state_bound` (what bounds the
       query's state on its engine: a TTL, the watermark, nothing). New nullable fields again: a
       version-2 document reads as is (nothing was calibrated).
    4: failover runs: `failover` (the outage of a worker killed in the benchmark phase: what,
       when, detect / restore / catch-up times, events replayed, throughput with and without
       the outage). A nullable object: a version-3 document reads as is (no failover run).
    5: the ceiling measured warm: `source.warm_reads` (unscored reads before the timed one),
       `source.cold_throughput_eps` (the first read's), and `source_invalid` (why a query's
       `source_ratio` is no ratio to a ceiling: the query ran faster than the source-only job).
       New nullable fields: a version-4 document reads as is (its ceilings were cold).
    6: repeated benchmark phases (`nexmark run --repeat N`, each restored from the same phase
       checkpoint): `repeats` (one sample per benchmark phase: its status, Time, throughput,
       cores, recovery, end checkpoint, growth and restore proof) and `throughput_stats`
       (median, min, max, standard deviation, 95% interval, count); the top-level metrics
       are those of the median repeat, so `throughput_eps` is the median. A version-5
       document reads as is: no repeats, null statistics (one value: `throughput_eps`).
    7: whole cycles repeated (`nexmark run --runs M`): `repeats[].run` (the cycle, 0 first)
       and `throughput_stats.runs` (the cycles the values come from). A version-6 document
       reads as is: one run.
    8: the system check (`setup.system_check` before the run, `system_check` before each
       query: load average, CPU count, governor, boost, other processes' CPU); the rate
       search (`sustainable.*`, and per trial `repeats[].rate_asked_eps`,
       `.rate_delivered_eps`, `.lag_trend_eps`, `.lag_max_events`, `.sustained`, `.verdict`);
       event-time latency (`latency.*`); `handoff`; the timeline's count times
       (`timeseries[].count_age_s`, `checkpoint_events[].t_completed`). All optional with
       defaults: a version-7 document reads as is (null figures, handoff unknown).
    9: live state: `state_growth` is judged on the live state sampled through the benchmark
       phase (`state_measure`: "live bytes", "live keys", or "checkpoint size" where the engine
       gives no live measure), `state_live_start`/`state_live_end` (the fitted line at the
       phase's start and end), `state_trend_per_s`, `state_live_bytes_end`,
       `state_live_keys_end`, `repeats[].state_measure`; `checkpoint_growth` (the ratio of the
       two checkpoints' full sizes, which `state_growth` was up to version 8); `live_state`
       (every read, both phases). A version-8 document's growth was the checkpoints' ratio:
       the upgrade moves it to `checkpoint_growth` and says so in `state_measure`.
    10: clusters: `setup.workers` (every worker of a cluster target: id, kind, host, slots,
       CPUs, memory, why it left). A new list with a default: a version-9 document reads as
       is (no workers listed: an embedded engine, or a cluster whose workers were not recorded).
    11: Kafka as the source (`--source kafka`, docs/kafka.md): `source_cores` (the embedded
       broker's CPU over the scored phase, beside the engine's `cores`; also per repeat),
       `source_offsets` (the restore proof on offsets), `setup.options.source`. New nullable
       fields: a version-10 document reads as is (read from files).
    12: the restored state's age: `restored_state_age_s` (the processing-time clock from the
       cut to the first benchmark read; a TTL-bound query whose TTL had expired more than 20%
       of its state by then is not steady, also per repeat), repeats `skipped` for that
       reason. A new nullable field: a version-11 document reads as is (the age unknown).
    13: the growth's reads: `state_reads` (the refreshed live reads its trend rests on) and
       `state_pooled_repeats` (with repeats, the top-level growth is judged on every scored
       repeat's reads on one clock, each repeat keeping its own in `repeats[]`). New nullable
       fields: a version-12 document reads as is (the reads unknown, the growth its own).
    14: `state_live_unflushed`: the phase's live reads showed the store's write buffers
       (memtables: most of the live bytes, or no flush seen), not its state, so the growth
       was judged on the checkpoints. A new nullable field: a version-13 document reads as is.
    15: the logical state: `state_logical_bytes_start` and `state_logical_bytes_end` (the
       state written once in the engine's canonical format at the cut and at the end), and
       `state_measure` "logical size" where the growth is their ratio (no live trend). New
       nullable fields: a version-14 document reads as is (not measured).
    16: `phase_too_short` (also per repeat): why a scored phase was too short for its figures
       to resolve (under 5 s, or mostly its end checkpoint). A window-bound state whose two
       sizes fall at different points of its windows' cycle is not judged (`state_steady`
       null with its `steady_reason`). A new nullable field: a version-15 document reads as is.
    17: the machine's other processes through each phase: `other_cores` (scored phase, also per
       repeat), `other_cores_warmup` and `other_processes` (the busiest); over a quarter of a
       core the phase shared the machine. New nullable fields: a version-16 document reads as
       is (not measured).
    18: where the time goes: `operators` (per operator of the scored phase: its vertex, its
       parallelism, its time busy, back-pressured and idle in ms per second, its records in and
       out per second) and the busiest, `bottleneck` with `bottleneck_busy`; `profile`, the
       scored phases' CPU profile (`--profile`). New nullable fields: a version-17 document
       reads as is (no operators reported, not profiled).
    19: `source.too_short`: why the source ceiling's timed read was too short to resolve (under
       5 s, a scored phase's bound); the table then gives no query's share of it. A new
       nullable field: a version-18 document reads as is (no ceiling judged too short).
    20: `operator_busy`: each operator's share of time busy through the scored phase (`[t,
       share]` points between its reads, at most 120). A new nullable field: a version-19
       document reads as is (only the phase's means were recorded).
    21: `setup.system_check.speed`: how fast the machine ran before the run (zlib on a core
       and on all, memory written fresh and again: a yardstick for comparing days). A new
       nullable field: a version-20 document reads as is (not measured).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nexmark.results.codec import ResultsError
from nexmark.results.figures import CHECKPOINT_MEASURE
from nexmark.results.query_result import QueryResult

SCHEMA_VERSION = 21

# UPGRADES[n] turns a document of version n-1 into version n (whole document, not one record).
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    2: lambda doc: doc,  # only new nullable fields
    3: lambda doc: doc,  # only new nullable fields
    4: lambda doc: doc,  # only a new nullable object
    5: lambda doc: doc,  # only new nullable fields
    6: lambda doc: doc,  # a new list and a new nullable object: no repeats were measured
    7: lambda doc: doc,  # new fields with defaults: one run (run 0)
    8: lambda doc: doc,  # new optional fields: no system check, search, latency or handoff
    9: lambda doc: _growth_was_checkpoints(doc),
    10: lambda doc: doc,  # a new list with a default: no workers listed
    11: lambda doc: doc,  # only new nullable fields: read from files
    12: lambda doc: doc,  # a new nullable field: the restored state's age unknown
    13: lambda doc: doc,  # new nullable fields: the growth's reads unknown, none pooled
    14: lambda doc: doc,  # a new nullable field: whether the reads were memtables unknown
    15: lambda doc: doc,  # new nullable fields: the logical sizes not measured
    16: lambda doc: doc,  # a new nullable field: no phase was judged too short
    17: lambda doc: doc,  # new nullable fields: the other processes' CPU not measured
    18: lambda doc: doc,  # new nullable fields: no operators reported
    19: lambda doc: doc,  # a new nullable field: no ceiling judged too short
    20: lambda doc: doc,  # a new nullable field: no busy share over time recorded
    21: lambda doc: doc,  # a new nullable field: the machine's speed not measured
}


def _growth_was_checkpoints(doc: dict[str, Any]) -> dict[str, Any]:
    """Up to version 8 the growth was the ratio of two checkpoints' full sizes."""
    for rec in doc.get("results") or []:
        if isinstance(rec, dict) and rec.get("state_growth") is not None:
            rec["checkpoint_growth"] = rec["state_growth"]
            rec["state_measure"] = CHECKPOINT_MEASURE
    return doc


def load_document(doc: Any, source: str = "results") -> list[QueryResult]:
    """Parse a results document `{"schema_version": N, "results": [...]}`, upgrading old ones.

    Args:
        doc: The parsed JSON.
        source: What to name in error messages (usually the file path).

    Raises:
        ResultsError: on a newer or unknown schema version, or a malformed record.
    """
    if not isinstance(doc, dict) or "schema_version" not in doc or "results" not in doc:
        raise ResultsError(f"{source}: not a nexmark results file (no schema_version/results)")
    version = doc["schema_version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ResultsError(f"{source}: invalid schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: schema version {version} is newer than this nexmark understands "
            f"(up to {SCHEMA_VERSION}); upgrade nexmark to read it"
        )
    doc = upgrade(doc)
    if not isinstance(doc["results"], list):
        raise ResultsError(f"{source}: 'results' must be a list")
    return [QueryResult.from_dict(r) for r in doc["results"]]


def upgrade(doc: dict[str, Any]) -> dict[str, Any]:
    """Apply `UPGRADES[v+1]`, `UPGRADES[v+2]`, ... until the document is current."""
    version = doc["schema_version"]
    while version < SCHEMA_VERSION:
        step = UPGRADES.get(version + 1)
        if step is None:
            raise ResultsError(f"no upgrade from schema version {version} to {version + 1}")
        doc = step(doc)
        version += 1
        doc["schema_version"] = version
    return doc


def dump_document(results: list[QueryResult]) -> dict[str, Any]:
    """The results document for `results.json`."""
    return {"schema_version": SCHEMA_VERSION, "results": [r.to_dict() for r in results]}
