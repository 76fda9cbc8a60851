"""A real embedded Kafka broker and a tiny dataset loaded into it. One broker JVM for the
session (a broker starts in seconds, but seconds add up on a 2-core machine), emptied after
each module: every module finds it as a broker of its own would be, with no topic of another."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import AdminClient
from kafka_helpers import EVENTS, PARTITIONS, kafka_jvms

from nexmark.sources.kafka import load as kload
from nexmark.sources.kafka.broker import EmbeddedBroker
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="session")
def kafka_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    work = tmp_path_factory.mktemp("kafka")
    b = EmbeddedBroker(work)
    b.start()
    try:
        yield b
    finally:
        b.stop()
        assert kafka_jvms(work) == []


@pytest.fixture(scope="module")
def broker(kafka_server: EmbeddedBroker) -> Iterator[EmbeddedBroker]:
    """The session's broker, for this module alone: its topics are deleted after it."""
    yield kafka_server
    _delete_topics(kafka_server)


def _delete_topics(broker: EmbeddedBroker, timeout_s: float = 60) -> None:
    """Delete every topic but Kafka's own, and wait until they are gone (a topic being deleted
    cannot be made again under its name)."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topics = [t for t in admin.list_topics(timeout=10).topics if not t.startswith("__")]
    if not topics:
        return
    for future in admin.delete_topics(topics, operation_timeout=30).values():
        future.result()
    deadline = time.monotonic() + timeout_s
    while set(topics) & set(admin.list_topics(timeout=10).topics):
        assert time.monotonic() < deadline, "the module's topics were not deleted"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=EVENTS, files=PARTITIONS)
    return ensure_dataset(params, out=tmp_path_factory.mktemp("kds") / "ds", show_progress=False)


@pytest.fixture(scope="module")
def loaded(broker: EmbeddedBroker, dataset: Dataset) -> kload.LoadManifest:
    return kload.load_dataset(broker.bootstrap, dataset, PARTITIONS).manifest
