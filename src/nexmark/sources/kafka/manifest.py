"""A load's manifest, and the checks of a load's topics against it (see load.py for the
load itself).

The manifest is a JSON record in the compacted topic `nexmark-loads`, key = the load id: in
the cluster itself, so that it travels with the topics. `loading` is written before a load's
topics are created, `complete` only after their offsets were checked (docs/kafka.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass

from nexmark.sources.kafka.broker import KafkaError, quiet_logger

MANIFEST_TOPIC = "nexmark-loads"
LOAD_VERSION = 1
LOADING, COMPLETE = "loading", "complete"
ADMIN_TIMEOUT_S = 30.0


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


def admin_client(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "logger": quiet_logger()})


def check_reachable(admin, bootstrap: str) -> None:
    try:
        admin.list_topics(timeout=10)
    except Exception as exc:
        raise KafkaError(f"Kafka broker at {bootstrap} not reachable ({reason(exc)})") from None


def reason(exc: BaseException) -> str:
    err = exc.args[0] if exc.args else exc
    text = err.str() if hasattr(err, "str") else str(err)
    return " ".join(str(text).split())


def topic_partitions(admin, topic: str) -> int | None:
    """The topic's number of partitions; None if it does not exist."""
    meta = admin.list_topics(topic=topic, timeout=ADMIN_TIMEOUT_S).topics.get(topic)
    if meta is None or meta.error is not None:
        return None
    return len(meta.partitions)


def read_manifests(bootstrap: str) -> dict[str, LoadManifest]:
    """Every load's latest manifest record, by load id (empty if there is no manifest topic)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    admin = admin_client(bootstrap)
    check_reachable(admin, bootstrap)
    if topic_partitions(admin, MANIFEST_TOPIC) is None:
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


def write_manifest(bootstrap: str, manifest: LoadManifest) -> None:
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
                    f"{partition.partition} ({reason(exc)})"
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

    admin = admin_client(bootstrap)
    n = topic_partitions(admin, topic)
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
