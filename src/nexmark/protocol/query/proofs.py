"""The proofs a phase must pass for its figures to mean anything: the benchmark job restored
the phase checkpoint (or kept its state in place), each source reader read one file, every
event-time operator received a watermark and dropped no record behind it. A proof that fails
raises; nothing here is timed.
"""

from __future__ import annotations

from nexmark.engines.base import CheckpointInfo, Job
from nexmark.errors import EngineError
from nexmark.protocol.preparation.kafka import KafkaParts
from nexmark.protocol.preparation.parts import PhaseParts
from nexmark.protocol.query.observe import BenchmarkObserved
from nexmark.protocol.query.waits import Waits

# After the scored phase, how long a job's operators may still await their first watermark.
EVENT_TIME_GRACE_S = 10.0


class InvalidRunError(EngineError):
    """The run broke a condition the protocol needs for its figures to mean anything (not a
    wrong result of the query): running it again may succeed."""


class ReaderSkewError(InvalidRunError):
    """A phase's source readers did not read one file each (the run is not valid)."""


class EventTimeStalledError(InvalidRunError):
    """An event-time operator of the benchmark job never received a watermark: its windows and
    timers never fire (the run is not valid)."""


class LateRecordsError(InvalidRunError):
    """The benchmark job's event-time operators dropped records behind the watermark: the
    phase did not do all of the query's work (the run is not valid)."""


def check_no_late_records(job: Job, rate_fed: bool) -> None:
    """After the scored phase: no event-time operator dropped a record for coming behind the
    watermark. A reader that went back in event time lets the watermark pass its events; the
    windows they belonged to fire without them, and the phase's rows and figures are not the
    query's. Fed at a rate, it happens when the job falls further behind the feed than the
    watermark's delay: Flink's file source hands the files waiting for a reader out newest
    first (its split assigner is a stack), so a reader reads a later file before an earlier
    one (measured: q8 at 200K events/s on a machine shared with two busy processes)."""
    dropped = job.late_records_dropped()
    if not dropped:
        return
    why = (
        "the job fell behind the feed by more than the watermark's delay, and its readers "
        "took the waiting files out of event order"
        if rate_fed
        else "a source reader fell behind the others"
    )
    raise LateRecordsError(
        f"the benchmark job dropped {dropped:,} records behind the watermark ({why}): "
        "windows fired without them, so the phase is not a valid measurement"
    )


def confirm_restore(job: Job, cp: CheckpointInfo, waits: Waits, seen: BenchmarkObserved) -> None:
    """The restored job says it restored the phase checkpoint `cp` (noted on `seen`)."""
    restored = job.restored_from()
    # An engine may publish the restore a moment after the tasks run: ask for a while.
    for _ in range(50):
        if restored is not None:
            break
        waits.alive(job)
        waits.sleep(0.1)
        restored = job.restored_from()
    if restored is None:
        raise EngineError("the restored job reports no restored state")
    assert cp.snapshot is not None
    if not cp.snapshot.same_as(restored):
        raise EngineError(
            f"restored from {restored.ref or restored.id}, not from the phase checkpoint {cp.id}"
        )
    seen.restored_from = restored.ref or cp.snapshot.ref
    seen.restored_id = restored.id


def confirm_in_place(job: Job, cp: CheckpointInfo, seen: BenchmarkObserved) -> None:
    """IN_PLACE: the state crossed the cut in the job itself, which must not have restarted
    since the phase checkpoint (a restart would have restored some other checkpoint, or none)."""
    recovery = job.recovery()
    if recovery is not None and recovery.restarts:
        raise EngineError(
            f"the job restarted {recovery.restarts} time(s) across the cut: its state "
            "did not stay in place"
        )
    seen.restored_from = f"in place (job {job.id}, after checkpoint {cp.id})"
    seen.restored_id = None


def check_readers(
    job: Job, part: str, parts: PhaseParts, rate_fed: bool, kafka: KafkaParts | None = None
) -> None:
    """Each source reader read exactly one file: a reader that read two one after the other
    went back in event time, and the watermark (the minimum over readers) then skipped
    events as late. It can happen when one reader finishes a small file before another
    reader has started (a loaded machine); the phase is then not valid."""
    if rate_fed:
        return  # a reader reads one file of each released slice: the counts are sums
    # From Kafka: a reader per partition, each its partition's events.
    source = kafka.sources.get(part) if kafka is not None else None
    expected = sorted(source.counts if source else parts.file_events.get(part, []))
    counts = job.events_per_reader()
    if not expected or counts is None or sorted(counts) == expected:
        return
    what = "partitions" if source else "files"
    raise ReaderSkewError(
        f"the source readers read {counts} events where the part's {what} hold {expected}: "
        f"one reader read two {what}, so the phase's event time was not in order"
    )


def check_event_time(job: Job, waits: Waits) -> None:
    """After the scored phase (its end is recorded): an event-time operator that has still
    not received a watermark never fired a window or timer, so the phase did not do the
    query's work. Its first watermark may trail the data by a moment: wait a little."""
    until = waits.clock() + EVENT_TIME_GRACE_S
    while job.awaits_watermark():
        if waits.clock() >= until:
            raise EventTimeStalledError(
                "no event-time operator of the benchmark job received a watermark: its "
                "windows never fired, so the phase is not a valid measurement"
            )
        waits.alive(job)
        waits.sleep(0.2)


class SourceOffsetsError(InvalidRunError):
    """A Kafka-reading job's offsets are not the load's: the phase did not read exactly its
    part's events (the run is not valid)."""


# How long a checkpoint's offsets may take to show: Flink commits them to Kafka once the
# checkpoint completes, asynchronously, and publishes them when the commit's answer is handled,
# inside its split reader's next poll of Kafka: up to 10 s on a topic read to its end (its poll
# timeout; 9-10 s measured after each phase's checkpoint). A mismatch only shows after this wait,
# so its margin over those 10 s is generous: a loaded machine must not fail a valid run.
OFFSETS_WAIT_S = 40.0

PROVED = "proved"
NOT_PROVEN = "not proven"


def check_offsets(job: Job, expected: dict[str, list[int]], waits: Waits, what: str) -> bool:
    """The restore proof on offsets (--source kafka): the job's read positions as of its
    latest checkpoint (`Job.source_offsets`) are, for each topic of `expected`, the next offset
    of each partition that `expected` names (a load's counts: its end offsets). False: the
    engine cannot tell (not proven); SourceOffsetsError (one line) on a mismatch."""
    until = waits.clock() + OFFSETS_WAIT_S
    while True:
        offsets = job.source_offsets()
        if offsets is None:
            return False
        wrong = {t: offsets.get(t) for t, counts in expected.items() if offsets.get(t) != counts}
        if not wrong:
            return True
        if waits.clock() >= until:
            topic, got = next(iter(wrong.items()))
            raise SourceOffsetsError(
                f"{what}: the job's offsets on {topic} are {got}, the load's end offsets "
                f"{expected[topic]}: the phase did not read exactly its part"
            )
        waits.alive(job)
        waits.sleep(0.25)


def offsets_verdict(warmup: bool | None, benchmark: bool | None) -> str | None:
    """What a result records of the offsets proof: None for a files run (nothing to prove)."""
    if warmup is None and benchmark is None:
        return None
    if warmup and benchmark:
        return (
            f"{PROVED}: the phase checkpoint held the warm-up topic's end offsets, and the "
            "benchmark job held them too and read the benchmark topic to its end offsets"
        )
    return f"{NOT_PROVEN}: the engine does not report its Kafka read positions"
