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

The load's manifest is a record in the compacted topic `nexmark-loads`, key = load id, value =
JSON. Its life: a `loading` record is written before any topic is created (it is what marks the
topics as the loader's own), the topics are filled and their end offsets checked against the
expected counts, and only then is the `complete` record written. A load is looked up there
first: `complete` and matching offsets is reused; `loading` (an interrupted load of ours) is
deleted and done again; topics with no record at all are not ours and are never deleted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from nexmark import console, diskspace
from nexmark.errors import DiskFullError, UsageError
from nexmark.sources.kafka.broker import KafkaError, quiet_logger
from nexmark.workload.dataset import PARTS, Dataset, DatasetParams, FileLayout

RECORD_FORMAT = "csv"  # the CSV line of the dataset's files (docs/kafka.md: measured choice)
MANIFEST_TOPIC = "nexmark-loads"
TOPIC_PREFIX = "nexmark-"
LOAD_VERSION = 1
LOADING, COMPLETE = "loading", "complete"
# Events formatted and handed to the producer at a time, per partition (about 10 MB of text).
CHUNK_EVENTS = 50_000
QUEUE_MESSAGES = 500_000  # events queued in the producer at most (about 100 MB)
ADMIN_TIMEOUT_S = 30.0
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


@dataclass(frozen=True)
class LoadManifest:
    """One record of the manifest topic."""

    load_id: str
    state: str  # LOADING or COMPLETE
    dataset_id: str
    events_id: str
    params: dict
    record_format: str
    partitions: int
    topics: dict[str, str]  # part -> topic
    counts: dict[str, list[int]]  # part -> events per partition (expected, then checked)
    started_at: str
    seconds: float | None = None  # the load's time (complete only)
    version: int = LOAD_VERSION

    def to_json(self) -> bytes:
        return json.dumps(dataclasses.asdict(self), sort_keys=True).encode()

    @classmethod
    def from_json(cls, value: bytes) -> LoadManifest:
        d = json.loads(value)
        fields = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in fields})

    @property
    def events(self) -> int:
        return sum(sum(c) for c in self.counts.values())


# -- the cluster -----------------------------------------------------------------------------


def _admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "logger": quiet_logger()})


def _check_reachable(admin, bootstrap: str) -> None:
    try:
        admin.list_topics(timeout=10)
    except Exception as exc:
        raise KafkaError(f"Kafka broker at {bootstrap} not reachable ({_reason(exc)})") from None


def _reason(exc: BaseException) -> str:
    err = exc.args[0] if exc.args else exc
    text = err.str() if hasattr(err, "str") else str(err)
    return " ".join(str(text).split())


def _topic_partitions(admin, topic: str) -> int | None:
    """The topic's number of partitions; None if it does not exist."""
    meta = admin.list_topics(topic=topic, timeout=ADMIN_TIMEOUT_S).topics.get(topic)
    if meta is None or meta.error is not None:
        return None
    return len(meta.partitions)


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
            raise KafkaError(f"cannot create Kafka topic {name} ({_reason(exc)})") from None


def _delete_topics(admin, topics: Sequence[str]) -> None:
    present = [t for t in topics if _topic_partitions(admin, t) is not None]
    if not present:
        return
    for name, future in admin.delete_topics(present, operation_timeout=ADMIN_TIMEOUT_S).items():
        try:
            future.result()
        except Exception as exc:
            raise KafkaError(f"cannot delete Kafka topic {name} ({_reason(exc)})") from None
    deadline = time.monotonic() + ADMIN_TIMEOUT_S  # deletion is asynchronous on the broker
    while any(_topic_partitions(admin, t) is not None for t in present):
        if time.monotonic() > deadline:
            raise KafkaError(f"Kafka topics {', '.join(present)} still exist after deletion")
        time.sleep(0.2)


def _ensure_manifest_topic(admin) -> None:
    if _topic_partitions(admin, MANIFEST_TOPIC) is None:
        with contextlib.suppress(KafkaError):  # created meanwhile by another loader: fine
            _create_topics(admin, [(MANIFEST_TOPIC, 1, {"cleanup.policy": "compact"})])


