"""The embedded broker and the loader, for real: start, load a tiny dataset, verify it, find
it again, refuse what is damaged or not ours, stop on every path with no JVM left."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka_helpers import EVENTS, PARTITIONS, kafka_jvms

from nexmark.errors import UsageError
from nexmark.sources.kafka import load as kload
from nexmark.sources.kafka.broker import EmbeddedBroker, KafkaError
from nexmark.workload.csvtext import CsvFormatter
from nexmark.workload.dataset import DatasetParams
from nexmark.workload.writer import ensure_dataset

pytestmark = pytest.mark.slow


def _admin(broker: EmbeddedBroker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def _records(broker: EmbeddedBroker, topic: str, partition: int, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "test-read"})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < count and time.monotonic() < deadline:
            for msg in consumer.consume(10_000, 1.0):
                if msg.error() is None:
                    values.append(msg.value())
        return values
    finally:
        consumer.close()


def test_a_load_writes_every_partition_in_event_order(broker, dataset, loaded) -> None:
    assert loaded.state == kload.COMPLETE
    assert loaded.events == EVENTS
    formatter = CsvFormatter(dataset.params.generator_config)
    for part, topic in loaded.topics.items():
        counts = kload.partition_counts(broker.bootstrap, topic)
        assert counts == loaded.counts[part] == kload.expected_counts(dataset.params, 2)[part]
        for p, layout in enumerate(kload.partition_layouts(dataset.params, part, PARTITIONS)):
            values = _records(broker, topic, p, counts[p])
            expected = bytes(formatter.format_numbers(layout.numbers())).split(b"\n")[:-1]
            assert values == expected  # every event once, in event order, as the CSV line
    assert kload.find_load(broker.bootstrap, dataset, PARTITIONS) == loaded
    again = kload.load_dataset(broker.bootstrap, dataset, PARTITIONS)
    assert again.reused and again.bytes == 0


def test_a_load_serves_fewer_readers_but_not_more(broker, dataset, loaded) -> None:
    assert kload.find_load(broker.bootstrap, dataset, 1).partitions == PARTITIONS
    with pytest.raises(KafkaError, match="has 2 partitions, fewer than the parallelism 4"):
        kload.find_load(broker.bootstrap, dataset, 4)


def test_missing_or_short_topics_are_one_line_each(broker, dataset) -> None:
    """A load of its own (one partition) that the test then damages."""
    own = kload.load_dataset(broker.bootstrap, dataset, 1).manifest
    benchmark, warmup = own.topics["benchmark"], own.topics["warmup"]
    admin = _admin(broker)
    cut = admin.delete_records([TopicPartition(benchmark, 0, 100)])  # the first 100 events
    for future in cut.values():
        future.result()
    with pytest.raises(KafkaError, match=f"Kafka topic {benchmark} holds 4,900 events"):
        kload.verify_topics(broker.bootstrap, own)
    admin.delete_topics([warmup])[warmup].result()
    # Deleted by the controller: the broker's metadata drops the topic a moment later.
    deadline = time.monotonic() + 60
    while warmup in admin.list_topics(timeout=10).topics:
        assert time.monotonic() < deadline, f"{warmup} was not deleted"
        time.sleep(0.2)
    with pytest.raises(KafkaError, match=f"Kafka topic {warmup} is missing"):
        kload.verify_topics(broker.bootstrap, own)
    # Loading again replaces the damaged load (its topics are the loader's own).
    fixed = kload.load_dataset(broker.bootstrap, dataset, 1)
    assert not fixed.reused and fixed.manifest.state == kload.COMPLETE
    kload.verify_topics(broker.bootstrap, fixed.manifest)


def test_an_interrupted_load_is_never_taken_for_complete(broker, tmp_path: Path) -> None:
    params = DatasetParams(events=4_000, files=3, seed=7)
    ds = ensure_dataset(params, out=tmp_path / "ds", show_progress=False)
    fail_after = [2]

    def interrupt(_: int) -> None:
        fail_after[0] -= 1
        if fail_after[0] == 0:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        kload.load_dataset(broker.bootstrap, ds, 3, on_events=interrupt)
    manifest = kload.read_manifests(broker.bootstrap)[kload.load_id(params, 3)]
    assert manifest.state == kload.LOADING
    with pytest.raises(KafkaError, match=r"no complete Kafka load .* \(an interrupted load"):
        kload.find_load(broker.bootstrap, ds, 3)
    done = kload.load_dataset(broker.bootstrap, ds, 3)
    assert done.manifest.state == kload.COMPLETE and not done.reused
    assert kload.find_load(broker.bootstrap, ds, 3).events == 4_000


def test_a_topic_not_created_by_a_load_is_refused_and_kept(broker, tmp_path: Path) -> None:
    params = DatasetParams(events=2_000, files=2, seed=11)
    ds = ensure_dataset(params, out=tmp_path / "ds", show_progress=False)
    foreign = kload.topic_name(kload.load_id(params, 2), "warmup")
    admin = _admin(broker)
    admin.create_topics([NewTopic(foreign, 1, 1)])[foreign].result()
    with pytest.raises(KafkaError, match=f"Kafka topic {foreign} exists but no nexmark load"):
        kload.load_dataset(broker.bootstrap, ds, 2)
    assert kload.partition_counts(broker.bootstrap, foreign) == [0]  # still there, untouched


def test_a_given_port_in_use_is_one_line(broker, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=f"port {broker.port} on 127.0.0.1 is not free"):
        EmbeddedBroker(tmp_path / "k", port=broker.port).start()
    assert kafka_jvms(tmp_path / "k") == []


def _nexmark(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "nexmark", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, NEXMARK_PROGRESS_INTERVAL="0.5"),
        **kwargs,
    )


def test_sigterm_while_loading_stops_the_broker_and_leaves_the_load_incomplete(
    tmp_path: Path,
) -> None:
    """`nexmark load` with its own broker, ended by SIGTERM mid-load: exit 143, no JVM left,
    and `nexmark load --check` then refuses the load."""
    params = DatasetParams(events=1_000_000, files=2, seed=3)
    ds = ensure_dataset(params, out=tmp_path / "ds", show_progress=False)
    kdir = tmp_path / "kafka"
    proc = _nexmark("load", str(ds.path), "--kafka-dir", str(kdir))
    deadline = time.monotonic() + 120
    # Wait for a progress line with events written: the load is half-way.
    line = ""
    while not re.match(r"loading: [1-9]", line) and time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line or proc.poll() is None, proc.stderr.read()
    assert kafka_jvms(kdir), "the broker should run while loading"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert kafka_jvms(kdir) == []
    check = _nexmark("load", str(ds.path), "--kafka-dir", str(kdir), "--check")
    _, err = check.communicate(timeout=120)
    assert check.returncode == 4
    assert "no complete Kafka load" in err and "an interrupted load" in err
    assert len(err.strip().splitlines()) == 1
    assert kafka_jvms(kdir) == []


def test_load_cli_reports_rate_and_checks(dataset, tmp_path: Path) -> None:
    kdir = tmp_path / "kafka"
    done = _nexmark("load", str(dataset.path), "--kafka-dir", str(kdir))
    out, err = done.communicate(timeout=180)
    assert done.returncode == 0, err
    assert "events/s" in out and "(complete)" in out
    assert f"loading done: {EVENTS:,} events" in err
    check = _nexmark("load", str(dataset.path), "--kafka-dir", str(kdir), "--check")
    out, err = check.communicate(timeout=120)
    assert check.returncode == 0, err
    assert "every partition's offsets match the load's manifest" in out
    assert kafka_jvms(kdir) == []


def test_port_in_use_from_the_cli_is_one_line(dataset, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        done = _nexmark(
            "load", str(dataset.path), "--kafka-dir", str(tmp_path / "k"), "--kafka-port", str(port)
        )
        _, err = done.communicate(timeout=60)
    assert done.returncode == 2
    assert err.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is not free for the Kafka broker (in use)"
    ]
