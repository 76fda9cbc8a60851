"""Writing a dataset's events into Kafka topics once, recording and checking the load.

A load is identified by the dataset's events (`DatasetParams.events_id`: not its file layout
or format, which change no event), the number of partitions and the record format:
`<events_id>-p<partitions>-<format>`. It writes two topics, `nexmark-<load id>-warmup` and
`nexmark-<load id>-benchmark` (docs/kafka.md says why two, not one with offsets):

- partitions = the parallelism the load is for; each part's events are cut into blocks of
  `DatasetParams.block_events` (10 ms of event time), block j to partition j mod partitions,
  as the files stripe them: every partition spans the part's whole event time, in event order,
  so parallel readers advance event time together (a watermark per partition);
- one record per event, its value the CSV line of the dataset's CSV files (`RECORD_FORMAT`),
  no key, the producer's time as the record timestamp; topics keep their records for ever
  (retention.ms = -1).

The events are formatted from the dataset's parameters by the generator's CSV formatter
(workload/csvtext.py), whose text is that of the dataset's CSV files byte for byte (a test
compares them), so a Parquet dataset loads as fast as a CSV one.

The load's manifest (manifest.py) is a record in the compacted topic `nexmark-loads`, key =
load id, value = JSON. Its life: a `loading` record is written before any topic is created (it
is what marks the topics as the loader's own), the topics are filled and their end offsets
checked against the expected counts, and only then is the `complete` record written. A load is
looked up there first: `complete` and matching offsets is reused; `loading` (an interrupted
load of ours) is deleted and done again; topics with no record at all are not ours and are
never deleted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from nexmark import console, diskspace
from nexmark.errors import DiskFullError, UsageError
from nexmark.sources.kafka.broker import KafkaError, quiet_logger
from nexmark.sources.kafka.manifest import (
    ADMIN_TIMEOUT_S,
    COMPLETE,
    LOADING,
    MANIFEST_TOPIC,
    LoadManifest,
    admin_client,
    check_reachable,
    partition_counts,
    read_manifests,
    reason,
    topic_partitions,
    verify_topics,
    write_manifest,
)
from nexmark.workload.dataset import PARTS, Dataset, DatasetParams, FileLayout

RECORD_FORMAT = "csv"  # the CSV line of the dataset's files (docs/kafka.md: measured choice)
TOPIC_PREFIX = "nexmark-"
# Events formatted and handed to the producer at a time, per partition (about 10 MB of text).
CHUNK_EVENTS = 50_000
QUEUE_MESSAGES = 500_000  # events queued in the producer at most (about 100 MB)
# The producer's settings, chosen by measurement (docs/kafka.md): lz4 batches were faster to
# load than none on loopback (the broker writes 40% fewer bytes) and take 40% less disk;
# idempotence keeps each partition's order and writes no duplicate on a retry.
PRODUCER_CONFIG = {
    "enable.idempotence": True,
    "acks": "all",
    "compression.type": "lz4",
    "linger.ms": 20,
    "batch.size": 1 << 20,
    "queue.buffering.max.messages": 2 * QUEUE_MESSAGES,
    "queue.buffering.max.kbytes": 1 << 20,
    "delivery.timeout.ms": 120_000,
    "delivery.report.only.error": True,  # the delivery callback runs for failures only
}

# What the load's callers use, the manifest's names included (manifest.py holds those).
__all__ = [
    "COMPLETE",
    "LOADING",
    "LoadManifest",
    "find_load",
    "load_dataset",
    "partition_counts",
    "read_manifests",
    "verify_topics",
]


def load_id(params: DatasetParams, partitions: int, record_format: str = RECORD_FORMAT) -> str:
    return f"{params.events_id}-p{partitions}-{record_format}"


def topic_name(load: str, part: str) -> str:
    return f"{TOPIC_PREFIX}{load}-{part}"


def partition_layouts(params: DatasetParams, part: str, partitions: int) -> list[FileLayout]:
    """Which events each partition of `part`'s topic holds: the layout of one time slice
    striped over `partitions` (block j to partition j mod partitions), in event order."""
    one_slice = dataclasses.replace(params, files=partitions, slices=1, benchmark_slices=None)
    return one_slice.layout(part)


def expected_counts(params: DatasetParams, partitions: int) -> dict[str, list[int]]:
    """Events per partition of each part's topic."""
    return {p: [lay.events for lay in partition_layouts(params, p, partitions)] for p in PARTS}


def _create_topics(admin, topics: Sequence[tuple[str, int, dict[str, str]]]) -> None:
    from confluent_kafka.admin import NewTopic

    # Replication factor -1: the cluster's default (1 on the embedded broker).
    futures = admin.create_topics(
        [NewTopic(name, n, -1, config=cfg) for name, n, cfg in topics],
        operation_timeout=ADMIN_TIMEOUT_S,
    )
    for name, future in futures.items():
        try:
            future.result()
        except Exception as exc:
            raise KafkaError(f"cannot create Kafka topic {name} ({reason(exc)})") from None


