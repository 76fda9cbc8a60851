"""A real embedded Kafka broker and a tiny dataset loaded into it, shared by a test module
(a broker starts in seconds, but seconds add up on a 2-core machine)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka_helpers import EVENTS, PARTITIONS, kafka_jvms

from nexmark.sources.kafka import load as kload
from nexmark.sources.kafka.broker import EmbeddedBroker
from nexmark.workload.dataset import Dataset, DatasetParams
from nexmark.workload.writer import ensure_dataset


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    work = tmp_path_factory.mktemp("kafka")
    b = EmbeddedBroker(work)
    b.start()
    try:
        yield b
    finally:
        b.stop()
        assert kafka_jvms(work) == []


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    params = DatasetParams(events=EVENTS, files=PARTITIONS)
    return ensure_dataset(params, out=tmp_path_factory.mktemp("kds") / "ds", show_progress=False)


@pytest.fixture(scope="module")
def loaded(broker: EmbeddedBroker, dataset: Dataset) -> kload.LoadManifest:
    return kload.load_dataset(broker.bootstrap, dataset, PARTITIONS).manifest
