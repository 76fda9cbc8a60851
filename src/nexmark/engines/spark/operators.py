"""Where a Spark query's time goes, from its micro-batches' progress reports
(`StreamingQueryProgress`, as JSON): the parts of each batch as Spark times them (`durationMs`)
and each stateful operator's time in its state store (`stateOperators[]`).

A micro-batch runs its parts one after another on the driver's stream thread: `latestOffset`
(what the source has that is new), `walCommit` (the offsets log), `getBatch`, `queryPlanning`,
`addBatch` (the batch's jobs: reading, every operator, the sink) and `commitOffsets` (the
commit log); `triggerExecution` is their total. A stateful operator's tasks time their state
updates (`allUpdatesTimeMs`, which includes pulling their input), removals
(`allRemovalsTimeMs`) and the store's commit (`commitTimeMs`), each summed over its tasks, all
inside `addBatch`.

Each read sums the query's executed batches so far into counters (`VertexLoad`), so that two
reads give figures over the batches between them, as Flink's counters do (`results.operators`):

- The clock (`ran_ms`) is the wall time the batches span: a batch's end (its trigger's start
  plus `triggerExecution`) less the previous batch's end, or its own `triggerExecution` where
  that batch was not seen (the query's first, or one gone from Spark's last reports between
  two reads): the wait before a batch counts with it, a batch not seen not at all.
- A part's busy time is its `durationMs`; its idle time is the time no batch ran (the trigger
  waiting for its interval or for data), the same for every part, so that a part's share of
  the batch time is busy / (1000 - idle).
- A state operator's busy time is its three timers' sum over the tasks that can run at once:
  the task slots (`local[N]`: N; unknown on a cluster), at most its partitions. 1000 ms per s
  is every one of them in it all the time. Its rows updated are its records in: Spark counts
  no rows in or out per operator.
- A micro-batch is never back-pressured: that figure is None (never 0), as is every figure
  Spark does not give: a state operator's idle time, the records of the parts but `addBatch`,
  whose records in and out are the batch's input rows (`numInputRows`: what the source gave,
  after any filter pushed into the scan) and the sink's (`sink.numOutputRows`, where known).

A report without `addBatch` (an idle trigger's: no batch ran) counts for nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from nexmark.engines.spark import options as opts
from nexmark.engines.spark.progress import epoch_ms
from nexmark.engines.spec import JobSetup
from nexmark.engines.status import VertexLoad

TOTAL = "triggerExecution"
EXECUTED = "addBatch"  # only a batch that ran times it
# The parts in the order a micro-batch runs them; a part only a newer Spark times follows them.
PARTS = ("latestOffset", "walCommit", "getBatch", "queryPlanning", EXECUTED, "commitOffsets")
STATE_TIMES = ("allUpdatesTimeMs", "allRemovalsTimeMs", "commitTimeMs")


def batch_loads(progress: Sequence[dict[str, Any]], slots: int | None) -> list[VertexLoad] | None:
    """Counters over the executed batches of `progress` (in batch order, as
    `SparkJob.progress` gives them): the batch's parts first, then its state operators as Spark
    lists them. None before a batch ran; `slots`: the tasks the engine runs at once."""
    batches = [p for p in progress if EXECUTED in (p.get("durationMs") or {})]
    if not batches:
        return None
    ran = sum(_spans(batches))
    waited = max(ran - sum(_ms(p, TOTAL) for p in batches), 0.0)
    parts = [_part(key, batches, ran, waited) for key in _parts(batches)]
    return parts + _state_operators(batches, ran, slots)


def task_slots(setup: JobSetup | None) -> int | None:
    """The tasks a local master runs at once (`local[N]`); None on a cluster or unknown."""
    master = setup.options.get(opts.MASTER_KEY) if setup is not None else None
    try:
        return opts.local_threads(master) if master else None
    except ValueError:
        return None


def _spans(batches: list[dict[str, Any]]) -> list[float]:
    """Each batch's wall time, ms: from the previous batch's end to its own end, or its own
    time where the previous batch was not seen."""
    ends: dict[int, float] = {}
    spans = []
    for p in batches:
        took = _ms(p, TOTAL)
        start = epoch_ms(p.get("timestamp"))
        end = None if start is None else start + took
        before = ends.get(int(p["batchId"]) - 1)
        spans.append(took if before is None or end is None else max(end - before, took))
        if end is not None:
            ends[int(p["batchId"])] = end
    return spans


def _parts(batches: list[dict[str, Any]]) -> list[str]:
    timed = dict.fromkeys(key for p in batches for key in p["durationMs"] if key != TOTAL)
    return [key for key in PARTS if key in timed] + [key for key in timed if key not in PARTS]


def _part(key: str, batches: list[dict[str, Any]], ran: float, waited: float) -> VertexLoad:
    """One part of the batches: the driver's time in it (no tasks: no parallelism)."""
    records_in = records_out = None
    if key == EXECUTED:
        records_in = _total(p.get("numInputRows") for p in batches)
        records_out = _total((p.get("sink") or {}).get("numOutputRows") for p in batches)
    busy = sum(_ms(p, key) for p in batches)
    return VertexLoad(f"part:{key}", key, None, ran, busy, None, waited, records_in, records_out)


def _state_operators(
    batches: list[dict[str, Any]], ran: float, slots: int | None
) -> list[VertexLoad]:
    """Each state operator (by its place in Spark's list, the same in every batch of a query):
    its tasks' time per task that can run at once, and its rows updated."""
    count = max(len(p.get("stateOperators") or []) for p in batches)
    names: list[str] = []
    out = []
    for i in range(count):
        ops = [p["stateOperators"][i] for p in batches if len(p.get("stateOperators") or []) > i]
        busy = sum(sum(_number(op.get(t)) for t in STATE_TIMES) / _at_once(op, slots) for op in ops)
        name = str(ops[-1].get("operatorName") or "state")
        names.append(name)
        if names.count(name) > 1:  # two of a kind (two aggregations): told apart by their place
            name = f"{name} ({names.count(name)})"
        out.append(
            VertexLoad(
                f"state:{i}",
                name,
                _integer(ops[-1].get("numShufflePartitions")),
                ran,
                busy,
                records_in=_total(op.get("numRowsUpdated") for op in ops),
            )
        )
    return out


def _at_once(op: dict[str, Any], slots: int | None) -> int:
    """The operator's tasks that can run at once: the slots, at most its partitions."""
    known = [n for n in (slots, _integer(op.get("numShufflePartitions"))) if n and n > 0]
    return min(known) if known else 1


def _ms(progress: dict[str, Any], key: str) -> float:
    return _number((progress.get("durationMs") or {}).get(key))


def _number(value: Any) -> float:
    """A time Spark reports, ms; one it leaves out is no time."""
    try:
        return max(float(value), 0.0) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


def _total(values: Iterable[Any]) -> float | None:
    """The sum of the counts Spark knows (it reports -1 for one it does not); None: none."""
    known = [float(v) for v in values if isinstance(v, (int, float)) and v >= 0]
    return sum(known) if known else None


def _integer(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