def _delete_topics(admin, topics: Sequence[str]) -> None:
    present = [t for t in topics if topic_partitions(admin, t) is not None]
    if not present:
        return
    for name, future in admin.delete_topics(present, operation_timeout=ADMIN_TIMEOUT_S).items():
        try:
            future.result()
        except Exception as exc:
            raise KafkaError(f"cannot delete Kafka topic {name} ({reason(exc)})") from None
    deadline = time.monotonic() + ADMIN_TIMEOUT_S  # deletion is asynchronous on the broker
    while any(topic_partitions(admin, t) is not None for t in present):
        if time.monotonic() > deadline:
            raise KafkaError(f"Kafka topics {', '.join(present)} still exist after deletion")
        time.sleep(0.2)


def _ensure_manifest_topic(admin) -> None:
    if topic_partitions(admin, MANIFEST_TOPIC) is None:
        with contextlib.suppress(KafkaError):  # created meanwhile by another loader: fine
            _create_topics(admin, [(MANIFEST_TOPIC, 1, {"cleanup.policy": "compact"})])


def find_load(bootstrap: str, dataset: Dataset, parallelism: int) -> LoadManifest:
    """The complete, verified load of `dataset` for `parallelism` readers.

    A load with as many partitions as readers is taken; else one with more (a reader then
    reads several partitions). Checked against the dataset's manifest (each part's events) and
    the topics' offsets.

    Raises:
        KafkaError: no such load, or a load with fewer partitions than the parallelism, or a
            topic that does not hold what the manifest says.
    """
    manifests = read_manifests(bootstrap)
    mine = [
        m
        for m in manifests.values()
        if m.events_id == dataset.params.events_id and m.record_format == RECORD_FORMAT
    ]
    complete = [m for m in mine if m.state == COMPLETE]
    usable = sorted(
        (m for m in complete if m.partitions >= parallelism),
        key=lambda m: (m.partitions != parallelism, m.partitions),
    )
    if not usable:
        if complete:
            most = max(m.partitions for m in complete)
            raise KafkaError(
                f"the Kafka load of {dataset.path} has {most} partitions, fewer than the "
                f"parallelism {parallelism}: load it with --partitions {parallelism}"
            )
        state = " (an interrupted load: run nexmark load again)" if mine else ""
        raise KafkaError(f"no complete Kafka load of {dataset.path} at {bootstrap}{state}")
    load = usable[0]
    for part in PARTS:
        a, b = dataset.part_range(part)
        if sum(load.counts.get(part, [])) != b - a:
            raise KafkaError(
                f"the Kafka load {load.load_id} holds {sum(load.counts.get(part, [])):,} "
                f"{part} events, the dataset's manifest says {b - a:,}"
            )
    verify_topics(bootstrap, load)
    return load


# -- loading ---------------------------------------------------------------------------------


@dataclass
class LoadResult:
    manifest: LoadManifest
    reused: bool
    seconds: float
    bytes: int  # bytes of record values written (0 when reused)