def read_manifests(bootstrap: str) -> dict[str, LoadManifest]:
    """Every load's latest manifest record, by load id (empty if there is no manifest topic)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    admin = _admin(bootstrap)
    _check_reachable(admin, bootstrap)
    if _topic_partitions(admin, MANIFEST_TOPIC) is None:
        return {}
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "nexmark-load-manifest",  # never committed: assign() without commits
            "enable.auto.commit": False,
            "logger": quiet_logger(),
        }
    )
    try:
        low, high = watermarks(consumer, TopicPartition(MANIFEST_TOPIC, 0))
        found: dict[str, LoadManifest] = {}
        if high <= low:
            return found
        consumer.assign([TopicPartition(MANIFEST_TOPIC, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + ADMIN_TIMEOUT_S
        offset = -1
        while offset < high - 1:
            msg = consumer.poll(1.0)
            if time.monotonic() > deadline:
                raise KafkaError(f"cannot read the load manifests in Kafka topic {MANIFEST_TOPIC}")
            if msg is None or msg.error() is not None:
                continue
            offset = msg.offset()
            key = msg.key().decode() if msg.key() else ""
            if msg.value() is None:  # a tombstone: the load was removed
                found.pop(key, None)
                continue
            with contextlib.suppress(ValueError, TypeError):
                found[key] = LoadManifest.from_json(msg.value())
        return found
    finally:
        consumer.close()


def _write_manifest(bootstrap: str, manifest: LoadManifest) -> None:
    from confluent_kafka import Producer

    errors: list[str] = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "logger": quiet_logger()})
    producer.produce(
        MANIFEST_TOPIC,
        manifest.to_json(),
        key=manifest.load_id.encode(),
        on_delivery=lambda err, _msg: errors.append(str(err)) if err else None,
    )
    left = producer.flush(ADMIN_TIMEOUT_S)
    if left or errors:
        why = errors[0] if errors else "not delivered in time"
        raise KafkaError(f"cannot write the load manifest of {manifest.load_id} ({why})")


# -- checking a load -------------------------------------------------------------------------


def watermarks(consumer, partition) -> tuple[int, int]:
    """A partition's (start offset, end offset), retried while its leader is being elected
    (a broker just started); KafkaError once ADMIN_TIMEOUT_S has passed."""
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while True:
        try:
            return consumer.get_watermark_offsets(partition, timeout=ADMIN_TIMEOUT_S)
        except Exception as exc:
            if not _retriable(exc) or time.monotonic() > deadline:
                raise KafkaError(
                    f"cannot read the offsets of Kafka topic {partition.topic} partition "
                    f"{partition.partition} ({_reason(exc)})"
                ) from None
            time.sleep(0.2)


def _retriable(exc: BaseException) -> bool:
    """A client error that passes once partition leaders are elected (a broker just started:
    the metadata names a leader before that broker serves the partition)."""
    from confluent_kafka import KafkaError as ClientError

    err = exc.args[0] if exc.args else None
    if not isinstance(err, ClientError):
        return False
    transient = (
        ClientError.NOT_LEADER_FOR_PARTITION,
        ClientError.LEADER_NOT_AVAILABLE,
        ClientError.UNKNOWN_TOPIC_OR_PART,
        ClientError._TRANSPORT,
        ClientError._TIMED_OUT,
    )
    return err.retriable() or err.code() in transient


def partition_counts(bootstrap: str, topic: str) -> list[int] | None:
    """Records in each partition of `topic` (end offset - start offset); None if it is missing."""
    from confluent_kafka import Consumer, TopicPartition

    admin = _admin(bootstrap)
    n = _topic_partitions(admin, topic)
    if n is None:
        return None
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "nexmark-load-check", "logger": quiet_logger()}
    )
    try:
        counts = []
        for p in range(n):
            low, high = watermarks(consumer, TopicPartition(topic, p))
            counts.append(high - low)
        return counts
    finally:
        consumer.close()


def verify_topics(bootstrap: str, manifest: LoadManifest) -> None:
    """Each part's topic exists and holds the manifest's events per partition.

    Raises:
        KafkaError: one line naming the topic and what differs.
    """
    for part, topic in manifest.topics.items():
        expected = manifest.counts[part]
        found = partition_counts(bootstrap, topic)
        if found is None:
            raise KafkaError(f"Kafka topic {topic} is missing (load {manifest.load_id})")
        if len(found) != len(expected):
            raise KafkaError(
                f"Kafka topic {topic} has {len(found)} partitions, its load manifest says "
                f"{len(expected)}"
            )
        if found != expected:
            p = next(i for i, (a, b) in enumerate(zip(found, expected, strict=True)) if a != b)
            raise KafkaError(
                f"Kafka topic {topic} holds {sum(found):,} events ({found[p]:,} in partition "
                f"{p}), its load manifest says {sum(expected):,} ({expected[p]:,}): load it "
                "again (nexmark load)"
            )


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
    admin = _admin(bootstrap)
    _check_reachable(admin, bootstrap)
    started = time.perf_counter()
    previous = read_manifests(bootstrap).get(lid)
    if previous is not None and previous.state == COMPLETE:
        with contextlib.suppress(KafkaError):
            verify_topics(bootstrap, previous)
            return LoadResult(previous, True, time.perf_counter() - started, 0)
    if previous is None:
        foreign = [t for t in topics.values() if _topic_partitions(admin, t) is not None]
        if foreign:
            raise KafkaError(
                f"Kafka topic {foreign[0]} exists but no nexmark load created it: delete it "
                "yourself, or use another cluster (nexmark deletes only its own topics)"
            )
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
    _write_manifest(bootstrap, manifest)  # first: the topics below are ours from now on
    _delete_topics(admin, list(topics.values()))  # an earlier interrupted or damaged load
    keep = {"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}
    _create_topics(admin, [(t, partitions, keep) for t in topics.values()])
    written = _produce(bootstrap, params, topics, partitions, on_events, broker_alive)
    verify_topics(bootstrap, manifest)
    seconds = time.perf_counter() - started
    done = dataclasses.replace(manifest, state=COMPLETE, seconds=round(seconds, 3))
    _write_manifest(bootstrap, done)  # last: only now is the load complete
    return LoadResult(done, False, seconds, written)


def estimated_bytes(params: DatasetParams) -> int:
    """An upper bound of the bytes a load writes: the CSV text of a sample, uncompressed
    (lz4 writes about 60% of it: docs/kafka.md)."""
    from nexmark.workload.csvtext import CsvFormatter

    sample = min(params.events, 20_000)
    text = CsvFormatter(params.generator_config).format(0, sample)
    return len(text) * params.events // sample + (64 << 20)


def _produce(
    bootstrap: str,
    params: DatasetParams,
    topics: dict[str, str],
    partitions: int,
    on_events: Callable[[int], None] | None,
    broker_alive: Callable[[], bool] | None,
) -> int:
    """Every event of both parts into its partition, in event order per partition."""
    from confluent_kafka import KafkaError as ClientError
    from confluent_kafka import Producer

    from nexmark.workload.csvtext import CsvFormatter

    failures: list[str] = []

    def on_error(err) -> None:  # the client's own errors (all brokers down, fatal ones)
        if err.fatal() or err.code() == ClientError._ALL_BROKERS_DOWN:
            failures.append(err.str())

    def on_delivery(err, _msg) -> None:  # called for failed deliveries only
        if err is not None and len(failures) < 10:
            failures.append(err.str())

    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            **PRODUCER_CONFIG,
            "error_cb": on_error,
            "on_delivery": on_delivery,
            "logger": quiet_logger(),
        }
    )
    formatter = CsvFormatter(params.generator_config)
    written = 0

    def check() -> None:
        if broker_alive is not None and not broker_alive():
            raise KafkaError("the Kafka broker stopped while loading")
        if failures:
            raise KafkaError(f"loading into Kafka failed ({failures[0]})")

    try:
        for part in PARTS:
            topic = topics[part]
            layouts = partition_layouts(params, part, partitions)
            blocks_per_chunk = max(1, CHUNK_EVENTS // layouts[0].block)
            chunks = max(len(lay.block_starts()) for lay in layouts)
            # Partitions advance together, a chunk each in turn.
            for first in range(0, chunks, blocks_per_chunk):
                for p, layout in enumerate(layouts):
                    numbers = layout.numbers(first, first + blocks_per_chunk)
                    if len(numbers) == 0:
                        continue
                    text = bytes(formatter.format_numbers(numbers))
                    written += len(text)
                    lines = text.split(b"\n")
                    lines.pop()  # after the last newline
                    # Room first (a batch refused half-way could reorder a retry), then the
                    # whole batch in one call: a third less per event than produce() each.
                    while len(producer) + len(lines) > QUEUE_MESSAGES:
                        producer.poll(0.005)  # no delivery events to wait for
                        check()
                    queued = producer.produce_batch(
                        topic, [{"value": line} for line in lines], partition=p
                    )
                    if queued != len(lines):
                        raise KafkaError(
                            f"the Kafka producer refused {len(lines) - queued} of {len(lines)} "
                            f"events of {topic}"
                        )
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