def load_dataset(
    bootstrap: str,
    dataset: Dataset,
    partitions: int,
    on_events: Callable[[int], None] | None = None,
    broker_alive: Callable[[], bool] | None = None,
    data_dir_free: Callable[[int], None] | None = None,
) -> LoadResult:
    """Write `dataset` into its two topics once (or reuse the complete load of it).

    Args:
        bootstrap: The cluster.
        dataset: The dataset whose events are loaded (its parameters; see the module's doc).
        partitions: Partitions of each topic (the parallelism it is for).
        on_events: Called with the number of events handed to the producer (progress).
        broker_alive: For an embedded broker, whether its JVM still runs (a broker that died
            while loading, a full disk among the causes, is reported at once).
        data_dir_free: For an embedded broker, called with the bytes the load may write
            before anything is written; raises DiskFullError when they do not fit.

    Raises:
        KafkaError, DiskFullError, UsageError: one line each; the manifest stays `loading`.
    """
    if partitions < 1:
        raise UsageError(f"partitions must be at least 1, got {partitions}")
    params = dataset.params
    lid = load_id(params, partitions)
    topics = {part: topic_name(lid, part) for part in PARTS}
    admin = admin_client(bootstrap)
    check_reachable(admin, bootstrap)
    started = time.perf_counter()
    reusable = _previous_load(admin, bootstrap, lid, topics)
    if reusable is not None:
        return LoadResult(reusable, True, time.perf_counter() - started, 0)
    counts = expected_counts(params, partitions)
    manifest = LoadManifest(
        load_id=lid,
        state=LOADING,
        dataset_id=dataset.id,
        events_id=params.events_id,
        params=params.to_dict(),
        record_format=RECORD_FORMAT,
        partitions=partitions,
        topics=topics,
        counts=counts,
        started_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    if data_dir_free is not None:
        data_dir_free(estimated_bytes(params))
    _ensure_manifest_topic(admin)
    write_manifest(bootstrap, manifest)  # first: the topics below are ours from now on
    _delete_topics(admin, list(topics.values()))  # an earlier interrupted or damaged load
    keep = {"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}
    _create_topics(admin, [(t, partitions, keep) for t in topics.values()])
    written = _produce(bootstrap, params, topics, partitions, on_events, broker_alive)
    verify_topics(bootstrap, manifest)
    seconds = time.perf_counter() - started
    done = dataclasses.replace(manifest, state=COMPLETE, seconds=round(seconds, 3))
    write_manifest(bootstrap, done)  # last: only now is the load complete
    return LoadResult(done, False, seconds, written)


def _previous_load(admin, bootstrap: str, lid: str, topics: dict[str, str]):
    """The complete load `lid` if its topics match it (reused), else None (loaded again);
    KafkaError when its topics exist but no load of ours claims them (never deleted)."""
    previous = read_manifests(bootstrap).get(lid)
    if previous is not None and previous.state == COMPLETE:
        with contextlib.suppress(KafkaError):
            verify_topics(bootstrap, previous)
            return previous
    if previous is None:
        foreign = [t for t in topics.values() if topic_partitions(admin, t) is not None]
        if foreign:
            raise KafkaError(
                f"Kafka topic {foreign[0]} exists but no nexmark load created it: delete it "
                "yourself, or use another cluster (nexmark deletes only its own topics)"
            )
    return None


def estimated_bytes(params: DatasetParams) -> int:
    """An upper bound of the bytes a load writes: the CSV text of a sample, uncompressed
    (lz4 writes about 60% of it: docs/kafka.md)."""
    from nexmark.workload.csvtext import CsvFormatter

    sample = min(params.events, 20_000)
    text = CsvFormatter(params.generator_config).format(0, sample)
    return len(text) * params.events // sample + (64 << 20)


def _producer(bootstrap: str, failures: list[str]):
    """A producer of PRODUCER_CONFIG that notes its failures (fatal errors, all brokers down,
    failed deliveries) in `failures`."""
    from confluent_kafka import KafkaError as ClientError
    from confluent_kafka import Producer

    def on_error(err) -> None:  # the client's own errors
        if err.fatal() or err.code() == ClientError._ALL_BROKERS_DOWN:
            failures.append(err.str())

    def on_delivery(err, _msg) -> None:  # called for failed deliveries only
        if err is not None and len(failures) < 10:
            failures.append(err.str())

    return Producer(
        {
            "bootstrap.servers": bootstrap,
            **PRODUCER_CONFIG,
            "error_cb": on_error,
            "on_delivery": on_delivery,
            "logger": quiet_logger(),
        }
    )


def _send(producer, topic: str, partition: int, text: bytes, check: Callable[[], None]) -> None:
    """The lines of `text`, one record each, into one partition, in order."""
    lines = text.split(b"\n")
    lines.pop()  # after the last newline
    # Room first (a batch refused half-way could reorder a retry), then the whole batch in one
    # call: a third less per event than produce() each.
    while len(producer) + len(lines) > QUEUE_MESSAGES:
        producer.poll(0.005)  # no delivery events to wait for
        check()
    queued = producer.produce_batch(topic, [{"value": line} for line in lines], partition=partition)
    if queued != len(lines):
        raise KafkaError(
            f"the Kafka producer refused {len(lines) - queued} of {len(lines)} events of {topic}"
        )


def _produce(
    bootstrap: str,
    params: DatasetParams,
    topics: dict[str, str],
    partitions: int,
    on_events: Callable[[int], None] | None,
    broker_alive: Callable[[], bool] | None,
) -> int:
    """Every event of both parts into its partition, in event order per partition; the bytes
    of the records written."""
    from nexmark.workload.csvtext import CsvFormatter

    failures: list[str] = []
    producer = _producer(bootstrap, failures)
    formatter = CsvFormatter(params.generator_config)
    written = 0

    def check() -> None:
        if broker_alive is not None and not broker_alive():
            raise KafkaError("the Kafka broker stopped while loading")
        if failures:
            raise KafkaError(f"loading into Kafka failed ({failures[0]})")

    try:
        for part in PARTS:
            layouts = partition_layouts(params, part, partitions)
            per_chunk = max(1, CHUNK_EVENTS // layouts[0].block)
            blocks = max(len(lay.block_starts()) for lay in layouts)
            for first in range(0, blocks, per_chunk):  # partitions advance together
                for p, layout in enumerate(layouts):
                    numbers = layout.numbers(first, first + per_chunk)
                    if len(numbers) == 0:
                        continue
                    text = bytes(formatter.format_numbers(numbers))
                    _send(producer, topics[part], p, text, check)
                    written += len(text)
                    producer.poll(0)
                    check()
                    if on_events is not None:
                        on_events(len(numbers))
        while producer.flush(1.0) > 0:
            check()
        check()
    except BaseException:
        producer.purge()  # nothing more is sent; the manifest stays `loading`
        with contextlib.suppress(Exception):
            producer.flush(0)
        raise
    return written


def check_free_space(folder, needed: int) -> None:
    """DiskFullError (one line) when `folder`'s file system has less than `needed` free."""
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise DiskFullError(
            f"the Kafka load needs about {console.human_bytes(needed)} in {folder}: "
            f"{diskspace.free_space(folder)}"
        )
